// Verified backups without a cluster: the verify Job (restricted, no credentials, the dump read-only, a server of its
// own on an emptyDir), the status it leads to, and the whole flow on the fake apiserver: a backup that completes
// while its SampleDB verifies backups starts one verify Job, and its result lands in status and an Event.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { SampleDbBackupObject } from '../../../../src/api/index.ts';
import { silentLogger } from '../../../../src/runtime/index.ts';
import { finishedEvent, SampleDbBackupReconciler } from '../../../../src/sampledb/backup/reconciler.ts';
import { backupJob } from '../../../../src/sampledb/backup-job.ts';
import { resolveInstance } from '../../../../src/sampledb/instance.ts';
import { JOBS, PODS, SAMPLEDB_BACKUPS, SAMPLEDBS } from '../../../../src/sampledb/resources.ts';
import { verifyJob } from '../../../../src/sampledb/verify-job.ts';
import { sampleDb } from '../../../support/sampledb.ts';
import { FakeApiserver } from '../support/fake-apiserver.ts';

const CHECKSUM = `sha256:${'c'.repeat(64)}`;
const REQ = { namespace: 'shop', name: 'nightly' };
const rc = () => ({ signal: new AbortController().signal, log: silentLogger, reconcileID: 't', retries: 0 });
const completedBackup: SampleDbBackupObject = {
  apiVersion: 'sampledb.io/v1alpha1',
  kind: 'SampleDBBackup',
  metadata: { name: 'nightly', namespace: 'shop', uid: 'backup-uid' },
  spec: { sampleDB: { name: 'orders' } },
  status: { phase: 'Completed', checksum: CHECKSUM, completedAt: '2026-01-01T00:00:00Z' },
};
const verifying = (query = false) =>
  sampleDb({
    backup: { verify: true, ...(query ? { verifyQuery: { name: 'checks', key: 'verify.sql' } } : {}) },
  });

describe('verifyJob', () => {
  it('restores from the backup volume read-only into an emptyDir as large as the data volume, with no credentials', () => {
    const job = verifyJob(resolveInstance(verifying()), completedBackup);
    const pod = job.spec?.template.spec;
    const container = pod?.containers[0];
    assert.equal(job.metadata?.name, 'nightly-verify');
    assert.equal(job.metadata?.ownerReferences?.[0]?.kind, 'SampleDBBackup');
    assert.equal(container?.name, 'verify');
    assert.equal(pod?.automountServiceAccountToken, false);
    assert.equal(container?.securityContext?.readOnlyRootFilesystem, true);
    const env = Object.fromEntries((container?.env ?? []).map((e) => [e.name, e.value]));
    assert.equal(env.SAMPLEDB_VERIFY_DUMP, '/backups/orders/nightly.dump');
    assert.equal(env.SAMPLEDB_RESTORE_CHECKSUM, CHECKSUM);
    assert.equal(env.SAMPLEDB_VERIFY_QUERY_FILE, '');
    assert.ok(
      !(container?.env ?? []).some((e) => e.valueFrom),
      'the verification reads no Secret: it never connects to the database',
    );
    assert.deepEqual(pod?.volumes?.find((v) => v.name === 'backups')?.persistentVolumeClaim, {
      claimName: 'orders-backups',
      readOnly: true,
    });
    assert.deepEqual(pod?.volumes?.find((v) => v.name === 'verify-data')?.emptyDir, { sizeLimit: '10Gi' });
    assert.equal(container?.volumeMounts?.find((m) => m.name === 'backups')?.readOnly, true);
  });

  it('mounts the verification query in the verify Job and in the backup Job, which runs it in its snapshot', () => {
    const instance = resolveInstance(verifying(true));
    for (const job of [verifyJob(instance, completedBackup), backupJob(instance, completedBackup)]) {
      const pod = job.spec?.template.spec;
      assert.deepEqual(pod?.volumes?.find((v) => v.name === 'verify-query')?.configMap, {
        name: 'checks',
        items: [{ key: 'verify.sql', path: 'verify.sql' }],
        optional: true,
      });
      const env = Object.fromEntries((pod?.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
      assert.equal(env.SAMPLEDB_VERIFY_QUERY_FILE, '/etc/sampledb-verify/verify.sql');
    }
    const plain = backupJob(resolveInstance(sampleDb({ backup: {} })), completedBackup);
    assert.ok(!plain.spec?.template.spec?.volumes?.some((v) => v.name === 'verify-query'));
  });

  it('refuses a backup without a checksum: there is nothing to verify against', () => {
    const { checksum: _, ...status } = completedBackup.status ?? {};
    assert.throws(
      () => verifyJob(resolveInstance(verifying()), { ...completedBackup, status }),
      /no checksum/,
    );
  });
});

const terminated = (name: string, phase: 'Succeeded' | 'Failed', message: string, owner: string): V1Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: `${name}-pod`,
    namespace: 'shop',
    ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name, uid: owner, controller: true }],
  },
  status: {
    phase,
    containerStatuses: [
      {
        name: name.endsWith('verify') ? 'verify' : 'backup',
        image: 'postgres',
        imageID: '',
        ready: false,
        restartCount: 0,
        state: {
          terminated: {
            exitCode: phase === 'Succeeded' ? 0 : 1,
            finishedAt: new Date('2026-01-01T00:05:00Z'),
            message,
          },
        },
      },
    ],
  },
});

