import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { backupJob, backupLocation, backupPvc, doubleQuantity } from '../../../src/sampledb/backup-job.ts';
import { initJob } from '../../../src/sampledb/init-job.ts';
import { resolveInstance } from '../../../src/sampledb/instance.ts';
import { BACKUP_SCRIPT } from '../../../src/sampledb/scripts/backup.ts';
import { INIT_SCRIPT } from '../../../src/sampledb/scripts/init.ts';
import { sampleDb } from '../../support/sampledb.ts';

const containerOf = (job: V1Job) => {
  const container = job.spec?.template.spec?.containers[0];
  assert.ok(container);
  return container;
};
const envOf = (job: V1Job) => Object.fromEntries((containerOf(job).env ?? []).map((e) => [e.name, e]));

const backup = (name = 'nightly') => ({
  apiVersion: 'sampledb.io/v1alpha1' as const,
  kind: 'SampleDBBackup' as const,
  metadata: { name, namespace: 'shop', uid: 'backup-uid' },
  spec: { sampleDB: { name: 'orders' } },
});

describe('initJob', () => {
  it('runs the init script with the database image, against the pod through the headless Service', () => {
    const job = initJob(resolveInstance(sampleDb({ version: '15' })));
    assert.equal(job.metadata?.name, 'orders-init');
    assert.equal(containerOf(job).image, 'docker.io/library/postgres:15');
    assert.deepEqual(containerOf(job).command, ['sh', '-c', INIT_SCRIPT]);
    const env = envOf(job);
    assert.equal(env.PGHOST?.value, 'orders-0.orders-headless.shop.svc');
    assert.equal(env.PGPORT?.value, '5432');
  });

  it('passes the credentials from the Secret, never as literal values', () => {
    const env = envOf(
      initJob(resolveInstance(sampleDb({ bootstrap: { credentialsSecret: { name: 'mine' } } }))),
    );
    for (const name of ['PGUSER', 'PGPASSWORD', 'SAMPLEDB_OWNER_PASSWORD'])
      assert.equal(env[name]?.value, undefined);
    // The superuser runs the script; the owner's password (the user's Secret) is only set on the owner role.
    assert.equal(env.PGUSER?.valueFrom?.secretKeyRef?.name, 'orders-superuser');
    assert.equal(env.PGPASSWORD?.valueFrom?.secretKeyRef?.name, 'orders-superuser');
    assert.equal(env.SAMPLEDB_OWNER_PASSWORD?.valueFrom?.secretKeyRef?.name, 'mine');
  });

  it('mounts the bootstrap SQL ConfigMap key and names the file in the env', () => {
    const job = initJob(
      resolveInstance(sampleDb({ bootstrap: { initSQL: { name: 'orders-sql', key: 'schema.sql' } } })),
    );
    const volume = job.spec?.template.spec?.volumes?.find((v) => v.configMap?.name === 'orders-sql');
    assert.deepEqual(volume?.configMap?.items, [{ key: 'schema.sql', path: 'init.sql' }]);
    const mount = containerOf(job).volumeMounts?.find((m) => m.name === volume?.name);
    assert.equal(envOf(job).SAMPLEDB_INIT_SQL?.value, `${mount?.mountPath}/init.sql`);
    assert.equal(envOf(initJob(resolveInstance(sampleDb()))).SAMPLEDB_INIT_SQL?.value, '');
  });

  it('mounts the backup volume read-only to restore from a backup', () => {
    const job = initJob(resolveInstance(sampleDb()), {
      claimName: 'old-backups',
      path: 'old/final.dump',
      checksum: 'sha256:ab',
    });
    const volume = job.spec?.template.spec?.volumes?.find((v) => v.persistentVolumeClaim);
    assert.deepEqual(volume?.persistentVolumeClaim, { claimName: 'old-backups', readOnly: true });
    assert.equal(envOf(job).SAMPLEDB_RESTORE_DUMP?.value, '/backups/old/final.dump');
    assert.equal(envOf(job).SAMPLEDB_RESTORE_CHECKSUM?.value, 'sha256:ab');
  });

  it('retries a little, never restarts in place, keeps the finished Job for the status', () => {
    const job = initJob(resolveInstance(sampleDb()));
    assert.ok((job.spec?.backoffLimit ?? 6) <= 3);
    assert.equal(job.spec?.template.spec?.restartPolicy, 'Never');
    assert.equal(job.spec?.ttlSecondsAfterFinished, undefined);
    assert.equal(containerOf(job).terminationMessagePolicy, 'FallbackToLogsOnError');
  });
});

