// dist/ applied as a user would: the CRDs, then the operator's manifests unchanged except for the one documented
// setting, the PostgreSQL image repository (POSTGRES_IMAGE_REPOSITORY on the Deployment, as a kustomize patch or
// `kubectl set env` would set it), pointed at the images built on this machine.
import { LOCAL_POSTGRES_REPOSITORY } from '../../../src/envtest/real-node/images.ts';
import { crdManifests, distManifests, type Manifest } from '../../integration/support/manifests.ts';
import type { E2eCluster } from './cluster.ts';

export const OPERATOR_NAMESPACE = 'sampledb-system';
export const OPERATOR_DEPLOYMENT = 'sampledb-operator';

type Container = { name: string; env?: { name: string; value?: string }[] };

/** The operator manifests from dist/ with POSTGRES_IMAGE_REPOSITORY set on the Deployment's container. */
export function operatorManifests(repository = LOCAL_POSTGRES_REPOSITORY): Manifest[] {
  return distManifests('0001-sampledb-operator.k8s.yaml').map((manifest) => {
    if (manifest.kind !== 'Deployment') return manifest;
    const copy = structuredClone(manifest) as Manifest & {
      spec: { template: { spec: { containers: Container[] } } };
    };
    for (const container of copy.spec.template.spec.containers) {
      const env = container.env ?? [];
      const setting = env.find((e) => e.name === 'POSTGRES_IMAGE_REPOSITORY');
      if (!setting) throw new Error('dist/ Deployment has no POSTGRES_IMAGE_REPOSITORY');
      setting.value = repository;
    }
    return copy;
  });
}

async function apply(cluster: E2eCluster, manifests: readonly Manifest[], what: string): Promise<void> {
  const result = await cluster.kubectl(['apply', '--server-side', '-f', '-'], {
    input: manifests.map((m) => JSON.stringify(m)).join('\n'),
  });
  if (result.code !== 0) throw new Error(`applying ${what}: ${result.stderr}`);
}

export async function installOperator(cluster: E2eCluster): Promise<void> {
  await apply(cluster, crdManifests(), 'the CRDs');
  const established = await cluster.kubectl([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd/sampledbs.sampledb.io',
    'crd/sampledbbackups.sampledb.io',
  ]);
  if (established.code !== 0) throw new Error(`CRDs not established: ${established.stderr}`);
  await apply(cluster, operatorManifests(), 'the operator');
  const rollout = await cluster.kubectl([
    'rollout',
    'status',
    `deployment/${OPERATOR_DEPLOYMENT}`,
    '-n',
    OPERATOR_NAMESPACE,
    '--timeout=180s',
  ]);
  if (rollout.code !== 0) {
    const pods = await cluster.kubectl(['get', 'pods,events', '-n', OPERATOR_NAMESPACE, '-o', 'wide']);
    throw new Error(`the operator did not roll out: ${rollout.stderr}\n${pods.stdout}`);
  }
}
