// A kubeconfig that authenticates as a ServiceAccount with a bound token (what the kubelet mounts into a pod), for
// running the operator as a local process with exactly the rights the synthesized or installed RBAC gives it.
import { writeFileSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubectlResult } from '../../../src/envtest/index.ts';

export interface TokenSource {
  readonly server: string;
  kubeConfig(): KubeConfig;
  kubectl(args: readonly string[], options?: { input?: string }): Promise<KubectlResult>;
}

export async function serviceAccountKubeconfig(
  cluster: TokenSource,
  serviceAccount: { namespace: string; name: string },
  path: string,
): Promise<string> {
  const created = await cluster.kubectl([
    'create',
    'token',
    serviceAccount.name,
    '-n',
    serviceAccount.namespace,
  ]);
  if (created.code !== 0) throw new Error(`kubectl create token: ${created.stderr}`);
  const ca = cluster.kubeConfig().getCurrentCluster()?.caData;
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'envtest', cluster: { server: cluster.server, 'certificate-authority-data': ca } }],
      users: [{ name: 'operator', user: { token: created.stdout.trim() } }],
      contexts: [{ name: 'operator', context: { cluster: 'envtest', user: 'operator' } }],
      'current-context': 'operator',
    }),
    { mode: 0o600 },
  );
  return path;
}
