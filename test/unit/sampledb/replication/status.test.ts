// status.replication.instances and the PrimaryAvailable / ReplicasReady conditions, from observations (pure).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MemberObservation } from '../../../../src/sampledb/failover/plan.ts';
import { instancesStatus, replicationConditions } from '../../../../src/sampledb/replication/status.ts';

const now = new Date('2026-01-01T12:00:00Z');
const member = (name: string, extra: Partial<MemberObservation>): MemberObservation => ({
  name,
  ordinal: Number(name.split('-').at(-1)),
  pod: 'running',
  ready: true,
  ...extra,
});
const primary = member('db-0', { sql: { inRecovery: false, lsn: 1000n, streaming: false } });
const streaming = member('db-1', { sql: { inRecovery: true, lsn: 900n, streaming: true } });
const notStreaming = member('db-2', {
  sql: { inRecovery: true, lsn: 400n, streaming: false },
  notStreamingSince: new Date('2026-01-01T11:59:50Z'),
});
const record = { primary: 'db-0', term: 3 };
const condition = (conditions: ReturnType<typeof replicationConditions>, type: string) =>
  conditions.find((c) => c.type === type);

describe('instancesStatus', () => {
  it('role, readiness, streaming and lag per instance; since when a replica does not stream', () => {
    const fresh = member('db-2', { sql: { inRecovery: true, lsn: 400n, streaming: false } });
    assert.deepEqual(instancesStatus(record, [primary, streaming, notStreaming], now), [
      { name: 'db-0', role: 'primary', ready: true },
      { name: 'db-1', role: 'replica', ready: true, streaming: true, lagBytes: 100 },
      {
        name: 'db-2',
        role: 'replica',
        ready: true,
        streaming: false,
        notStreamingSince: '2026-01-01T11:59:50Z',
        lagBytes: 600,
      },
    ]);
    assert.equal(
      instancesStatus(record, [primary, fresh], now)[1]?.notStreamingSince,
      '2026-01-01T12:00:00Z',
      'first seen now',
    );
  });

  it('an instance that does not answer is unknown and not ready; an absent pod is left out', () => {
    const silent = member('db-1', { ready: true });
    const absent = member('db-2', { pod: 'absent', ready: false });
    assert.deepEqual(instancesStatus(record, [primary, silent, absent], now), [
      { name: 'db-0', role: 'primary', ready: true },
      { name: 'db-1', role: 'unknown', ready: false },
    ]);
  });
});

describe('replicationConditions', () => {
  const steady = { kind: 'steady', term: 3 } as const;

  it('PrimaryAvailable and ReplicasReady True when the primary answers and every replica streams', () => {
    const conditions = replicationConditions(record, [primary, streaming], steady);
    assert.equal(condition(conditions, 'PrimaryAvailable')?.status, 'True');
    assert.equal(condition(conditions, 'PrimaryAvailable')?.reason, 'PrimaryReady');
    assert.equal(condition(conditions, 'ReplicasReady')?.status, 'True');
    assert.equal(condition(conditions, 'ReplicasReady')?.reason, 'ReplicasStreaming');
  });

  it('ReplicasReady False names a replica that does not stream', () => {
    const replicas = condition(
      replicationConditions(record, [primary, streaming, notStreaming], steady),
      'ReplicasReady',
    );
    assert.equal(replicas?.status, 'False');
    assert.equal(replicas?.reason, 'ReplicasNotReady');
    assert.match(replicas?.message ?? '', /db-2/);
    assert.doesNotMatch(replicas?.message ?? '', /db-1/);
  });

  it('PrimaryAvailable False while failing over or switching over, with the reason', () => {
    const failover = { ...record, handover: { from: 'db-9', reason: 'Failover' as const } };
    const during = condition(replicationConditions(failover, [primary], steady), 'PrimaryAvailable');
    assert.equal(during?.status, 'False');
    assert.equal(during?.reason, 'FailingOver');
    const switchover = { ...record, handover: { from: 'db-9', reason: 'Switchover' as const, lsn: 5n } };
    assert.equal(
      condition(replicationConditions(switchover, [primary], steady), 'PrimaryAvailable')?.reason,
      'SwitchingOver',
    );
    const down = member('db-0', { ready: false });
    const wait = { kind: 'wait', term: 3, why: 'primary db-0 unavailable for 2s' } as const;
    const unavailable = condition(replicationConditions(record, [down], wait), 'PrimaryAvailable');
    assert.equal(unavailable?.reason, 'PrimaryUnavailable');
    assert.match(unavailable?.message ?? '', /unavailable for 2s/);
  });
});
