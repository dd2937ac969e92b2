import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ANNOTATIONS,
  LABELS,
  type SampleDbBackupObject,
  type SampleDbObject,
  type SampleDbSpec,
  TRIGGER_SCHEDULE,
} from '../../../src/api/index.ts';
import {
  decideRetention,
  decideSchedule,
  MAX_SCHEDULE_REQUEUE_MS,
  parseRetentionAge,
  type ScheduleDecision,
  scheduledBackup,
  scheduledBackupName,
} from '../../../src/sampledb/backup-schedule.ts';
import { resolveInstance } from '../../../src/sampledb/instance.ts';
import { sampleDb } from '../../support/sampledb.ts';

const CREATED = '2026-01-01T00:00:00Z';

function db(backup: SampleDbSpec['backup'], metadata: Partial<SampleDbObject['metadata']> = {}) {
  return sampleDb({ backup }, { creationTimestamp: CREATED, ...metadata });
}

const at = (iso: string) => new Date(iso);

function decide(
  backup: SampleDbSpec['backup'],
  now: string,
  options: {
    backups?: SampleDbBackupObject[];
    ready?: boolean;
    metadata?: Partial<SampleDbObject['metadata']>;
  } = {},
): ScheduleDecision {
  return decideSchedule({
    db: db(backup, options.metadata),
    ready: options.ready ?? true,
    backups: options.backups ?? [],
    now: at(now),
  });
}

function scheduled(decision: ScheduleDecision) {
  assert.equal(decision.kind, 'scheduled');
  return decision as Extract<ScheduleDecision, { kind: 'scheduled' }>;
}

/** A scheduled backup of `orders` for `slot`, as the step creates it. */
const taken = (slot: string) => {
  const b = scheduledBackup(
    resolveInstance(db({ schedule: '@daily' })),
    scheduledBackupName('orders', at(slot)),
    at(slot),
  );
  return b;
};

describe('decideSchedule: when a backup is due', () => {
  it('is due exactly at the slot and at any moment until the next one, with the same name', () => {
    const atSlot = scheduled(decide({ schedule: '0 3 * * *' }, '2026-02-10T03:00:00Z'));
    assert.equal(atSlot.due?.name, 'orders-202602100300');
    assert.equal(atSlot.due?.at.toISOString(), '2026-02-10T03:00:00.000Z');
    const later = scheduled(decide({ schedule: '0 3 * * *' }, '2026-02-10T17:42:13Z'));
    assert.equal(later.due?.name, 'orders-202602100300');
  });

  it('is not due once that slot was taken, and asks to come back at the next slot (capped at an hour)', () => {
    const decision = scheduled(
      decide({ schedule: '0 3 * * *' }, '2026-02-10T03:00:20Z', { backups: [taken('2026-02-10T03:00:00Z')] }),
    );
    assert.equal(decision.due, undefined);
    assert.equal(decision.next?.toISOString(), '2026-02-11T03:00:00.000Z');
    assert.equal(decision.requeueAfterMs, MAX_SCHEDULE_REQUEUE_MS);
    const soon = scheduled(
      decide({ schedule: '*/15 * * * *' }, '2026-02-10T03:10:00Z', {
        backups: [taken('2026-02-10T03:00:00Z')],
      }),
    );
    assert.equal(soon.due, undefined);
    assert.equal(soon.requeueAfterMs, 5 * 60_000);
  });

  it('does not backfill: after downtime only the latest missed slot is due', () => {
    const decision = scheduled(
      decide({ schedule: '0 * * * *' }, '2026-02-10T09:30:00Z', { backups: [taken('2026-02-10T03:00:00Z')] }),
    );
    assert.equal(decision.due?.name, 'orders-202602100900');
  });

  it('ignores slots before the SampleDB was created', () => {
    const decision = scheduled(
      decide({ schedule: '0 3 * * *' }, '2026-02-10T12:00:00Z', {
        metadata: { creationTimestamp: '2026-02-10T04:00:00Z' },
      }),
    );
    assert.equal(decision.due, undefined);
    assert.equal(decision.next?.toISOString(), '2026-02-11T03:00:00.000Z');
  });

  it("ignores another SampleDB's scheduled backups and on-demand backups of this one", () => {
    const other = { ...taken('2026-02-10T03:00:00Z'), spec: { sampleDB: { name: 'billing' } } };
    const onDemand = taken('2026-02-10T03:00:00Z');
    delete onDemand.metadata.labels?.[LABELS.trigger];
    const decision = scheduled(
      decide({ schedule: '0 3 * * *' }, '2026-02-10T04:00:00Z', { backups: [other, onDemand] }),
    );
    assert.equal(decision.due?.name, 'orders-202602100300');
  });

  it('schedules nothing when suspended, not Ready, being deleted, or without a schedule', () => {
    assert.deepEqual(decide({ schedule: '* * * * *', suspend: true }, '2026-02-10T04:00:00Z'), {
      kind: 'unscheduled',
      reason: 'Suspended',
    });
    assert.deepEqual(decide({ schedule: '* * * * *' }, '2026-02-10T04:00:00Z', { ready: false }), {
      kind: 'unscheduled',
      reason: 'NotReady',
    });
    assert.deepEqual(
      decide({ schedule: '* * * * *' }, '2026-02-10T04:00:00Z', {
        metadata: { deletionTimestamp: '2026-02-10T03:59:00Z' },
      }),
      { kind: 'unscheduled', reason: 'Deleting' },
    );
    assert.deepEqual(decide({}, '2026-02-10T04:00:00Z'), { kind: 'unscheduled', reason: 'NoSchedule' });
  });

  it('reports an expression or zone croner refuses instead of throwing', () => {
    assert.equal(decide({ schedule: '0 0 * * 9' }, '2026-02-10T04:00:00Z').kind, 'invalid');
    // Six fields would be seconds to croner; the API means five-field cron only.
    assert.equal(decide({ schedule: '0 0 3 * * *' }, '2026-02-10T04:00:00Z').kind, 'invalid');
    assert.equal(
      decide({ schedule: '0 3 * * *', timezone: 'Mars/Olympus' }, '2026-02-10T04:00:00Z').kind,
      'invalid',
    );
  });
});

