// The SampleDB reconciler's orchestration, on a fake apiserver (support/fake-apiserver.ts: objects in memory, the
// Client's verbs, no controllers): the order of the steps' writes, halts, the status written after a halt, abort.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError, silentLogger } from '../../../src/runtime/index.ts';
import { SampleDbReconciler } from '../../../src/sampledb/reconciler.ts';
import { SAMPLEDBS, SECRETS } from '../../../src/sampledb/resources.ts';
import type { Step } from '../../../src/sampledb/steps/context.ts';
import { sampleDb } from '../../support/sampledb.ts';
import { FakeApiserver } from './support/fake-apiserver.ts';

const REQ = { namespace: 'shop', name: 'orders' };
const rc = (signal = new AbortController().signal) => ({
  signal,
  log: silentLogger,
  reconcileID: 't',
  retries: 0,
});
const writes = (api: FakeApiserver) => api.log.map((w) => `${w.verb} ${w.plural}/${w.name}`);
const condition = (api: FakeApiserver, type: string) =>
  api.get(SAMPLEDBS, 'shop', 'orders')?.status?.conditions?.find((c) => c.type === type);

function reconcilerOn(api: FakeApiserver, steps?: readonly Step[]) {
  const { client, view, now } = api.operator();
  return new SampleDbReconciler({ client, view, now }, steps);
}

describe('SampleDbReconciler (fake apiserver)', () => {
  it('writes in the order of the step table, then the status', async () => {
    const api = new FakeApiserver();
    api.put(SAMPLEDBS, sampleDb());
    await reconcilerOn(api).reconcile(REQ, rc());
    assert.deepEqual(writes(api), [
      'patch sampledbs/orders', // finalizer, before any child exists
      'create secrets/orders-superuser', // created once, never applied
      'create secrets/orders-credentials', // created once, never applied
      'apply configmaps/orders-config',
      'apply services/orders-headless',
      'apply services/orders',
      'apply statefulsets/orders',
      'apply configmaps/orders-connection',
      'apply secrets/orders-binding',
      'status sampledbs/orders',
    ]);
    const db = api.get(SAMPLEDBS, 'shop', 'orders');
    assert.deepEqual(db?.metadata.finalizers, ['sampledb.io/finalizer']);
    assert.equal(db?.status?.phase, 'Provisioning');
    assert.equal(db?.status?.endpoint, 'orders.shop.svc:5432');
  });

  it('announces each child it creates on the SampleDB (a Normal Created Event), and nothing once they exist', async () => {
    const api = new FakeApiserver();
    api.put(SAMPLEDBS, sampleDb());
    await reconcilerOn(api).reconcile(REQ, rc());
    const notes = (api.events as { reason?: string; note?: string; type?: string }[]).map(
      (e) => `${e.type} ${e.reason} ${e.note}`,
    );
    assert.deepEqual(notes, [
      'Normal Created Created Secret orders-superuser',
      'Normal Created Created Secret orders-credentials',
      'Normal Created Created ConfigMap orders-config',
      'Normal Created Created Service orders-headless',
      'Normal Created Created Service orders',
      'Normal Created Created StatefulSet orders',
      'Normal Created Created ConfigMap orders-connection',
      'Normal Created Created Secret orders-binding',
    ]);
    await reconcilerOn(api).reconcile(REQ, rc());
    assert.equal(api.events.length, notes.length, 'a second reconcile creates nothing, so announces nothing');
  });

  it('halts at a missing user Secret, still writes the status, and goes on once the Secret exists', async () => {
    const api = new FakeApiserver();
    api.put(SAMPLEDBS, sampleDb({ bootstrap: { credentialsSecret: { name: 'app-creds' } } }));
    await reconcilerOn(api).reconcile(REQ, rc());
    assert.deepEqual(writes(api), [
      'patch sampledbs/orders',
      'create secrets/orders-superuser',
      'status sampledbs/orders',
    ]);
    assert.equal(api.get(SAMPLEDBS, 'shop', 'orders')?.status?.phase, 'Pending');
    assert.equal(condition(api, 'Ready')?.reason, 'CredentialsSecretNotFound');

    api.put(SECRETS, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'app-creds', namespace: 'shop' },
      data: { username: 'YXBw', password: 'c2VjcmV0' },
    });
    api.log.length = 0;
    await reconcilerOn(api).reconcile(REQ, rc());
    assert.ok(writes(api).includes('apply statefulsets/orders'), writes(api).join(', '));
    assert.ok(!writes(api).some((w) => w.startsWith('create secrets/')), 'the user Secret is never written');
  });

  it('a child the apiserver refuses (422): Failed with its message and an Event, and the reconcile fails so it backs off', async () => {
    const api = new FakeApiserver();
    api.put(SAMPLEDBS, sampleDb());
    const message =
      'StatefulSet.apps "orders" is invalid: spec.template.spec.containers[0].image: Required value';
    const steps: Step[] = [
      {
        name: 'refused',
        writes: ['apply'],
        async run() {
          throw new ApiError(422, 'PATCH', '/apis/apps/v1/statefulsets/orders', {
            reason: 'Invalid',
            message,
          });
        },
      },
    ];
    await assert.rejects(reconcilerOn(api, steps).reconcile(REQ, rc()), /422/);
    const db = api.get(SAMPLEDBS, 'shop', 'orders');
    assert.equal(db?.status?.phase, 'Failed');
    assert.equal(condition(api, 'Ready')?.reason, 'ChildRejected');
    assert.ok(condition(api, 'Ready')?.message.includes(message));
    const events = api.events as { reason?: string; note?: string; type?: string }[];
    assert.deepEqual(
      events.map((e) => [e.type, e.reason, e.note]),
      [['Warning', 'ChildRejected', message]],
    );
  });

  it('halts an invalid spec before anything is written, with a Failed status naming the field', async () => {
    const api = new FakeApiserver();
    api.put(SAMPLEDBS, sampleDb({ storage: { size: 'lots' } }));
    await reconcilerOn(api).reconcile(REQ, rc());
    assert.deepEqual(writes(api), ['status sampledbs/orders']);
    assert.equal(api.get(SAMPLEDBS, 'shop', 'orders')?.status?.phase, 'Failed');
    assert.equal(condition(api, 'Ready')?.reason, 'InvalidSpec');
    assert.match(condition(api, 'Ready')?.message ?? '', /spec\.storage\.size/);
  });

  it('stops at an abort: no later step runs and no status is written', async () => {
    const api = new FakeApiserver();
    api.put(SAMPLEDBS, sampleDb());
    const stop = new AbortController();
    const ran: string[] = [];
    const steps: Step[] = [
      {
        name: 'first',
        writes: [],
        async run() {
          ran.push('first');
          stop.abort();
          return undefined;
        },
      },
      {
        name: 'second',
        writes: [],
        async run() {
          ran.push('second');
          return undefined;
        },
      },
    ];
    await reconcilerOn(api, steps).reconcile(REQ, rc(stop.signal));
    assert.deepEqual(ran, ['first']);
    assert.deepEqual(writes(api), []);
  });

  it('returns the shortest requeue any step asked for', async () => {
    const api = new FakeApiserver();
    api.put(SAMPLEDBS, sampleDb());
    const asks = (name: string, ms: number): Step => ({
      name,
      writes: [],
      run: async () => ({ requeueAfterMs: ms }),
    });
    const result = await reconcilerOn(api, [asks('a', 5000), asks('b', 200), asks('c', 900)]).reconcile(
      REQ,
      rc(),
    );
    assert.deepEqual(result, { requeueAfter: 200 });
  });
});
