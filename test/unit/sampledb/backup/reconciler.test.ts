// The SampleDBBackup reconciler's steps, on a fake apiserver (../support/fake-apiserver.ts): it waits for its
// SampleDB and for the database, then starts one Job and reports it Running.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SampleDbBackupObject } from '../../../../src/api/index.ts';
import { silentLogger } from '../../../../src/runtime/index.ts';
import { SampleDbBackupReconciler } from '../../../../src/sampledb/backup/reconciler.ts';
import { SAMPLEDB_BACKUPS, SAMPLEDBS, STATEFULSETS } from '../../../../src/sampledb/resources.ts';
import { sampleDb } from '../../../support/sampledb.ts';
import { FakeApiserver } from '../support/fake-apiserver.ts';

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
    api.put(SAMPLEDBS, sampleDb({ backup: {} }));
    api.put(STATEFULSETS, {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'orders', namespace: 'shop' },
      status: { replicas: 1, readyReplicas: 1 },
    });
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
});
