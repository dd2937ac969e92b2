import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import {
  ControlPlane,
  describeRequests,
  pollUntil,
  type RequestSeries,
  requestDelta,
  sumRequests,
  writeVerbs,
} from '../../../src/envtest/index.ts';

// Its own control plane: the idle check needs a cluster no other test is writing to, and the restart check
// restarts its apiserver.
const plane = await ControlPlane.start({ workloads: true });
after(() => plane.stop());
const kubeConfig = plane.kubeConfig();
const core = kubeConfig.makeApiClient(CoreV1Api);
const apps = kubeConfig.makeApiClient(AppsV1Api);
const namespace = 'default';
const wait = { timeoutMs: 180_000, intervalMs: 500 };

/** More replicas than kubelet's default of 110 pods per node, each with a claim the volume binder provisions. */
const replicas = 130;

async function boundClaims(prefix: string): Promise<number> {
  const claims = await core.listNamespacedPersistentVolumeClaim({ namespace });
  return claims.items.filter((c) => c.metadata?.name?.startsWith(prefix) && c.status?.phase === 'Bound')
    .length;
}

test(`the fake node runs ${replicas} pods (above kubelet's 110), each with a provisioned volume`, async () => {
  await apps.createNamespacedStatefulSet({
    namespace,
    body: {
      metadata: { name: 'wide' },
      spec: {
        replicas,
        podManagementPolicy: 'Parallel',
        serviceName: 'wide',
        selector: { matchLabels: { app: 'wide' } },
        template: {
          metadata: { labels: { app: 'wide' } },
          spec: {
            containers: [
              {
                name: 'main',
                image: 'registry.k8s.io/pause:3.10',
                resources: { requests: { cpu: '250m', memory: '512Mi' } },
              },
            ],
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
          },
        ],
      },
    },
  });
  const ready = await pollUntil(
    `StatefulSet wide: ${replicas} ready`,
    async () => {
      const sts = await apps.readNamespacedStatefulSet({ name: 'wide', namespace });
      return sts.status?.readyReplicas === replicas ? sts.status.readyReplicas : undefined;
    },
    wait,
  );
  assert.equal(ready, replicas);
  assert.equal(await boundClaims('data-wide-'), replicas);
});

/** The series the harness's own loops would make: the volume binder's and kwok's kinds, anything but WATCH. */
const harnessKinds = new Set([
  'persistentvolumeclaims',
  'persistentvolumes',
  'storageclasses',
  'pods',
  'nodes',
]);
const byHarness = (s: RequestSeries) => harnessKinds.has(s.resource) && s.verb !== 'WATCH';

test('idle, the harness makes no requests (apiserver_request_total)', async () => {
  // Settled first: every claim bound and no pod left to start, so nothing is owed a write.
  await pollUntil(
    'all claims bound',
    async () => ((await boundClaims('data-wide-')) === replicas ? true : undefined),
    wait,
  );
  const before = await plane.requestCounts();
  // The idle interval ends when the control plane's own clocks have visibly moved: kube-apiserver and kwok renew
  // their Leases every 10 s, so three renewals span several seconds, over which the old polling binder made dozens
  // of LISTs. Bounded by a poll on the counter itself, not by a sleep.
  const renewals = (series: RequestSeries[]) =>
    sumRequests(requestDelta(before, series), (s) => s.resource === 'leases' && writeVerbs.has(s.verb));
  const after = await pollUntil(
    'three Lease renewals',
    async () => {
      const now = await plane.requestCounts();
      return renewals(now) >= 3 ? now : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 1000 },
  );
  const made = requestDelta(before, after).filter(byHarness);
  assert.deepEqual(made, [], `requests while idle: ${describeRequests(made)}`);
});

test('after an apiserver restart the watches resume: a new claim is still provisioned', async () => {
  await plane.restartApiserver();
  await core.createNamespacedPersistentVolumeClaim({
    namespace,
    body: {
      metadata: { name: 'after-restart' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    },
  });
  await pollUntil(
    'claim after-restart bound',
    async () => ((await boundClaims('after-restart')) === 1 ? true : undefined),
    wait,
  );
});
