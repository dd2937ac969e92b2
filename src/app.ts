// The cdk8s app behind `cdk8s synth` / `npm run synth`: writes the CRDs, the operator, the examples and the
// Prometheus operator objects to dist/ (or the `--output` directory). Deterministic on purpose (no timestamps, no
// random names): CI regenerates dist/ and fails on any difference.
import { App, Chart } from 'cdk8s';
import packageJson from '../package.json' with { type: 'json' };
import { SampleDbCrds, SampleDbMonitoring, SampleDbOperator } from './constructs/index.ts';
import { ExamplesChart } from './examples/index.ts';

/** Image written into dist/. Deployments pin a digest instead (see the Pulumi stack). */
export const DIST_IMAGE = `localhost/sampledb-operator:${packageJson.version}`;

// No outdir: cdk8s's App writes where `cdk8s synth --output DIR` asks (CDK8S_OUTDIR), dist/ by default (cdk8s.yaml).
const app = new App();

const crds = new Chart(app, 'sampledb-crds');
new SampleDbCrds(crds, 'crds');

const operator = new Chart(app, 'sampledb-operator');
new SampleDbOperator(operator, 'operator', { image: DIST_IMAGE });
operator.addDependency(crds);

const examples = new ExamplesChart(app, 'sampledb-examples');
examples.addDependency(crds);

// Apart from the operator: it needs the Prometheus operator's CRDs (monitoring.coreos.com), which not every
// cluster has.
const monitoring = new Chart(app, 'sampledb-monitoring');
new SampleDbMonitoring(monitoring, 'monitoring');

app.synth();
