// In-place restore on a real node (SampleDBRestore, ADR 0014): deleted rows come back into the existing SampleDB, with
// clients cut off at the Service while the backup is restored into a new database and switched in; the data it
// replaced ends up in the safety backup and its database is dropped. A restore that fails mid-way (its check after
// pg_restore fails) changes nothing: the current data stays as it was and no copy is left on the server.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pollUntil } from '../../src/envtest/index.ts';
import { LOCAL_POSTGRES_REPOSITORY } from '../../src/envtest/real-node/images.ts';
import { e2eSetup } from './support/cluster.ts';
import { apply, kubectlJson, kubectlOk, SEED_SQL, sampleDb, sql, waitReady } from './support/sampledb.ts';

const { cluster, namespace } = await e2eSetup('e2e-restore');
const DB = 'shop';

interface Restore {
  status?: {
    phase?: string;
    step?: string;
    steps?: Array<{ name: string; state: string; message?: string }>;
    safetyBackup?: string;
    previousDatabase?: string;
    restoredAt?: string;
    writesStoppedSeconds?: number;
    conditions?: Array<{ type: string; status: string; reason?: string }>;
    message?: string;
  };
}

async function completedBackup(name: string): Promise<void> {
  await apply(cluster, [
    {
      apiVersion: 'sampledb.io/v1alpha1',
      kind: 'SampleDBBackup',
      metadata: { name, namespace },
      spec: { sampleDB: { name: DB } },
    },
  ]);
  await pollUntil(
    `SampleDBBackup ${name} Completed`,
    async () => {
      const b = await kubectlJson<{ status?: { phase?: string; message?: string } }>(cluster, [
        'get',
        'sampledbbackup',
        name,
        '-n',
        namespace,
      ]);
      if (b?.status?.phase === 'Failed') throw new Error(`backup failed: ${b.status.message}`);
      return b?.status?.phase === 'Completed' ? true : undefined;
    },
    { timeoutMs: 180_000, intervalMs: 1000 },
  );
}

async function restoreInPlace(name: string, backup: string): Promise<Restore> {
  await apply(cluster, [
    {
      apiVersion: 'sampledb.io/v1alpha1',
      kind: 'SampleDBRestore',
      metadata: { name, namespace },
      spec: { sampleDB: { name: DB }, backup: { name: backup } },
    },
  ]);
  let last: Restore | undefined;
  try {
    return await pollUntil(
      `SampleDBRestore ${name} finished`,
      async () => {
        last = await kubectlJson<Restore>(cluster, ['get', 'sampledbrestore', name, '-n', namespace]);
        const phase = last?.status?.phase;
        return phase === 'Completed' || phase === 'Failed' || phase === 'RolledBack' ? last : undefined;
      },
      { timeoutMs: 300_000, intervalMs: 1000 },
    );
  } catch (error) {
    const more = await cluster.kubectl(['get', 'jobs,pods,sampledbbackups,events', '-n', namespace]);
    throw new Error(`${(error as Error).message}\nlast: ${JSON.stringify(last?.status)}\n${more.stdout}`);
  }
}

