// The SampleDBBackup reconciler's steps, on a fake apiserver (../support/fake-apiserver.ts): it waits for its
// SampleDB and for the database, then starts one Job and reports it Running.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SampleDbBackupObject } from '../../../../src/api/index.ts';
import { ConflictError, silentLogger } from '../../../../src/runtime/index.ts';
import { SampleDbBackupReconciler } from '../../../../src/sampledb/backup/reconciler.ts';
import { JOBS, PODS, SAMPLEDB_BACKUPS, SAMPLEDBS } from '../../../../src/sampledb/resources.ts';
import { sampleDb } from '../../../support/sampledb.ts';
import { FakeApiserver } from '../support/fake-apiserver.ts';
import { servingDatabase } from '../support/serving.ts';

const REQ = { namespace: 'shop', name: 'nightly' };
const rc = () => ({ signal: new AbortController().signal, log: silentLogger, reconcileID: 't', retries: 0 });
const backup: SampleDbBackupObject = {
  apiVersion: 'sampledb.io/v1alpha1',
  kind: 'SampleDBBackup',
  metadata: { name: 'nightly', namespace: 'shop' },
  spec: { sampleDB: { name: 'orders' } },
};

async function reconcile(api: FakeApiserver) {
  const { client, view, now } = api.operator();
  await new SampleDbBackupReconciler({ client, view, now }).reconcile(REQ, rc());
  return api.get(SAMPLEDB_BACKUPS, 'shop', 'nightly')?.status;
}
const writes = (api: FakeApiserver) => api.log.map((w) => `${w.verb} ${w.plural}/${w.name}`);
const reason = (status: SampleDbBackupObject['status']) =>
  status?.conditions?.find((c) => c.type === 'Completed')?.reason;

describe('SampleDbBackupReconciler (fake apiserver)', () => {
  it('waits for its SampleDB, then for the database, writing only its status', async () => {
    const api = new FakeApiserver();
    api.put(SAMPLEDB_BACKUPS, backup);
    assert.equal(reason(await reconcile(api)), 'SampleDBNotFound');
    api.put(SAMPLEDBS, sampleDb({ backup: {} }));
    const waiting = await reconcile(api);
    assert.equal(waiting?.phase, 'Pending');
    assert.equal(reason(waiting), 'DatabaseNotReady');
    assert.deepEqual(writes(api), ['status sampledbbackups/nightly', 'status sampledbbackups/nightly']);
  });

  it('once the database serves: creates the backups volume once, applies the Job, reports Running', async () => {
    const api = new FakeApiserver();
    api.put(SAMPLEDB_BACKUPS, backup);
    servingDatabase(api);
    const running = await reconcile(api);
    assert.equal(running?.phase, 'Running');
    assert.equal(running?.location, 'pvc://orders-backups/orders/nightly.dump');
    assert.deepEqual(writes(api), [
      'create persistentvolumeclaims/orders-backups',
      'apply jobs/nightly-backup',
      'status sampledbbackups/nightly',
    ]);
    api.log.length = 0;
    await reconcile(api);
    assert.deepEqual(writes(api), [], 'nothing changed, nothing written');
  });

  it('queues: a second backup of the same SampleDB waits for the first, then starts once it has finished', async () => {
    const api = new FakeApiserver();
    servingDatabase(api);
    const first = api.put(SAMPLEDB_BACKUPS, {
      ...backup,
      metadata: { name: 'hourly-1', namespace: 'shop', creationTimestamp: '2026-01-01T00:00:00Z' },
    });
    api.put(SAMPLEDB_BACKUPS, {
      ...backup,
      metadata: { ...backup.metadata, creationTimestamp: '2026-01-01T00:00:05Z' },
    });
    const waiting = await reconcile(api);
    assert.equal(waiting?.phase, 'Pending');
    assert.equal(reason(waiting), 'WaitingForBackup');
    assert.match(waiting?.message ?? '', /Waiting for hourly-1/);
    assert.ok(!writes(api).some((w) => w.startsWith('apply jobs/')), writes(api).join(', '));

    api.put(SAMPLEDB_BACKUPS, { ...first, status: { phase: 'Completed' } });
    const running = await reconcile(api);
    assert.equal(running?.phase, 'Running');
    assert.ok(writes(api).includes('apply jobs/nightly-backup'));
  });

  it('cleans up the finished Job only after its result is in the status (TTL 0; the Job controller deletes its pods)', async () => {
    const api = new FakeApiserver();
    api.put(SAMPLEDB_BACKUPS, backup);
    servingDatabase(api);
    await reconcile(api);
    const job = api.get(JOBS, 'shop', 'nightly-backup');
    assert.ok(job);
    assert.equal(job.spec?.ttlSecondsAfterFinished, undefined, 'a running Job is kept');
    api.put(JOBS, {
      ...job,
      status: { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] },
    });
    const checksum = `sha256:${'a'.repeat(64)}`;
    api.put(PODS, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'nightly-backup-x',
        namespace: 'shop',
        ownerReferences: [
          {
            apiVersion: 'batch/v1',
            kind: 'Job',
            name: 'nightly-backup',
            uid: job.metadata.uid ?? '',
            controller: true,
          },
        ],
      },
      status: {
        phase: 'Succeeded',
        containerStatuses: [
          {
            name: 'backup',
            image: 'x',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: {
              terminated: {
                exitCode: 0,
                finishedAt: new Date('2026-01-01T00:02:00Z'),
                message: `{"sizeBytes":42,"checksum":"${checksum}"}`,
              },
            },
          },
        ],
      },
    });
    api.log.length = 0;
    const done = await reconcile(api);
    assert.equal(done?.phase, 'Completed');
    const order = writes(api).filter((w) => !w.startsWith('create events'));
    assert.deepEqual(order, ['status sampledbbackups/nightly', 'patch jobs/nightly-backup']);
    assert.equal(api.get(JOBS, 'shop', 'nightly-backup')?.spec?.ttlSecondsAfterFinished, 0);
    api.log.length = 0;
    await reconcile(api);
    assert.deepEqual(writes(api), [], 'released once');
  });

  it('a status computed from a stale read never lands: a Completed backup is not put back to Pending', async () => {
    // The race behind backup-space.test.ts's flake: the operator read the backup before another writer recorded it
    // Completed, then applied "Pending" over it. The apply now carries the read's resourceVersion.
    const api = new FakeApiserver();
    api.put(SAMPLEDB_BACKUPS, backup);
    const stale = api.operator();
    const current = api.put(SAMPLEDB_BACKUPS, {
      ...backup,
      status: { phase: 'Completed', sizeBytes: 10, completedAt: '2026-02-01T00:00:00Z' },
    });
    await assert.rejects(
      new SampleDbBackupReconciler(stale).reconcile(REQ, rc()),
      (err: Error) => err instanceof ConflictError,
    );
    const after = api.get(SAMPLEDB_BACKUPS, 'shop', 'nightly');
    assert.equal(after?.status?.phase, 'Completed');
    assert.equal(after?.metadata.resourceVersion, current.metadata.resourceVersion, 'nothing written');
    // From a fresh read the finished backup is left alone.
    assert.equal((await reconcile(api))?.phase, 'Completed');
  });
});
