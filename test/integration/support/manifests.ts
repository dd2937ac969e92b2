// The synthesized manifests from dist/, as objects, for tests and `npm run dev` to apply.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

const dist = join(dirname(fileURLToPath(import.meta.url)), '../../../dist');

export type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
} & Record<string, unknown>;

export function distManifests(file: string): Manifest[] {
  return parseAllDocuments(readFileSync(join(dist, file), 'utf8'))
    .map((d) => d.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}

/**
 * The CRDs from dist/, made installable. WORKAROUND (reported to the API owner): the committed CRD's CEL rule on
 * spec.postgresql.parameters values exceeds the apiserver's cost budget because the map values have no maxLength,
 * so kube-apiserver refuses the CRD. Until src/api bounds them, the values get a maxLength here; nothing else changes.
 */
export function installableCrds(): Manifest[] {
  return distManifests('0000-sampledb-crds.k8s.yaml').map((crd) => {
    if (crd.metadata.name !== 'sampledbs.sampledb.io') return crd;
    type Node = { properties?: Record<string, Node>; additionalProperties?: Node & { maxLength?: number } };
    const copy = structuredClone(crd) as Manifest & {
      spec: { versions: Array<{ schema: { openAPIV3Schema: Node } }> };
    };
    for (const version of copy.spec.versions) {
      const parameters =
        version.schema.openAPIV3Schema.properties?.spec?.properties?.postgresql?.properties?.parameters;
      if (parameters?.additionalProperties && parameters.additionalProperties.maxLength === undefined) {
        parameters.additionalProperties.maxLength = 1024;
      }
    }
    return copy;
  });
}
