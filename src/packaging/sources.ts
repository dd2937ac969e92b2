// What the packages are generated from: the constructs, synthesized in-process exactly as `cdk8s synth` writes dist/.
// Objects are keyed by their construct path, which stays the same whatever the props are, so two syntheses with
// different props can be compared object by object.
import { ApiObject, App, Chart } from 'cdk8s';
import packageJson from '../../package.json' with { type: 'json' };
import { SampleDbCrds, SampleDbOperator, type SampleDbOperatorProps } from '../constructs/index.ts';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface SynthesizedObject {
  /** Construct path below the chart, e.g. `operator/rbac/cluster-role`. */
  readonly path: string;
  readonly manifest: JsonObject;
}

export const PACKAGE_NAME = packageJson.name;
export const PACKAGE_VERSION = packageJson.version;
export const PACKAGE_DESCRIPTION = packageJson.description;
export const PACKAGE_LICENSE = packageJson.license;
/** The image dist/ names (src/app.ts): `<repository>:<package version>`. */
export const DIST_IMAGE_REPOSITORY = 'localhost/sampledb-operator';

function synthesize(build: (chart: Chart) => void): SynthesizedObject[] {
  const chart = new Chart(new App(), 'package');
  build(chart);
  // Each ApiObject resolves its own manifest, as `cdk8s synth` does when it writes dist/.
  return chart.node
    .findAll()
    .filter((c): c is ApiObject => c instanceof ApiObject)
    .map((o) => ({ path: o.node.path.split('/').slice(1).join('/'), manifest: o.toJson() as JsonObject }));
}

/** The operator's objects (what dist/0001-sampledb-operator.k8s.yaml holds for the default props). */
export function operatorObjects(props: SampleDbOperatorProps): SynthesizedObject[] {
  return synthesize((chart) => new SampleDbOperator(chart, 'operator', props));
}

/** The CRDs (dist/0000-sampledb-crds.k8s.yaml). */
export function crdObjects(): SynthesizedObject[] {
  return synthesize((chart) => new SampleDbCrds(chart, 'crds'));
}