describe('decideSchedule: cron, macros and time zones', () => {
  const next = (backup: SampleDbSpec['backup'], now: string) =>
    scheduled(decide(backup, now, { backups: [taken('2026-12-31T00:00:00Z')] })).next?.toISOString();
  const due = (backup: SampleDbSpec['backup'], now: string) => scheduled(decide(backup, now)).due?.name;

  it('reads macros', () => {
    assert.equal(next({ schedule: '@daily' }, '2026-02-10T04:00:00Z'), '2026-02-11T00:00:00.000Z');
    assert.equal(next({ schedule: '@midnight' }, '2026-02-10T04:00:00Z'), '2026-02-11T00:00:00.000Z');
    assert.equal(next({ schedule: '@hourly' }, '2026-02-10T04:10:00Z'), '2026-02-10T05:00:00.000Z');
    assert.equal(next({ schedule: '@weekly' }, '2026-02-10T04:00:00Z'), '2026-02-15T00:00:00.000Z'); // Sunday
    assert.equal(next({ schedule: '@monthly' }, '2026-02-10T04:00:00Z'), '2026-03-01T00:00:00.000Z');
    assert.equal(next({ schedule: '@yearly' }, '2026-02-10T04:00:00Z'), '2027-01-01T00:00:00.000Z');
    assert.equal(next({ schedule: '@annually' }, '2026-02-10T04:00:00Z'), '2027-01-01T00:00:00.000Z');
  });

  it('reads the schedule in its time zone and names the backup in UTC', () => {
    // 03:00 in Seoul (UTC+9, no DST) is 18:00 UTC the day before.
    assert.equal(
      next({ schedule: '0 3 * * *', timezone: 'Asia/Seoul' }, '2026-02-10T04:00:00Z'),
      '2026-02-10T18:00:00.000Z',
    );
    assert.equal(
      due({ schedule: '0 3 * * *', timezone: 'Asia/Seoul' }, '2026-02-10T20:00:00Z'),
      'orders-202602101800',
    );
  });

  it('follows Europe/Berlin across the spring-forward gap and the autumn overlap', () => {
    const berlin = { schedule: '30 2 * * *', timezone: 'Europe/Berlin' };
    // 2026-03-28 02:30 CET = 01:30 UTC; on 2026-03-29 02:30 does not exist: runs once at 03:00 CEST = 01:00 UTC.
    assert.equal(next(berlin, '2026-03-28T00:00:00Z'), '2026-03-28T01:30:00.000Z');
    assert.equal(next(berlin, '2026-03-28T02:00:00Z'), '2026-03-29T01:00:00.000Z');
    assert.equal(next(berlin, '2026-03-29T02:00:00Z'), '2026-03-30T00:30:00.000Z');
    // 2026-10-25 02:30 happens twice (CEST then CET): one backup, not two.
    assert.equal(next(berlin, '2026-10-24T12:00:00Z'), '2026-10-25T00:30:00.000Z');
    assert.equal(next(berlin, '2026-10-25T00:30:00Z'), '2026-10-26T01:30:00.000Z');
    assert.equal(due(berlin, '2026-10-25T02:00:00Z'), 'orders-202610250030');
  });

  it('keeps local wall-clock time in America/New_York across DST', () => {
    const ny = { schedule: '0 9 * * 1-5', timezone: 'America/New_York' };
    // Friday 2026-03-06 09:00 EST = 14:00 UTC; Monday 2026-03-09 09:00 EDT = 13:00 UTC.
    assert.equal(next(ny, '2026-03-06T12:00:00Z'), '2026-03-06T14:00:00.000Z');
    assert.equal(next(ny, '2026-03-06T15:00:00Z'), '2026-03-09T13:00:00.000Z');
  });

  it('treats day-of-month and day-of-week like cron: either matches', () => {
    // The 13th, or any Friday: 2026-02-13 is a Friday, 2026-02-20 a Friday, 2026-03-13 the 13th.
    assert.equal(next({ schedule: '0 0 13 * 5' }, '2026-02-14T00:00:00Z'), '2026-02-20T00:00:00.000Z');
  });
});

