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

/** The CRDs from dist/. */
export function crdManifests(): Manifest[] {
  return distManifests('0000-sampledb-crds.k8s.yaml');
}

/** The name other tests already use (it once patched a CEL cost problem the CRD no longer has). */
export const installableCrds = crdManifests;
