// A status computed from a stale read must not land (Writer.applyStatusOf): kube-apiserver treats a resourceVersion
// in a server-side apply as a precondition, so the guarded apply is refused with 409 and the newer status stays.
// This is what keeps a backup another writer recorded Completed from being put back to Pending by a reconcile that
// read it just before (the backup-space flake of 2026-12-06).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { V1Service } from '@kubernetes/client-node';
import { pollUntil } from '../../../src/envtest/index.ts';
import { InformerCache } from '../../../src/runtime/cache.ts';
import { Client, ConflictError } from '../../../src/runtime/client.ts';
import { KubeHttp } from '../../../src/runtime/http.ts';
import { SERVICES } from '../../../src/runtime/kinds.ts';
import type { Stored } from '../../../src/runtime/resource.ts';
import { Writer } from '../../../src/sampledb/writer.ts';
import { sharedCluster, testNamespace } from '../support/cluster.ts';

const cluster = await sharedCluster();
const namespace = await testNamespace(cluster, 'stale-status');
const http = new KubeHttp(cluster.kubeConfig());
after(() => http.close());

type Service = Stored<V1Service>;
const ingress = (ip: string) => ({ loadBalancer: { ingress: [{ ip }] } });
const ips = (s: Service) => s.status?.loadBalancer?.ingress?.map((i) => i.ip);

test('a status applied with the resourceVersion of a stale read is refused (409) and the newer status stays', async () => {
  const cache = new InformerCache({ http, namespace });
  cache.informerFor(SERVICES);
  cache.start();
  await cache.waitForSync();
  try {
    const writer = new Writer(new Client({ http, cache, fieldManager: 'stale-status-test' }));
    const created = await writer.apply(SERVICES, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'lb', namespace },
      spec: { type: 'LoadBalancer', ports: [{ name: 'pg', port: 5432 }] },
    } as Service);
    const read = await pollUntil(
      'the cache holds the Service',
      async () => cache.storeFor(SERVICES)?.get(`${namespace}/lb`) as Service | undefined,
      { timeoutMs: 30_000 },
    );
    assert.equal(read.metadata.resourceVersion, created.metadata.resourceVersion);

    // Another writer records a newer status after our read.
    const newer = await http.patch<Service>(
      SERVICES,
      { namespace, name: 'lb' },
      { status: ingress('10.0.0.2') },
      'merge',
      { subresource: 'status', fieldManager: 'someone-else' },
    );

    await assert.rejects(
      writer.applyStatusOf(SERVICES, read, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'lb', namespace },
        status: ingress('10.0.0.1'),
      } as Service),
      (err: unknown) => err instanceof ConflictError && err.status === 409,
    );
    const stored = await http.get<Service>(SERVICES, { namespace, name: 'lb' });
    assert.deepEqual(ips(stored), ['10.0.0.2'], 'the stale status did not land');
    assert.equal(stored.metadata.resourceVersion, newer.metadata.resourceVersion);

    // From the fresh read the same apply lands.
    const written = await writer.applyStatusOf(SERVICES, stored, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'lb', namespace },
      status: ingress('10.0.0.1'),
    } as Service);
    assert.deepEqual(ips(written), ['10.0.0.1']);
  } finally {
    await cache.stop();
  }
});
