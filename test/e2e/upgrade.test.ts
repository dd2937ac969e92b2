// Issue 12 on the real node: a replicated SampleDB (two instances) on PostgreSQL 15 with rows is raised to 17 and
// ends on 17 with the same per-table checksums on the primary and on the replica, the pre-upgrade backup Completed
// and named in the status (the locally built images: localhost/postgres:15 on Debian bookworm, :17 on trixie, so
// the old installation crosses distributions). The primary is moved to pod 1 first, so the operator has to hand it
// back to pod 0 (the volume the upgrade converts) before anything goes offline. One instance alone is the same path
// with nothing to hand over and no replica to re-clone: upgrade-faults.test.ts and migrations.test.ts run it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pollUntil } from '../../src/envtest/index.ts';
import { e2eSetup } from './support/cluster.ts';
import { ReplicatedDb } from './support/replication.ts';
import {
  apply,
  CHECKSUM_SQL,
  eventMessages,
  kubectlJson,
  kubectlOk,
  parseChecksums,
  patchSpec,
  SEED_SQL,
  sampleDb,
  sql,
  statusOf,
  tableChecksums,
  waitReady,
} from './support/sampledb.ts';

const { cluster, namespace } = await e2eSetup('e2e-upgrade');
const name = 'ledger';
const db = new ReplicatedDb(cluster, namespace, name);

/** psql inside an instance's own container (local trust), so a replica answers for itself. */
async function onInstance(pod: string, query: string): Promise<string> {
  const script = `psql -U postgres -d app -X -q -At -v ON_ERROR_STOP=1 <<'SQL'\n${query}\nSQL`;
  return (
    await kubectlOk(cluster, ['exec', '-n', namespace, pod, '-c', 'postgres', '--', 'sh', '-c', script])
  ).trim();
}

describe('major upgrade on a real node', () => {
  it('raises two instances from 15 to 17 with pg_upgrade: primary handed to pod 0, same rows on both, backup kept', async () => {
    await apply(cluster, [
      sampleDb(namespace, name, { version: '15', storage: { size: '1Gi' }, instances: 2 }),
    ]);
    await db.settled(300_000, { replicas: 1 });
    const before = await waitReady(cluster, namespace, name);
    assert.match(before.currentVersion ?? '', /^15\./);
    await sql(cluster, namespace, name, SEED_SQL);
    const checksums = await tableChecksums(cluster, namespace, name);
    assert.equal(Object.keys(checksums).length, 2);
    // The primary off pod 0, as after a failover.
    await db.switchoverTo(`${name}-1`);
    await pollUntil(
      'ledger-1 is the primary',
      async () => ((await db.replication()).primary === `${name}-1` ? true : undefined),
      { timeoutMs: 180_000, intervalMs: 1000 },
    );
    await db.settled(180_000, { replicas: 1 });

    const raisedAt = Date.now();
    await patchSpec(cluster, namespace, name, { version: '17' });
    const steps = new Set<string>();
    const status = await pollUntil(
      'the upgrade to 17 is done',
      async () => {
        const s = await statusOf(cluster, namespace, name);
        const upgrade = (s as { upgrade?: { step: string; message?: string } }).upgrade;
        if (upgrade) steps.add(upgrade.step);
        // A failed upgrade is settled too: end the wait and say why.
        return upgrade?.step === 'Failed' || (upgrade?.step === 'Done' && s.phase === 'Ready')
          ? s
          : undefined;
      },
      { timeoutMs: 900_000, intervalMs: 2000 },
    );
    const doneAt = Date.now();
    const upgrade = (status as { upgrade?: { step: string; message?: string } }).upgrade;
    assert.equal(upgrade?.step, 'Done', upgrade?.message);
    assert.match(status.currentVersion ?? '', /^17\./, 'the server reports 17');
    // The status is polled; a short step (the upgrade Job on a small database) can pass between two polls, its
    // Event cannot.
    for (const step of ['Backup', 'Switchover', 'Done'])
      assert.ok(steps.has(step), `saw step ${step}: ${[...steps]}`);
    const stepEvents = await eventMessages(cluster, namespace, 'UpgradeStep', 'Normal');
    for (const expected of [
      `Handing the primary over to ${name}-0`,
      `Job ${name}-upgrade-17-preflight`,
      `Job ${name}-upgrade-17-upgrade`,
      `Job ${name}-upgrade-17-cleanup`,
    ]) {
      assert.ok(
        stepEvents.some((m) => m.includes(expected)),
        `an UpgradeStep Event says "${expected}": ${stepEvents.join(' | ')}`,
      );
    }

    // The replica comes back on 17, cloned from the upgraded primary, and streams.
    const replication = await db.settled(300_000, { replicas: 1 });
    assert.equal(replication.primary, `${name}-0`);
    console.log(
      `UPGRADE (2 instances, primary on ${name}-1 at the start): spec raised -> Done ${Math.round((doneAt - raisedAt) / 1000)} s; ` +
        `Done -> the replica streaming on 17 ${Math.round((Date.now() - doneAt) / 1000)} s`,
    );
    assert.deepEqual(await tableChecksums(cluster, namespace, name), checksums);
    assert.match(await sql(cluster, namespace, name, 'SHOW server_version;'), /^17\./);
    assert.match(await onInstance(`${name}-1`, 'SHOW server_version;'), /^17\./);
    assert.equal(await onInstance(`${name}-1`, 'SELECT pg_is_in_recovery();'), 't');
    assert.deepEqual(
      parseChecksums(await onInstance(`${name}-1`, CHECKSUM_SQL)),
      checksums,
      'the replica holds the same rows',
    );
    const log = await cluster.kubectl(['logs', `${name}-1`, '-n', namespace, '-c', 'postgres']);
    assert.match(log.stdout, /the volume holds PostgreSQL 15 files, this server is 17: re-cloning/);
    const backup = await kubectlJson<{ status: { phase: string } }>(cluster, [
      'get',
      'sampledbbackup',
      `${name}-pre-upgrade-17`,
      '-n',
      namespace,
    ]);
    assert.equal(backup?.status.phase, 'Completed');
    const annotations = await kubectlJson<{ metadata: { annotations?: Record<string, string> } }>(cluster, [
      'get',
      'sampledb',
      name,
      '-n',
      namespace,
    ]);
    assert.equal(annotations?.metadata.annotations?.['sampledb.io/switchover-to'], undefined);
  });
});
