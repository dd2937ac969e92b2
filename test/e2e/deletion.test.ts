// Scenario 5: deletion with each policy on real data. Snapshot (no snapshot API on this node, so the final pg_dump
// backup) keeps the rows before any volume goes; Delete removes the volumes; Retain keeps a volume that a new
// SampleDB of the same name opens, rows and all.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pollUntil } from '../../src/envtest/index.ts';
import { e2eSetup } from './support/cluster.ts';
import {
  apply,
  kubectlJson,
  kubectlOk,
  SEED_SQL,
  sampleDb,
  sql,
  tableChecksums,
  waitReady,
} from './support/sampledb.ts';

const { cluster, namespace } = await e2eSetup('e2e-delete');

async function seeded(name: string, policy: string): Promise<Record<string, string>> {
  await apply(cluster, [
    sampleDb(namespace, name, {
      version: '15',
      storage: { size: '1Gi' },
      deletion: { policy, protection: false },
    }),
  ]);
  await waitReady(cluster, namespace, name);
  await sql(cluster, namespace, name, SEED_SQL);
  return tableChecksums(cluster, namespace, name);
}

async function deleted(name: string): Promise<void> {
  await kubectlOk(cluster, ['delete', 'sampledb', name, '-n', namespace, '--wait=false']);
  await pollUntil(
    `SampleDB ${name} gone`,
    async () => ((await kubectlJson(cluster, ['get', 'sampledb', name, '-n', namespace])) ? undefined : true),
    { timeoutMs: 240_000, intervalMs: 1000 },
  );
}

const pvcExists = async (name: string) =>
  Boolean(await kubectlJson(cluster, ['get', 'pvc', name, '-n', namespace]));

// Each policy on a SampleDB of its own, at the same time.
describe('deletion policies on real data', { concurrency: true }, () => {
  it('Snapshot: without a snapshot API, a final pg_dump backup holds the rows before the volume goes', async () => {
    const before = await seeded('snap', 'Snapshot');
    await deleted('snap');
    assert.equal(await pvcExists('data-snap-0'), false);
    const backups = await kubectlJson<{
      items: { metadata: { name: string }; status?: { phase?: string } }[];
    }>(cluster, ['get', 'sampledbbackups', '-n', namespace]);
    const final = backups?.items.find((b) => b.metadata.name.startsWith('snap-final'));
    assert.equal(
      final?.status?.phase,
      'Completed',
      JSON.stringify(backups?.items.map((b) => b.metadata.name)),
    );
    await apply(cluster, [
      sampleDb(namespace, 'snap-restored', {
        version: '15',
        storage: { size: '1Gi' },
        bootstrap: { fromBackup: { name: final!.metadata.name } },
      }),
    ]);
    await waitReady(cluster, namespace, 'snap-restored');
    assert.deepEqual(await tableChecksums(cluster, namespace, 'snap-restored'), before);
  });

  it('Delete: the data volume and its PersistentVolume are removed', async () => {
    await seeded('gone', 'Delete');
    const pvc = await kubectlJson<{ spec: { volumeName: string } }>(cluster, [
      'get',
      'pvc',
      'data-gone-0',
      '-n',
      namespace,
    ]);
    await deleted('gone');
    await pollUntil(
      'data volume and PV removed',
      async () =>
        !(await pvcExists('data-gone-0')) &&
        !(await kubectlJson(cluster, ['get', 'pv', pvc!.spec.volumeName]))
          ? true
          : undefined,
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
  });

  it('Retain: the volume stays, and a new SampleDB of the same name opens it with its rows', async () => {
    const before = await seeded('kept', 'Retain');
    await deleted('kept');
    assert.equal(await pvcExists('data-kept-0'), true);
    await apply(cluster, [
      sampleDb(namespace, 'kept', {
        version: '15',
        storage: { size: '1Gi' },
        deletion: { policy: 'Retain', protection: false },
      }),
    ]);
    await waitReady(cluster, namespace, 'kept');
    assert.deepEqual(await tableChecksums(cluster, namespace, 'kept'), before);
  });
});
