// What the operator benchmarks do to a fresh kwok-tier control plane before they start an operator.
import { fileURLToPath } from 'node:url';
import { type ControlPlane, pollUntil } from '../../src/envtest/index.ts';
import { type KubeHttp, NAMESPACES, SERVICE_ACCOUNTS } from '../../src/runtime/index.ts';

/** Applies dist/'s CRDs and waits until every CRD is Established. */
export async function installCrds(plane: ControlPlane): Promise<void> {
  const crds = await plane.kubectl([
    'apply',
    '--server-side',
    '-f',
    fileURLToPath(new URL('../../dist/0000-sampledb-crds.k8s.yaml', import.meta.url)),
  ]);
  if (crds.code !== 0) throw new Error(`CRDs: ${crds.stderr}`);
  const established = await plane.kubectl([
    'wait',
    '--for=condition=Established',
    'crd',
    '--all',
    '--timeout=60s',
  ]);
  if (established.code !== 0) throw new Error(`CRDs not established: ${established.stderr}`);
}

/** Creates a namespace and waits for its default ServiceAccount (pods are refused until the controller made it). */
export async function createNamespace(http: KubeHttp, name: string, timeoutMs = 300_000): Promise<void> {
  await http.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  await pollUntil(
    `default ServiceAccount in ${name}`,
    async () =>
      (await http.get(SERVICE_ACCOUNTS, { namespace: name, name: 'default' }).catch(() => undefined))
        ? true
        : undefined,
    { timeoutMs, intervalMs: 250 },
  );
}
