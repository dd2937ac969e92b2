// Write-skipping against a real apiserver (ADR 0007): the managedFields kube-apiserver records must let the client
// prove an apply is a no-op, and must make it send the applies that are not.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { pollUntil } from '../../../src/envtest/index.ts';
import { InformerCache } from '../../../src/runtime/cache.ts';
import { Client } from '../../../src/runtime/client.ts';
import { KubeHttp } from '../../../src/runtime/http.ts';
import { CONFIG_MAPS, SERVICES, STATEFUL_SETS } from '../../../src/runtime/kinds.ts';
import type { KubeObject, ResourceType } from '../../../src/runtime/resource.ts';
import { sharedCluster, testNamespace } from '../support/cluster.ts';

const cluster = await sharedCluster();
const namespace = await testNamespace(cluster, 'apply-skip');
const http = new KubeHttp(cluster.kubeConfig());
after(() => http.close());

/** The transport with its applies counted: what the client actually sent. */
function countingHttp(): { http: KubeHttp; applies: () => number } {
  let applies = 0;
  const counting = Object.create(http) as KubeHttp;
  counting.apply = ((...args: Parameters<KubeHttp['apply']>) => {
    applies++;
    return http.apply(...args);
  }) as KubeHttp['apply'];
  return { http: counting, applies: () => applies };
}

async function syncedCache(): Promise<InformerCache> {
  const cache = new InformerCache({ http, namespace });
  for (const rt of [CONFIG_MAPS, SERVICES, STATEFUL_SETS]) cache.informerFor(rt);
  cache.start();
  await cache.waitForSync();
  return cache;
}

const meta = (name: string, labels: Record<string, string> = { app: 'skip' }) => ({
  name,
  namespace,
  labels,
});

function desired(labels?: Record<string, string>): [ResourceType, KubeObject][] {
  return [
    [
      CONFIG_MAPS,
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: meta('cfg', labels),
        data: { 'a.conf': 'x = 1' },
      } as KubeObject,
    ],
    [
      SERVICES,
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: meta('svc', labels),
        // protocol left to its default: it is part of the ports list's key.
        spec: { selector: { app: 'skip' }, ports: [{ name: 'pg', port: 5432, targetPort: 5432 }] },
      } as KubeObject,
    ],
    [
      STATEFUL_SETS,
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: meta('sts', labels),
        spec: {
          replicas: 1,
          serviceName: 'svc',
          selector: { matchLabels: { app: 'skip' } },
          template: {
            metadata: { labels: { app: 'skip' } },
            spec: {
              containers: [
                {
                  name: 'main',
                  image: 'registry.k8s.io/pause:3.10',
                  args: ['-c', 'config_file=/etc/a.conf'],
                  env: [{ name: 'A', value: '1' }],
                  ports: [{ name: 'pg', containerPort: 5432 }],
                  resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '512Mi' } },
                  volumeMounts: [{ name: 'data', mountPath: '/data' }],
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
      } as KubeObject,
    ],
  ];
}

const cachedReplicas = (cache: InformerCache) =>
  cache.storeFor<KubeObject & { spec: { replicas: number } }>(STATEFUL_SETS)?.get({ namespace, name: 'sts' })
    ?.spec.replicas;

async function applyAll(client: Client, objects: [ResourceType, KubeObject][]): Promise<void> {
  for (const [rt, obj] of objects) await client.apply(rt, obj);
}

test('an apply whose result is cached is not sent, from our own write and from the watch', async () => {
  const cache = await syncedCache();
  try {
    const { http: transport, applies } = countingHttp();
    const client = new Client({ http: transport, cache, fieldManager: 'apply-skip-test' });
    await applyAll(client, desired());
    assert.equal(applies(), 3);
    await applyAll(client, desired());
    assert.equal(applies(), 3, 'the repeat is answered from the cache the writes updated');
  } finally {
    await cache.stop();
  }
});

test('a fresh cache (an operator restart) still skips: the listed objects carry our Apply entries', async () => {
  const cache = await syncedCache();
  try {
    const { http: transport, applies } = countingHttp();
    await applyAll(new Client({ http: transport, cache, fieldManager: 'apply-skip-test' }), desired());
    assert.equal(applies(), 0);
  } finally {
    await cache.stop();
  }
});

test('a changed value, a new field and a dropped field are each sent, and the dropped one is removed', async () => {
  const cache = await syncedCache();
  try {
    const { http: transport, applies } = countingHttp();
    const client = new Client({ http: transport, cache, fieldManager: 'apply-skip-test' });
    await applyAll(client, desired({ app: 'skip', tier: 'data' }));
    assert.equal(applies(), 3, 'a label added');
    await applyAll(client, desired({ app: 'skip' }));
    assert.equal(applies(), 6, 'the label dropped again');
    const cm = await http.get(CONFIG_MAPS, { namespace, name: 'cfg' });
    assert.deepEqual(cm.metadata.labels, { app: 'skip' }, 'the apiserver removed the label we no longer own');
    await http.patch(STATEFUL_SETS, { namespace, name: 'sts' }, { spec: { replicas: 3 } }, 'merge');
    await pollUntil('the cache sees the edit', async () => (cachedReplicas(cache) === 3 ? true : undefined), {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    await applyAll(client, desired({ app: 'skip' }));
    assert.equal(applies(), 7, 'someone else changed a value we own: only that object is applied');
    const sts = await http.get<KubeObject & { spec: { replicas: number } }>(STATEFUL_SETS, {
      namespace,
      name: 'sts',
    });
    assert.equal(sts.spec.replicas, 1);
  } finally {
    await cache.stop();
  }
});