/** Runs a script in a restricted pod with the SampleDB's backup volume at /backups. */
async function onBackupVolume(name: string, script: string): Promise<void> {
  await apply(cluster, [
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace },
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
            name: 'edit',
            image: `${LOCAL_POSTGRES_REPOSITORY}:15`,
            imagePullPolicy: 'IfNotPresent',
            command: ['sh', '-c', script],
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
  const phase = await pollUntil(
    `pod ${name} finished`,
    async () => {
      const pod = await kubectlJson<{ status?: { phase?: string } }>(cluster, [
        'get',
        'pod',
        name,
        '-n',
        namespace,
      ]);
      const p = pod?.status?.phase;
      return p === 'Succeeded' || p === 'Failed' ? p : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 300 },
  );
  assert.equal(phase, 'Succeeded', await kubectlOk(cluster, ['logs', name, '-n', namespace]));
}

/** Clients reach the database through its Service again (endpoints and kube-proxy follow the selector). */
async function clientsConnect(): Promise<void> {
  await pollUntil(
    'a client connects through the Service',
    async () => {
      try {
        return (await sql(cluster, namespace, DB, 'SELECT 1;')) === '1' ? true : undefined;
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 90_000, intervalMs: 1000 },
  );
}

const clientSelector = async () =>
  (
    await kubectlJson<{ spec?: { selector?: Record<string, string> } }>(cluster, [
      'get',
      'service',
      DB,
      '-n',
      namespace,
    ])
  )?.spec?.selector ?? {};

/** Databases on the server besides the live one and the built-in ones (what a restore might leave behind). */
const otherDatabases = () =>
  sql(
    cluster,
    namespace,
    DB,
    "SELECT coalesce(string_agg(datname, ',' ORDER BY datname), '') FROM pg_database WHERE datname NOT IN ('postgres', 'template0', 'template1', 'app');",
  );

describe('in-place restore on a real node', () => {
  it('brings deleted rows back into the existing SampleDB with writes stopped meanwhile; the replaced data goes to the safety backup', async () => {
    await apply(cluster, [sampleDb(namespace, DB, { version: '15', storage: { size: '1Gi' } })]);
    await waitReady(cluster, namespace, DB);
    await sql(cluster, namespace, DB, SEED_SQL);
    await completedBackup('before');
    await sql(cluster, namespace, DB, 'DELETE FROM orders WHERE id > 100;');
    assert.equal(await sql(cluster, namespace, DB, 'SELECT count(*) FROM orders;'), '100');

    const restore = await restoreInPlace('undo', 'before');
    if (
      restore.status?.phase !== 'Completed' ||
      (await clientSelector())['app.kubernetes.io/component'] === 'writes-stopped'
    ) {
      const more = await cluster.kubectl([
        'get',
        'service,sampledb,endpointslices,pods',
        '-n',
        namespace,
        '-o',
        'yaml',
      ]);
      process.stderr.write(`restore status ${JSON.stringify(restore.status)}\n${more.stdout}\n`);
    }
    assert.equal(restore.status?.phase, 'Completed', JSON.stringify(restore.status));
    await clientsConnect();
    assert.deepEqual(
      restore.status?.steps?.map((s) => `${s.name}:${s.state}`),
      [
        'stop-writes:Done',
        'restore:Done',
        'verify:Done',
        'switch:Done',
        'resume-writes:Done',
        'safety-backup:Done',
        'cleanup:Done',
      ],
    );
    assert.equal(restore.status?.conditions?.find((c) => c.type === 'Completed')?.reason, 'Restored');
    assert.equal(restore.status?.safetyBackup, 'undo-safety');
    assert.equal(restore.status?.previousDatabase, undefined, 'dropped once backed up');
    assert.ok(restore.status?.restoredAt, 'restoredAt is set');
    assert.equal(await otherDatabases(), '', 'no copy is left on the server');
    // The safety backup holds the data the restore replaced: the 100 rows left after the delete.
    await onBackupVolume('check-safety', `grep -qx 'public.orders|100' /backups/${DB}/undo-safety.counts`);
    const stopped = restore.status?.writesStoppedSeconds;
    assert.ok(typeof stopped === 'number' && stopped >= 0, `writesStoppedSeconds ${stopped}`);
    process.stderr.write(`in-place restore: writes stopped for ${stopped} s\n`);
    assert.equal(
      await sql(cluster, namespace, DB, 'SELECT count(*) FROM orders;'),
      '500',
      'the deleted rows are back',
    );
    assert.ok(
      !((await clientSelector())['app.kubernetes.io/component'] === 'writes-stopped'),
      'clients reach the database again',
    );
    await waitReady(cluster, namespace, DB);
  });

  it('a restore that fails mid-way changes nothing: the current data stays as it was, no copy is left', async () => {
    await sql(
      cluster,
      namespace,
      DB,
      "DELETE FROM orders WHERE id > 300; INSERT INTO orders (customer, total_cents) VALUES ('current', 1);",
    );
    const current = await sql(cluster, namespace, DB, 'SELECT count(*), max(id) FROM orders;');
    // The backup's recorded row counts no longer match its dump: pg_restore succeeds, the check after it fails.
    await onBackupVolume(
      'tamper',
      `sed -i 's/^public.orders|500$/public.orders|501/' /backups/${DB}/before.counts && grep -q 'orders|501' /backups/${DB}/before.counts`,
    );
    const restore = await restoreInPlace('undo-again', 'before');
    assert.equal(restore.status?.phase, 'Failed', JSON.stringify(restore.status));
    await clientsConnect();
    const steps = Object.fromEntries((restore.status?.steps ?? []).map((s) => [s.name, s]));
    assert.equal(steps.restore?.state, 'Done');
    assert.equal(steps.verify?.state, 'Failed');
    assert.match(steps.verify?.message ?? '', /row counts the backup recorded/);
    assert.equal(steps.switch?.state, 'Skipped');
    assert.equal(steps['safety-backup']?.state, 'Skipped');
    assert.equal(steps.cleanup?.state, 'Done');
    assert.equal(steps['resume-writes']?.state, 'Done');
    assert.equal(
      restore.status?.conditions?.find((c) => c.type === 'Completed')?.reason,
      'VerificationFailed',
    );
    assert.match(restore.status?.message ?? '', /Nothing was changed: the live data is as it was/);
    assert.equal(await otherDatabases(), '', 'the unfinished copy was dropped');
    assert.equal(await sql(cluster, namespace, DB, 'SELECT count(*), max(id) FROM orders;'), current);
    assert.equal(
      await sql(cluster, namespace, DB, "SELECT count(*) FROM orders WHERE customer = 'current';"),
      '1',
    );
    assert.ok((await clientSelector())['app.kubernetes.io/component'] !== 'writes-stopped');
    const events = await kubectlJson<{ items: Array<{ reason?: string; regarding?: { name?: string } }> }>(
      cluster,
      ['get', 'events.events.k8s.io', '-n', namespace],
    );
    assert.ok(events?.items.some((e) => e.reason === 'RestoreFailed' && e.regarding?.name === 'undo-again'));
  });
});