describe('backupJob', () => {
  it('dumps to the backup PVC and reports through the termination message', () => {
    const job = backupJob(resolveInstance(sampleDb()), backup());
    assert.equal(job.metadata?.name, 'nightly-backup');
    assert.deepEqual(containerOf(job).command, ['sh', '-c', BACKUP_SCRIPT]);
    assert.equal(containerOf(job).terminationMessagePath, '/dev/termination-log');
    const env = envOf(job);
    assert.equal(env.SAMPLEDB_BACKUP_DIR?.value, '/backups/orders');
    assert.equal(env.SAMPLEDB_BACKUP_NAME?.value, 'nightly');
    assert.equal(env.SAMPLEDB_TERMINATION_LOG?.value, '/dev/termination-log');
    const volume = job.spec?.template.spec?.volumes?.find((v) => v.persistentVolumeClaim);
    assert.equal(volume?.persistentVolumeClaim?.claimName, 'orders-backups');
    assert.ok(
      containerOf(job).volumeMounts?.some((m) => m.name === volume?.name && m.mountPath === '/backups'),
    );
  });

  it('is owned by the SampleDBBackup it runs', () => {
    const [owner] = backupJob(resolveInstance(sampleDb()), backup()).metadata?.ownerReferences ?? [];
    assert.deepEqual(owner, {
      apiVersion: 'sampledb.io/v1alpha1',
      kind: 'SampleDBBackup',
      name: 'nightly',
      uid: 'backup-uid',
      controller: true,
      blockOwnerDeletion: true,
    });
  });

  it('uses the user PVC when backup.volume.claimName is set', () => {
    const db = sampleDb({ backup: { volume: { claimName: 'shared-backups' } } });
    assert.equal(resolveInstance(db).backupClaim.name, 'shared-backups');
    assert.equal(backupPvc(resolveInstance(db)), undefined);
    assert.equal(backupLocation(resolveInstance(db), 'nightly'), 'pvc://shared-backups/orders/nightly.dump');
  });
});

describe('backupPvc', () => {
  it('is twice the data size by default, or the size and class given', () => {
    assert.equal(backupPvc(resolveInstance(sampleDb()))?.spec?.resources?.requests?.storage, '20Gi');
    const pvc = backupPvc(
      resolveInstance(sampleDb({ backup: { volume: { size: '5Gi', storageClassName: 'cheap' } } })),
    );
    assert.equal(pvc?.spec?.resources?.requests?.storage, '5Gi');
    assert.equal(pvc?.spec?.storageClassName, 'cheap');
  });

  it('outlives the SampleDB: no owner reference, so the final backup survives garbage collection', () => {
    const pvc = backupPvc(resolveInstance(sampleDb()));
    assert.equal(pvc?.metadata?.ownerReferences, undefined);
    assert.equal(pvc?.metadata?.labels?.['app.kubernetes.io/instance'], 'orders');
  });

  it('doubles quantities keeping their unit', () => {
    assert.equal(doubleQuantity('10Gi'), '20Gi');
    assert.equal(doubleQuantity('500M'), '1000M');
    assert.equal(doubleQuantity('1.5Gi'), String(3 * 2 ** 30));
  });
});
