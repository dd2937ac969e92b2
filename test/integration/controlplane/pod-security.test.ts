import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiException, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { pollUntil } from '../../../src/envtest/index.ts';
import { sharedCluster, testNamespace } from '../support/cluster.ts';

const cluster = await sharedCluster();
const core = cluster.kubeConfig().makeApiClient(CoreV1Api);
const namespace = await testNamespace(cluster, 'restricted', {
  'pod-security.kubernetes.io/enforce': 'restricted',
  'pod-security.kubernetes.io/enforce-version': 'latest',
});
// ServiceAccount admission is on with workloads: a pod is refused until the namespace's `default` exists.
await pollUntil(
  'default ServiceAccount',
  async () => ((await core.readNamespacedServiceAccount({ name: 'default', namespace })) ? true : undefined),
  { timeoutMs: 20_000, intervalMs: 100 },
);

function pod(
  name: string,
  securityContext: NonNullable<V1Pod['spec']>['containers'][number]['securityContext'],
): V1Pod {
  return {
    metadata: { name, namespace },
    spec: { containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10', securityContext }] },
  };
}

test('a namespace enforcing "restricted" refuses a privileged pod', async () => {
  await assert.rejects(
    core.createNamespacedPod({ namespace, body: pod('privileged', { privileged: true }) }),
    (error: unknown) => {
      assert.ok(error instanceof ApiException, String(error));
      assert.equal(error.code, 403);
      const status = (typeof error.body === 'string' ? JSON.parse(error.body) : error.body) as {
        message?: string;
      };
      assert.match(status.message ?? '', /violates PodSecurity "restricted:latest": privileged/);
      return true;
    },
  );
});

test('a namespace enforcing "restricted" accepts a pod that meets the profile', async () => {
  const created = await core.createNamespacedPod({
    namespace,
    body: {
      ...pod('restricted', {
        allowPrivilegeEscalation: false,
        runAsNonRoot: true,
        runAsUser: 65532,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      }),
    },
  });
  assert.equal(created.metadata?.name, 'restricted');
});
