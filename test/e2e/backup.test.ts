// Scenario 4: an on-demand and a scheduled SampleDBBackup run pg_dump over the pod network with the Secret's
// credentials, and a new SampleDB restored from one (bootstrap.fromBackup) holds the same rows, table by table.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pollUntil } from '../../src/envtest/index.ts';
import { e2eSetup } from './support/cluster.ts';
import {
  apply,
  kubectlJson,
  SEED_SQL,
  sampleDb,
  sql,
  tableChecksums,
  waitReady,
} from './support/sampledb.ts';

const { cluster, namespace } = await e2eSetup('e2e-backup');

interface Backup {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { sampleDB: { name: string } };
  status?: { phase?: string; checksum?: string; sizeBytes?: number; location?: string; message?: string };
}

async function completedBackup(name: string): Promise<Backup> {
  return pollUntil(
    `SampleDBBackup ${name} Completed`,
    async () => {
      const backup = await kubectlJson<Backup>(cluster, ['get', 'sampledbbackup', name, '-n', namespace]);
      if (backup?.status?.phase === 'Failed') throw new Error(`backup failed: ${backup.status.message}`);
      return backup?.status?.phase === 'Completed' ? backup : undefined;
    },
    { timeoutMs: 180_000, intervalMs: 1000 },
  );
}

describe('backups on a real node', () => {
  let original: Record<string, string> = {};

  it('takes an on-demand backup with pg_dump over the network', async () => {
    await apply(cluster, [sampleDb(namespace, 'source', { version: '15', storage: { size: '1Gi' } })]);
    await waitReady(cluster, namespace, 'source');
    await sql(cluster, namespace, 'source', SEED_SQL);
    original = await tableChecksums(cluster, namespace, 'source');
    assert.deepEqual(Object.keys(original), ['events', 'orders']);
    await apply(cluster, [
      {
        apiVersion: 'sampledb.io/v1alpha1',
        kind: 'SampleDBBackup',
        metadata: { name: 'before-release', namespace },
        spec: { sampleDB: { name: 'source' } },
      },
    ]);
    const backup = await completedBackup('before-release');
    assert.match(backup.status?.checksum ?? '', /^sha256:[0-9a-f]{64}$/);
    assert.ok(
      (backup.status?.sizeBytes ?? 0) > 1000,
      `a dump with the rows: ${backup.status?.sizeBytes} bytes`,
    );
  });

  it('restores a new SampleDB from it with the same rows in every table', async () => {
    await apply(cluster, [
      sampleDb(namespace, 'restored', {
        version: '15',
        storage: { size: '1Gi' },
        bootstrap: { fromBackup: { name: 'before-release' } },
      }),
    ]);
    await waitReady(cluster, namespace, 'restored');
    assert.deepEqual(await tableChecksums(cluster, namespace, 'restored'), original);
  });

  it('runs scheduled backups by the cron schedule', async () => {
    await apply(cluster, [
      sampleDb(namespace, 'source', {
        version: '15',
        storage: { size: '1Gi' },
        backup: { schedule: '* * * * *' },
      }),
    ]);
    const scheduled = await pollUntil(
      'a scheduled SampleDBBackup',
      async () => {
        const list = await kubectlJson<{ items: Backup[] }>(cluster, [
          'get',
          'sampledbbackups',
          '-n',
          namespace,
        ]);
        return list?.items.find(
          (b) => b.metadata.name !== 'before-release' && b.spec.sampleDB.name === 'source',
        );
      },
      { timeoutMs: 120_000, intervalMs: 2000 },
    );
    const backup = await completedBackup(scheduled.metadata.name);
    assert.match(backup.status?.location ?? '', /^pvc:\/\/source-backups\/source\//);
  });
});
