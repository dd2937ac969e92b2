// The in-place restore's builders (ADR 0014): the names of the two databases a restore makes, the Jobs and the
// safety backup that reads the previous database; and that no builder can be pointed at the live database.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import type { SampleDbBackupObject, SampleDbRestoreObject } from '../../../../src/api/index.ts';
import { backupDatabase, backupJob } from '../../../../src/sampledb/backup-job.ts';
import { resolveInstance } from '../../../../src/sampledb/instance.ts';
import {
  isRestorePreviousDatabase,
  restorePreviousDatabase,
  restoreStagingDatabase,
} from '../../../../src/sampledb/names.ts';
import {
  cleanupJob,
  inPlaceRestoreJob,
  restoreDatabases,
  safetyBackup,
} from '../../../../src/sampledb/restore/objects.ts';
import { sampleDb } from '../../../support/sampledb.ts';

const instance = resolveInstance(sampleDb({ version: '17', bootstrap: { database: 'shop' } }));
const restore: SampleDbRestoreObject = {
  apiVersion: 'sampledb.io/v1alpha1',
  kind: 'SampleDBRestore',
  metadata: { name: 'undo', namespace: 'shop', uid: 'restore-uid' },
  spec: { sampleDB: { name: 'orders' }, backup: { name: 'nightly' } },
};
const source: SampleDbBackupObject = {
  apiVersion: 'sampledb.io/v1alpha1',
  kind: 'SampleDBBackup',
  metadata: { name: 'nightly', namespace: 'shop', uid: 'backup-uid' },
  spec: { sampleDB: { name: 'orders' } },
  status: { phase: 'Completed', checksum: `sha256:${'a'.repeat(64)}` },
};
const envOf = (job: V1Job) =>
  Object.fromEntries((job.spec?.template.spec?.containers[0]?.env ?? []).map((e) => [e.name, e.value]));

describe('restore database names', () => {
  it('are PostgreSQL identifiers of at most 63 bytes, distinct from the live one, one previous name per restore', () => {
    for (const db of ['app', 'a'.repeat(63), `x${'_9'.repeat(31)}`]) {
      const names = [
        restoreStagingDatabase(db),
        restorePreviousDatabase(db, 'undo'),
        restorePreviousDatabase(db, 'again'),
      ];
      for (const name of names) {
        assert.match(name, /^[a-z_][a-z0-9_]{0,62}$/, name);
        assert.notEqual(name, db);
      }
      assert.equal(new Set(names).size, 3);
      assert.ok(isRestorePreviousDatabase(db, names[1] ?? ''));
      assert.ok(!isRestorePreviousDatabase(db, names[0] ?? ''));
      assert.ok(!isRestorePreviousDatabase(db, db));
    }
    assert.equal(
      restorePreviousDatabase('app', 'undo'),
      restorePreviousDatabase('app', 'undo'),
      'deterministic',
    );
  });
});

describe('in-place restore objects', () => {
  it('the restore Job restores into the staging database, switches in, and says which method it runs', () => {
    const job = inPlaceRestoreJob(instance, restore, source, 'restore');
    const env = envOf(job);
    assert.equal(env.SAMPLEDB_DATABASE, 'shop');
    assert.equal(env.SAMPLEDB_RESTORE_STAGING_DATABASE, restoreStagingDatabase('shop'));
    assert.equal(env.SAMPLEDB_RESTORE_PREVIOUS_DATABASE, restorePreviousDatabase('shop', 'undo'));
    assert.equal(job.metadata?.annotations?.['sampledb.io/restore-method'], 'switch');
    assert.equal(job.spec?.backoffLimit, 0);
  });

  it('the safety backup dumps the previous database, and only a previous database of this SampleDB is honoured', () => {
    const safety = safetyBackup(instance, restore);
    assert.equal(safety.metadata.name, 'undo-safety');
    assert.equal(safety.metadata.ownerReferences, undefined, 'outlives the restore');
    assert.equal(backupDatabase(instance, safety), restoreDatabases(instance, 'undo').previous);
    assert.equal(
      envOf(backupJob(instance, { ...safety, metadata: { ...safety.metadata, uid: 'safety-uid' } }))
        .SAMPLEDB_DATABASE,
      restoreDatabases(instance, 'undo').previous,
    );
    for (const pointed of ['postgres', 'template1', 'shop', 'other_sdb_pre_0123abcd', 'shop_sdb_pre_xyz'])
      assert.equal(
        backupDatabase(instance, {
          ...safety,
          metadata: { ...safety.metadata, annotations: { 'sampledb.io/previous-database': pointed } },
        }),
        'shop',
        pointed,
      );
    assert.equal(backupDatabase(instance, source), 'shop');
  });

  it('the cleanup Job drops what it is given and refuses the live database', () => {
    const job = cleanupJob(instance, restore, ['shop_sdb_restoring']);
    assert.equal(job.metadata?.name, 'undo-cleanup');
    assert.equal(envOf(job).SAMPLEDB_DROP_DATABASES, 'shop_sdb_restoring');
    assert.equal(job.metadata?.ownerReferences?.[0]?.uid, 'restore-uid');
    assert.throws(() => cleanupJob(instance, restore, ['shop_sdb_restoring', 'shop']), /live database shop/);
    assert.throws(() => cleanupJob(instance, restore, ['x; DROP DATABASE shop']), /not a database name/);
  });
});