function finishJob(api: FakeApiserver, name: string, type: 'Complete' | 'Failed', message: string) {
  const job = api.get(JOBS, 'shop', name) as V1Job & { metadata: { uid: string } };
  api.put(JOBS, {
    ...job,
    status: {
      conditions: [{ type, status: 'True', reason: type === 'Failed' ? 'BackoffLimitExceeded' : '' }],
    },
  } as never);
  api.put(PODS, terminated(name, type === 'Complete' ? 'Succeeded' : 'Failed', message, job.metadata.uid));
}

async function reconcile(api: FakeApiserver) {
  const { client, view, now } = api.operator();
  await new SampleDbBackupReconciler({ client, view, now }).reconcile(REQ, rc());
  return api.get(SAMPLEDB_BACKUPS, 'shop', 'nightly')?.status;
}

describe('verification on the fake apiserver', () => {
  function running() {
    const api = new FakeApiserver();
    api.put(SAMPLEDB_BACKUPS, { ...completedBackup, status: { phase: 'Running' } });
    api.put(SAMPLEDBS, verifying());
    api.put(JOBS, {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'nightly-backup', namespace: 'shop' },
    } as never);
    return api;
  }

  it('a completed backup waits for verification, starts one verify Job, and records the result and RTO', async () => {
    const api = running();
    finishJob(
      api,
      'nightly-backup',
      'Complete',
      `{"sizeBytes":42,"checksum":"${CHECKSUM}","tables":1,"rows":3}`,
    );
    const completed = await reconcile(api);
    assert.equal(completed?.phase, 'Completed');
    assert.equal(completed?.verification?.phase, 'Pending');
    assert.equal(completed?.conditions?.find((c) => c.type === 'Verified')?.reason, 'VerificationPending');

    const started = await reconcile(api);
    assert.equal(started?.verification?.phase, 'Running');
    assert.ok(api.get(JOBS, 'shop', 'nightly-verify'), 'the verify Job exists');
    api.log.length = 0;
    await reconcile(api);
    assert.deepEqual(
      api.log.map((w) => w.verb),
      [],
      'a running verification writes nothing more',
    );

    finishJob(
      api,
      'nightly-verify',
      'Complete',
      '{"verified":true,"tables":1,"rows":3,"restoreMs":1234,"query":false}',
    );
    const verified = await reconcile(api);
    assert.equal(verified?.verified, true);
    assert.equal(verified?.verification?.phase, 'Verified');
    assert.equal(verified?.verification?.restoreSeconds, 1.234);
    assert.equal(verified?.verification?.rows, 3);
    const condition = verified?.conditions?.find((c) => c.type === 'Verified');
    assert.equal(condition?.status, 'True');
    assert.match(condition?.message ?? '', /Restored in 1\.234 s/);
    assert.equal(finishedEvent(started, verified ?? {})?.reason, 'BackupVerified');
    api.log.length = 0;
    await reconcile(api);
    assert.deepEqual(api.log, [], 'a verified backup is never touched again');
  });

  it('a failed verification says why, verified: false, and a Warning Event', async () => {
    const api = running();
    finishJob(api, 'nightly-backup', 'Complete', `{"sizeBytes":42,"checksum":"${CHECKSUM}"}`);
    await reconcile(api);
    await reconcile(api);
    finishJob(
      api,
      'nightly-verify',
      'Failed',
      'pg_restore of /backups/orders/nightly.dump failed, the backup cannot be restored: x',
    );
    api.log.length = 0;
    const before = api.get(SAMPLEDB_BACKUPS, 'shop', 'nightly')?.status;
    const failed = await reconcile(api);
    assert.equal(failed?.verified, false);
    assert.equal(failed?.phase, 'Completed', 'the backup itself completed; its verification failed');
    assert.equal(failed?.verification?.phase, 'Failed');
    assert.match(failed?.verification?.message ?? '', /cannot be restored/);
    const condition = failed?.conditions?.find((c) => c.type === 'Verified');
    assert.deepEqual([condition?.status, condition?.reason], ['False', 'VerificationFailed']);
    const event = finishedEvent(before, failed ?? {});
    assert.deepEqual([event?.type, event?.reason], ['Warning', 'BackupVerificationFailed']);
    assert.equal(finishedEvent(failed, failed ?? {}), undefined, 'nothing new, no Event');
  });

  it('a SampleDB that does not verify leaves completed backups alone', async () => {
    const api = running();
    api.put(SAMPLEDBS, sampleDb({ backup: {} }));
    finishJob(api, 'nightly-backup', 'Complete', `{"sizeBytes":42,"checksum":"${CHECKSUM}"}`);
    const completed = await reconcile(api);
    assert.equal(completed?.verification, undefined);
    api.log.length = 0;
    await reconcile(api);
    assert.deepEqual(api.log, []);
    assert.equal(api.get(JOBS, 'shop', 'nightly-verify'), undefined);
  });
});
