// Verified backups on a real node: with spec.backup.verify, a completed backup is restored into a temporary server in
// the verify Job's own pod and checked against the row counts (and the user's query) its backup recorded; a dump
// corrupted on the backup volume fails verification, and the SampleDB's BackupHealthy says so until a later backup
// verifies.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pollUntil } from '../../src/envtest/index.ts';
import { LOCAL_POSTGRES_REPOSITORY } from '../../src/envtest/real-node/images.ts';
import { e2eSetup } from './support/cluster.ts';
import {
  apply,
  conditionOf,
  kubectlJson,
  SEED_SQL,
  sampleDb,
  sql,
  statusOf,
  waitReady,
} from './support/sampledb.ts';

const { cluster, namespace } = await e2eSetup('e2e-verify');
const DB = 'ledger';

interface Backup {
  status?: {
    phase?: string;
    message?: string;
    verified?: boolean;
    verification?: {
      phase?: string;
      restoreSeconds?: number;
      tables?: number;
      rows?: number;
      query?: boolean;
      message?: string;
    };
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
  };
}

async function takeBackup(name: string): Promise<void> {
  await apply(cluster, [
    {
      apiVersion: 'sampledb.io/v1alpha1',
      kind: 'SampleDBBackup',
      metadata: { name, namespace },
      spec: { sampleDB: { name: DB } },
    },
  ]);
}

/** Polls until the backup's verification has finished (Verified or Failed). */
async function verificationOf(name: string): Promise<Backup> {
  return await pollUntil(
    `SampleDBBackup ${name} verification finished`,
    async () => {
      const backup = await kubectlJson<Backup>(cluster, ['get', 'sampledbbackup', name, '-n', namespace]);
      if (backup?.status?.phase === 'Failed') throw new Error(`backup failed: ${backup.status.message}`);
      const phase = backup?.status?.verification?.phase;
      return phase === 'Verified' || phase === 'Failed' ? backup : undefined;
    },
    { timeoutMs: 240_000, intervalMs: 1000 },
  );
}

async function backupHealthy(want: 'True' | 'False') {
  return await pollUntil(
    `SampleDB ${DB} BackupHealthy=${want}`,
    async () => {
      const condition = conditionOf(await statusOf(cluster, namespace, DB), 'BackupHealthy');
      return condition?.status === want ? condition : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 500 },
  );
}

/** A restricted pod on the backup volume that damages a dump the moment it appears, before it can be verified. */
async function corruptWhenWritten(backupName: string): Promise<void> {
  const dump = `/backups/${DB}/${backupName}.dump`;
  await apply(cluster, [
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'corrupter', namespace },
      spec: {
        restartPolicy: 'Never',
        securityContext: {
          runAsNonRoot: true,
          runAsUser: 999,
          runAsGroup: 999,
          seccompProfile: { type: 'RuntimeDefault' },
        },
        containers: [
          {
            name: 'corrupt',
            image: `${LOCAL_POSTGRES_REPOSITORY}:15`,
            imagePullPolicy: 'IfNotPresent',
            command: [
              'sh',
              '-c',
              `i=0; until [ -f ${dump} ]; do i=$((i + 1)); [ $i -lt 6000 ] || exit 2; sleep 0.05; done
               printf 'not a dump' | dd of=${dump} bs=1 seek=200 conv=notrunc 2>/dev/null; echo corrupted`,
            ],
            securityContext: {
              allowPrivilegeEscalation: false,
              capabilities: { drop: ['ALL'] },
              readOnlyRootFilesystem: true,
            },
            volumeMounts: [{ name: 'backups', mountPath: '/backups' }],
          },
        ],
        volumes: [{ name: 'backups', persistentVolumeClaim: { claimName: `${DB}-backups` } }],
      },
    },
  ]);
  await pollUntil(
    'corrupter pod running',
    async () => {
      const pod = await kubectlJson<{ status?: { phase?: string } }>(cluster, [
        'get',
        'pod',
        'corrupter',
        '-n',
        namespace,
      ]);
      return pod?.status?.phase === 'Running' ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 300 },
  );
}

describe('verified backups on a real node', () => {
  it('verifies a backup: restored in a temporary server, row counts and the query as recorded, RTO measured', async () => {
    await apply(cluster, [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'checks', namespace },
        data: { 'verify.sql': 'SELECT count(*), sum(total_cents) FROM orders;\n' },
      },
      sampleDb(namespace, DB, {
        version: '15',
        storage: { size: '1Gi' },
        backup: { verify: true, verifyQuery: { name: 'checks', key: 'verify.sql' } },
      }),
    ]);
    await waitReady(cluster, namespace, DB);
    await sql(cluster, namespace, DB, SEED_SQL);
    await takeBackup('good');
    const good = await verificationOf('good');
    assert.equal(good.status?.verified, true, JSON.stringify(good.status?.verification));
    assert.equal(good.status?.verification?.phase, 'Verified');
    assert.equal(good.status?.verification?.rows, 700, 'orders 500 + events 200');
    assert.equal(good.status?.verification?.query, true);
    const rto = good.status?.verification?.restoreSeconds;
    assert.ok(typeof rto === 'number' && rto >= 0, `restoreSeconds ${rto}`);
    const verified = good.status?.conditions?.find((c) => c.type === 'Verified');
    assert.equal(verified?.status, 'True');
    process.stderr.write(`verified backup: restore ${rto} s; ${verified?.message}\n`);
    const healthy = await backupHealthy('True');
    assert.equal(healthy.reason, 'BackupsHealthy');
  });

  it('a dump corrupted on the backup volume fails verification; BackupHealthy turns False, then True again', async () => {
    await corruptWhenWritten('broken');
    await takeBackup('broken');
    const broken = await verificationOf('broken');
    assert.equal(broken.status?.phase, 'Completed', 'the backup itself completed');
    assert.equal(broken.status?.verified, false);
    assert.match(broken.status?.verification?.message ?? '', /checksum mismatch .*the backup is corrupt/);
    const condition = broken.status?.conditions?.find((c) => c.type === 'Verified');
    assert.deepEqual([condition?.status, condition?.reason], ['False', 'VerificationFailed']);
    const unhealthy = await backupHealthy('False');
    assert.equal(unhealthy.reason, 'VerificationFailed');
    assert.match(unhealthy.message ?? '', /Backup broken failed verification/);
    const events = await kubectlJson<{ items: Array<{ reason?: string; regarding?: { name?: string } }> }>(
      cluster,
      ['get', 'events.events.k8s.io', '-n', namespace],
    );
    assert.ok(
      events?.items.some((e) => e.reason === 'BackupVerificationFailed' && e.regarding?.name === 'broken'),
      'a BackupVerificationFailed Event on the backup',
    );

    await takeBackup('after-fix');
    assert.equal((await verificationOf('after-fix')).status?.verified, true);
    assert.equal((await backupHealthy('True')).reason, 'BackupsHealthy');
  });
});
