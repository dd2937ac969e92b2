// Deletion resuming after a crash at every write, on a fake apiserver (../support/fake-apiserver.ts). The operator is
// "killed" at the n-th write (that write never reaches the apiserver) and restarted with a cache listed afresh; the
// test plays the backup controller. Whatever n is, the data is protected before it is deleted, nothing is created
// or deleted twice, and the SampleDB ends up gone.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SampleDbSpec } from '../../../../src/api/index.ts';
import { silentLogger } from '../../../../src/runtime/index.ts';
import { resolveInstance } from '../../../../src/sampledb/instance.ts';
import { SampleDbReconciler } from '../../../../src/sampledb/reconciler.ts';
import { PVCS, SAMPLEDB_BACKUPS, SAMPLEDBS, STATEFULSETS } from '../../../../src/sampledb/resources.ts';
import { sampleDb } from '../../../support/sampledb.ts';
import { Crash, FakeApiserver } from '../support/fake-apiserver.ts';

const REQ = { namespace: 'shop', name: 'orders' };
const rc = () => ({ signal: new AbortController().signal, log: silentLogger, reconcileID: 't', retries: 0 });

function deletingSampleDb(spec: Partial<SampleDbSpec>, crashAt?: number): FakeApiserver {
  const api = new FakeApiserver();
  const db = sampleDb(spec, {
    finalizers: ['sampledb.io/finalizer'],
    deletionTimestamp: '2026-02-01T00:00:00Z',
  });
  api.put(SAMPLEDBS, db);
  const { names, labels } = resolveInstance(db);
  api.put(STATEFULSETS, {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: names.statefulSet, namespace: 'shop', labels: { ...labels.database } },
    // Ready: the final backup has a database to dump (a database that is not is retain.test.ts's case).
    status: { replicas: 1, readyReplicas: 1 },
  });
  api.put(PVCS, {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: names.dataPvc, namespace: 'shop', labels: { ...labels.database } },
  });
  api.crashAt = crashAt;
  return api;
}

/** Reconciles until the SampleDB is gone, restarting after each crash; plays the backup controller in between. */
async function settle(api: FakeApiserver): Promise<number> {
  for (let run = 1; run <= 30; run++) {
    if (!api.get(SAMPLEDBS, 'shop', 'orders')) return run;
    const { client, view, now } = api.operator();
    try {
      await new SampleDbReconciler({ client, view, now }).reconcile(REQ, rc());
    } catch (err) {
      if (!(err instanceof Crash)) throw err;
    }
    for (const backup of api.list(SAMPLEDB_BACKUPS)) {
      if (backup.status?.phase === 'Completed') continue;
      api.put(SAMPLEDB_BACKUPS, {
        ...backup,
        status: { phase: 'Completed', location: 'pvc://orders-backups/x' },
      });
      api.note(`backup ${backup.metadata.name} completed`);
    }
  }
  throw new Error('the deletion did not finish in 30 reconciles');
}

const entries = (api: FakeApiserver) => api.log.map((w) => `${w.verb} ${w.plural}/${w.name}`);

function assertSafeAndComplete(api: FakeApiserver, label: string): void {
  const log = entries(api);
  assert.equal(api.get(SAMPLEDBS, 'shop', 'orders'), undefined, `${label}: the SampleDB is gone`);
  assert.equal(api.get(PVCS, 'shop', 'data-orders-0'), undefined, `${label}: the data volume is deleted`);
  for (const write of log.filter((w) => w.startsWith('delete ') || w.startsWith('create ')))
    assert.equal(log.filter((w) => w === write).length, 1, `${label}: ${write} happened once`);
  const protectedAt = log.findIndex((w) => /^note \/backup .* completed$/.test(w));
  const dataDeletedAt = log.indexOf('delete persistentvolumeclaims/data-orders-0');
  assert.ok(protectedAt >= 0 && protectedAt < dataDeletedAt, `${label}: the final backup completed first`);
  assert.equal(api.list(SAMPLEDB_BACKUPS).length, 1, `${label}: one final backup`);
}

describe('deletion resumes after a crash at every write (fake apiserver)', () => {
  it('policy Snapshot without a snapshot API: final backup, workload, data volume, finalizer', async () => {
    const spec = { deletion: { policy: 'Snapshot' as const } };
    const clean = deletingSampleDb(spec);
    await settle(clean);
    assertSafeAndComplete(clean, 'no crash');
    const total = clean.log.filter((w) => w.verb !== 'note').length;
    assert.ok(total >= 5, `the deletion writes several times (${entries(clean).join(', ')})`);

    for (let crashAt = 1; crashAt <= total; crashAt++) {
      const api = deletingSampleDb(spec, crashAt);
      await settle(api);
      assertSafeAndComplete(api, `crash at write ${crashAt}`);
    }
  });

  it('honours the abort signal: after leadership is lost, a deletion writes nothing, not even its status', async () => {
    const api = deletingSampleDb({ deletion: { policy: 'Delete' } });
    const { client, view, now } = api.operator();
    const stop = new AbortController();
    stop.abort();
    await new SampleDbReconciler({ client, view, now }).reconcile(REQ, { ...rc(), signal: stop.signal });
    assert.deepEqual(api.log, []);
    assert.ok(api.get(STATEFULSETS, 'shop', 'orders'), 'the workload is left to the next leader');
  });

  it('a second final backup is a visible, counted retry: an Event and the attempt in DeletionProtected', async () => {
    const api = deletingSampleDb({ deletion: { policy: 'Snapshot' } });
    const reconcile = async (at: string) => {
      const { client, view } = api.operator();
      await new SampleDbReconciler({ client, view, now: () => new Date(at) }).reconcile(REQ, rc());
    };
    await reconcile('2026-02-01T00:00:00Z');
    const [first] = api.list(SAMPLEDB_BACKUPS);
    assert.ok(first);
    api.put(SAMPLEDB_BACKUPS, {
      ...first,
      status: {
        phase: 'Failed',
        message: 'pg_dump: connection refused',
        conditions: [
          {
            type: 'Failed',
            status: 'True',
            reason: 'BackupFailed',
            message: 'x',
            lastTransitionTime: '2026-02-01T00:00:00Z',
          },
        ],
      },
    });
    assert.deepEqual(api.events, [], 'the first attempt is no retry');
    await reconcile('2026-02-01T01:00:00Z');
    assert.equal(api.list(SAMPLEDB_BACKUPS).length, 2);
    const notes = api.events.map((e) => (e as { reason?: string; note?: string }).reason);
    assert.deepEqual(notes, ['FinalBackupRetry']);
    const protectedCondition = api
      .get(SAMPLEDBS, 'shop', 'orders')
      ?.status?.conditions?.find((c) => c.type === 'DeletionProtected');
    assert.match(protectedCondition?.message ?? '', /attempt 2, after 1 failed/);
  });
});
