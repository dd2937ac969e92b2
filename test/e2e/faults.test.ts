// Scenario 6: faults. The database pod is deleted: the SampleDB says NotReady, then Ready again with its data. The
// leading operator pod is killed during a reconcile: the other replica takes the Lease and finishes the work.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LEADER_ELECTION_LEASE } from '../../src/api/index.ts';
import { pollUntil } from '../../src/envtest/index.ts';
import { e2eSetup } from './support/cluster.ts';
import { OPERATOR_NAMESPACE } from './support/install.ts';
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

const { cluster, namespace } = await e2eSetup('e2e-faults');

const leader = async (): Promise<string | undefined> =>
  (
    await kubectlJson<{ spec: { holderIdentity?: string } }>(cluster, [
      'get',
      'lease',
      LEADER_ELECTION_LEASE,
      '-n',
      OPERATOR_NAMESPACE,
    ])
  )?.spec.holderIdentity;

describe('faults on a real node', () => {
  it('a deleted database pod comes back with its data; the conditions say so honestly', async () => {
    await apply(cluster, [sampleDb(namespace, 'sturdy', { version: '15', storage: { size: '1Gi' } })]);
    await waitReady(cluster, namespace, 'sturdy');
    await sql(cluster, namespace, 'sturdy', SEED_SQL);
    const before = await tableChecksums(cluster, namespace, 'sturdy');
    await kubectlOk(cluster, ['delete', 'pod', 'sturdy-0', '-n', namespace, '--wait=false']);
    const down = await waitReady(cluster, namespace, 'sturdy', { want: 'False', timeoutMs: 60_000 });
    assert.notEqual(down.phase, 'Ready');
    await waitReady(cluster, namespace, 'sturdy');
    assert.deepEqual(await tableChecksums(cluster, namespace, 'sturdy'), before);
  });

  it('the standby replica takes over when the leader is killed mid-reconcile, and finishes', async () => {
    const first = await leader();
    assert.ok(first, 'a leader holds the Lease');
    // Work in flight: the leader starts creating the children of a new SampleDB...
    await apply(cluster, [sampleDb(namespace, 'handover', { version: '15', storage: { size: '1Gi' } })]);
    await pollUntil(
      'the leader started on it',
      async () =>
        (await kubectlJson(cluster, ['get', 'statefulset', 'handover', '-n', namespace])) ? true : undefined,
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    // ...and is killed at once (no graceful Lease release).
    await kubectlOk(cluster, [
      'delete',
      'pod',
      first,
      '-n',
      OPERATOR_NAMESPACE,
      '--grace-period=0',
      '--force',
    ]);
    const next = await pollUntil(
      'another replica holds the Lease',
      async () => {
        const holder = await leader();
        return holder && holder !== first ? holder : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    assert.notEqual(next, first);
    await waitReady(cluster, namespace, 'handover');
    assert.equal(await sql(cluster, namespace, 'handover', 'SELECT 1;'), '1');
  });
});
