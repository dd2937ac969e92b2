// Replicas on a real node (issue 13, ADR 0008): three instances, a client writing numbered rows through the client
// (read-write) Service, the primary pod deleted: a replica is promoted and writes resume; the time from the kill to
// the first successful write after it is printed. Then a switchover by annotation loses no acknowledged row and the
// old primary streams again as a replica; then the leading operator is killed with the primary.
// Synchronous replication and scaling: replication-sync.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LEADER_ELECTION_LEASE } from '../../src/api/index.ts';
import { e2eSetup } from './support/cluster.ts';
import { OPERATOR_NAMESPACE } from './support/install.ts';
import { downtime, parseWrites, ReplicatedDb, WRITER } from './support/replication.ts';
import { apply, kubectlJson, kubectlOk, runClient, sampleDb, sql } from './support/sampledb.ts';

const { cluster, namespace } = await e2eSetup('e2e-replicas');
const NAME = 'ha';
const db = new ReplicatedDb(cluster, namespace, NAME);
/** The later scenarios need a working failover; without one they would only time out again. */
let failedOver = false;
/** The primary the failover replaced: it rejoins as a replica and is the switchover's target. */
let rejoined: string | undefined;

describe('replicas with an operator-elected primary on a real node', () => {
  it('three instances: one primary, two streaming replicas', async () => {
    await apply(cluster, [
      sampleDb(namespace, NAME, { version: '15', storage: { size: '1Gi' }, instances: 3 }),
    ]);
    const r = await db.settled(300_000);
    assert.equal(r.primary, `${NAME}-0`);
    await sql(cluster, namespace, NAME, 'CREATE TABLE numbered (n bigint PRIMARY KEY);');
    const ro = await kubectlJson<{ subsets?: { addresses?: unknown[] }[] }>(cluster, [
      'get',
      'endpoints',
      `${NAME}-ro`,
      '-n',
      namespace,
    ]);
    assert.equal(ro?.subsets?.[0]?.addresses?.length, 2, 'the -ro Service selects the two replicas');
    const { conditions } = await db.status();
    const condition = (type: string) => conditions.find((c) => c.type === type);
    assert.equal(condition('PrimaryAvailable')?.status, 'True');
    assert.equal(condition('ReplicasReady')?.status, 'True');
    assert.equal(condition('ReplicasReady')?.reason, 'ReplicasStreaming');
    assert.equal(condition('Ready')?.status, 'True');
  });

  it('the primary pod is deleted: a replica is promoted and writes resume', async () => {
    const before = await db.replication();
    const client = runClient(cluster, namespace, NAME, WRITER(45), { timeoutMs: 120_000 });
    await db.written(50);
    const killedAt = Date.now();
    await kubectlOk(cluster, ['delete', 'pod', String(before.primary), '-n', namespace, '--wait=false']);
    // Every replica streaming again, the old primary among them.
    const after = await db.settled(240_000, { notPrimary: before.primary });
    assert.ok((after.term ?? 0) > (before.term ?? 0), 'a new term');
    const result = await client;
    assert.equal(result.phase, 'Succeeded');
    const writes = parseWrites(result.logs);
    const downtimeMs = downtime(writes, killedAt);
    assert.ok(downtimeMs !== undefined, 'writes resumed');
    const acknowledged = writes.filter((w) => w.ok).map((w) => w.n);
    const lost = await db.lost(acknowledged);
    console.log(
      `FAILOVER: primary ${before.primary} -> ${after.primary} (term ${before.term} -> ${after.term}); ` +
        `kill -> first successful write: ${downtimeMs} ms; ${acknowledged.length} rows acknowledged, ${lost.length} lost`,
    );
    console.log(`REJOINED ${before.primary}: ${await db.rejoinReport(String(before.primary))}`);
    failedOver = true;
    rejoined = before.primary;
    assert.ok(downtimeMs < 15_000, `failover took ${downtimeMs} ms`);
    const elected = (await db.electionEvents()).filter(
      (e) => e.reason === 'PrimaryElected' && e.note?.includes(`term ${after.term}:`),
    );
    assert.equal(elected.length, 1, 'one PrimaryElected Event for the new term');
    assert.match(elected[0]?.note ?? '', new RegExp(`Failover, replacing ${before.primary}`));
  });

  it('a switchover by annotation loses no acknowledged row; the old primary streams again as a replica, not re-cloned', {
    // The run of 2026-12-04 03:53 UTC lost 1 acknowledged row of 670 (the scenario was a todo then): the standbys
    // streamed through the client Service, whose endpoint the fence removed before the old primary's shutdown had
    // sent its last WAL, and the target was promoted below it. Now they stream from the primary's pod and the
    // target is promoted only once it has the old primary's final WAL (ADR 0008).
  }, async (t) => {
    if (!failedOver) return t.skip('no failover happened');
    const before = await db.settled(120_000);
    // The old primary of the failover, which rejoined as a replica: the case the real node once refused.
    const target = rejoined;
    assert.ok(
      before.instances?.some((i) => i.name === target && i.role === 'replica' && i.streaming),
      `${target} streams as a replica`,
    );
    const reclonedBefore = await db.reclones(String(before.primary));
    await sql(cluster, namespace, NAME, 'TRUNCATE numbered;');
    const client = runClient(cluster, namespace, NAME, WRITER(30), { timeoutMs: 120_000 });
    await db.written(0);
    const startedAt = Date.now();
    await db.switchoverTo(String(target));
    const after = await db.settled(180_000, { notPrimary: before.primary });
    assert.equal(after.primary, target);
    const result = await client;
    const writes = parseWrites(result.logs);
    const acknowledged = writes.filter((w) => w.ok).map((w) => w.n);
    const lost = await db.lost(acknowledged);
    console.log(
      `SWITCHOVER: ${before.primary} -> ${after.primary} (term ${before.term} -> ${after.term}); ` +
        `annotation -> first successful write after the handover: ${downtime(writes, startedAt)} ms; ` +
        `${acknowledged.length} acknowledged, ${lost.length} lost`,
    );
    console.log(`REJOINED ${before.primary}: ${await db.rejoinReport(String(before.primary))}`);
    assert.deepEqual(lost, []);
    const reclones = (await db.reclones(String(before.primary))) - reclonedBefore;
    console.log(`SWITCHOVER: re-clones of the old primary during it: ${reclones}`);
    assert.equal(reclones, 0, 'the old primary follows the new one without a re-clone');
    const old = after.instances?.find((i) => i.name === before.primary);
    assert.deepEqual(
      { role: old?.role, ready: old?.ready, streaming: old?.streaming },
      { role: 'replica', ready: true, streaming: true },
      'the old primary streams from the new one',
    );
    const annotations = await kubectlJson<{ metadata: { annotations?: Record<string, string> } }>(cluster, [
      'get',
      'sampledb',
      NAME,
      '-n',
      namespace,
    ]);
    assert.equal(
      annotations?.metadata.annotations?.['sampledb.io/switchover-to'],
      undefined,
      'the operator removed the done request',
    );
  });

  it('the leading operator is killed with the primary: the next leader finishes the failover, one promotion', async (t) => {
    if (!failedOver) return t.skip('no failover happened');
    const before = await db.settled(120_000);
    const lease = await kubectlJson<{ spec: { holderIdentity?: string } }>(cluster, [
      'get',
      'lease',
      LEADER_ELECTION_LEASE,
      '-n',
      OPERATOR_NAMESPACE,
    ]);
    const leader = lease?.spec.holderIdentity;
    assert.ok(leader);
    await kubectlOk(cluster, ['delete', 'pod', String(before.primary), '-n', namespace, '--wait=false']);
    await kubectlOk(cluster, [
      'delete',
      'pod',
      leader,
      '-n',
      OPERATOR_NAMESPACE,
      '--grace-period=0',
      '--force',
    ]);
    const after = await db.settled(240_000, { notPrimary: before.primary });
    assert.equal(after.term, (before.term ?? 0) + 1, 'exactly one election');
    const promotions = (await db.electionEvents()).filter(
      (e) => e.reason === 'PrimaryPromoted' && e.note?.includes(`term ${after.term}`),
    );
    assert.equal(promotions.length, 1, 'one promotion in the new term');
    assert.equal(
      promotions[0]?.series?.count ?? 1,
      1,
      'not repeated (a repeat would be counted in its series)',
    );
    console.log(
      `OPERATOR KILLED MID-FAILOVER: ${before.primary} -> ${after.primary}, term ${before.term} -> ${after.term}`,
    );
  });
});