describe('scheduledBackup', () => {
  it('is named after the slot in UTC, labelled as scheduled and not owned by the SampleDB', () => {
    const b = scheduledBackup(
      resolveInstance(db({ schedule: '@daily' })),
      'orders-202602100300',
      at('2026-02-10T03:00:00Z'),
    );
    assert.equal(b.metadata.name, 'orders-202602100300');
    assert.equal(b.metadata.namespace, 'shop');
    assert.equal(b.metadata.labels?.[LABELS.trigger], TRIGGER_SCHEDULE);
    assert.equal(b.metadata.annotations?.[ANNOTATIONS.scheduledAt], '2026-02-10T03:00:00Z');
    assert.equal(b.metadata.ownerReferences, undefined);
    assert.deepEqual(b.spec, { sampleDB: { name: 'orders' }, method: 'pg_dump' });
    assert.equal(scheduledBackupName('orders', at('2026-12-31T23:59:59.999Z')), 'orders-202612312359');
  });
});

describe('decideRetention', () => {
  const NOW = at('2026-02-10T12:00:00Z');
  let seq = 0;
  const backup = (
    name: string,
    phase: 'Completed' | 'Failed' | 'Running' | 'Pending',
    time: string,
    extra: { labels?: Record<string, string>; dbName?: string; deleting?: boolean } = {},
  ): SampleDbBackupObject => ({
    apiVersion: 'sampledb.io/v1alpha1',
    kind: 'SampleDBBackup',
    metadata: {
      name,
      namespace: 'shop',
      uid: `uid-${seq++}`,
      creationTimestamp: time,
      ...(extra.labels ? { labels: extra.labels } : {}),
      ...(extra.deleting ? { deletionTimestamp: NOW.toISOString() } : {}),
    },
    spec: { sampleDB: { name: extra.dbName ?? 'orders' } },
    status: { phase, ...(phase === 'Completed' ? { completedAt: time } : {}) },
  });
  const retain = (
    retention: NonNullable<SampleDbSpec['backup']>['retention'],
    backups: SampleDbBackupObject[],
    sampleDbs: SampleDbObject[] = [],
  ) => decideRetention({ db: db({ schedule: '@daily', retention }), backups, sampleDbs, now: NOW });

  const days = (n: number) => new Date(NOW.getTime() - n * 86_400_000).toISOString();
  const daily = (n: number) => Array.from({ length: n }, (_, i) => backup(`d${i}`, 'Completed', days(i)));

  it('parses retention ages', () => {
    assert.equal(parseRetentionAge('30d'), 30 * 86_400_000);
    assert.equal(parseRetentionAge('12h'), 12 * 3_600_000);
    assert.equal(parseRetentionAge('15m'), 15 * 60_000);
    assert.equal(parseRetentionAge('15s'), undefined);
    assert.equal(parseRetentionAge('d'), undefined);
  });

  it('keeps everything without retention', () => {
    assert.deepEqual(retain(undefined, daily(5)).prune, []);
  });

  it('keeps the count newest, pruning the rest oldest first', () => {
    assert.deepEqual(retain({ count: 3 }, daily(6)).prune, ['d5', 'd4', 'd3']);
    assert.deepEqual(retain({ count: 6 }, daily(6)).prune, []);
  });

  it('prunes backups older than maxAge but always keeps the newest Completed one', () => {
    assert.deepEqual(retain({ maxAge: '2d' }, daily(5)).prune, ['d4', 'd3']);
    // Everything is too old: the newest still stays, so there is always something to restore.
    const old = [backup('old1', 'Completed', days(40)), backup('old2', 'Completed', days(50))];
    const decision = retain({ maxAge: '30d' }, old);
    assert.deepEqual(decision.prune, ['old2']);
    assert.equal(decision.newest, 'old1');
    assert.deepEqual(retain({ maxAge: '30d' }, [backup('only', 'Completed', days(400))]).prune, []);
  });

  it('applies count and maxAge together (either one prunes)', () => {
    assert.deepEqual(retain({ count: 4, maxAge: '2d' }, daily(6)).prune, ['d5', 'd4', 'd3']);
  });

  it('keeps the backup exactly maxAge old', () => {
    assert.deepEqual(retain({ maxAge: '1d' }, daily(2)).prune, []);
  });

  it('never prunes final deletion backups, other SampleDBs backups, or backups already being deleted', () => {
    const backups = [
      ...daily(2),
      backup('final', 'Completed', days(10), { labels: { [LABELS.finalForUid]: 'uid-of-old-orders' } }),
      backup('billing-old', 'Completed', days(10), { dbName: 'billing' }),
      backup('going', 'Completed', days(10), { deleting: true }),
    ];
    assert.deepEqual(retain({ count: 1 }, backups).prune, ['d1']);
  });

  it('never prunes a backup any SampleDB in the namespace restores from', () => {
    const restoring = sampleDb({ bootstrap: { fromBackup: { name: 'd3' } } }, { name: 'orders-copy' });
    assert.deepEqual(retain({ count: 1 }, daily(5), [restoring]).prune, ['d4', 'd2', 'd1']);
  });

  it('never prunes Pending or Running backups, or a Completed one without a completion time', () => {
    const noTime = backup('no-time', 'Completed', days(10));
    delete noTime.status?.completedAt;
    const backups = [
      ...daily(1),
      backup('pending', 'Pending', days(9)),
      backup('running', 'Running', days(8)),
      noTime,
    ];
    assert.deepEqual(retain({ count: 1 }, backups).prune, []);
  });

  it('prunes Failed backups created before the newest Completed one, keeps newer ones as evidence', () => {
    const backups = [
      backup('failed-new', 'Failed', days(0)),
      backup('ok', 'Completed', days(1)),
      backup('failed-old', 'Failed', days(2)),
    ];
    assert.deepEqual(retain({ count: 5 }, backups).prune, ['failed-old']);
    // Without any Completed backup nothing is pruned.
    assert.deepEqual(retain({ count: 1 }, [backup('f', 'Failed', days(3))]).prune, []);
  });

  it('deletes nothing when maxAge cannot be read', () => {
    assert.deepEqual(retain({ maxAge: 'forever' }, daily(5)).prune, []);
  });
});
