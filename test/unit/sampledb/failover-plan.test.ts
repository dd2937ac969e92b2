import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inspect } from 'node:util';
import {
  type ElectionRecord,
  formatLsn,
  lagBytes,
  type MemberObservation,
  NOBODY,
  parseLsn,
  planReplication,
  type ReplicationAction,
  type ReplicationObservation,
  rankCandidates,
  stillCurrent,
} from '../../../src/sampledb/failover/plan.ts';

const now = new Date('2026-01-01T12:00:00Z');
const secondsAgo = (s: number) => new Date(now.getTime() - s * 1000);

const primary = (name: string, lsn: bigint, extra: Partial<MemberObservation> = {}): MemberObservation => ({
  name,
  ordinal: Number(name.split('-').at(-1)),
  pod: 'running',
  ready: true,
  roleLabel: 'primary',
  termLabel: 1,
  sql: { inRecovery: false, lsn, streaming: false },
  ...extra,
});
const replica = (name: string, lsn: bigint, extra: Partial<MemberObservation> = {}): MemberObservation => ({
  name,
  ordinal: Number(name.split('-').at(-1)),
  pod: 'running',
  ready: true,
  roleLabel: 'replica',
  termLabel: 1,
  sql: { inRecovery: true, lsn, streaming: true },
  ...extra,
});
const gone = (name: string, extra: Partial<MemberObservation> = {}): MemberObservation => ({
  name,
  ordinal: Number(name.split('-').at(-1)),
  pod: 'absent',
  ready: false,
  ...extra,
});

/** The observation with the record already published as the planner publishes it (NOBODY while the primary leaves). */
function observation(overrides: Partial<ReplicationObservation> = {}): ReplicationObservation {
  const record: ElectionRecord = overrides.record ?? { primary: 'db-0', term: 1 };
  const members = overrides.members ?? [primary('db-0', 300n), replica('db-1', 300n), replica('db-2', 300n)];
  const recorded = members.find((m) => m.name === record.primary);
  const leaving =
    (recorded?.pod === 'terminating' || recorded?.pod === 'absent') &&
    members.some((m) => m !== recorded && m.pod !== 'absent');
  return {
    instances: 3,
    failoverDelayMs: 5000,
    rejoinAfterMs: 30_000,
    switchoverTimeoutMs: 60_000,
    published: record.primary ? { primary: leaving ? NOBODY : record.primary, term: record.term } : undefined,
    members,
    now,
    ...overrides,
    record,
  };
}
const next = (overrides: Partial<ReplicationObservation> = {}) =>
  planReplication(observation(overrides)).next;

describe('LSNs', () => {
  it('parses and prints PostgreSQL LSNs', () => {
    assert.equal(parseLsn('0/0'), 0n);
    assert.equal(parseLsn('16/B374D848'), (0x16n << 32n) + 0xb374d848n);
    assert.equal(formatLsn(parseLsn('16/B374D848')), '16/B374D848');
    assert.throws(() => parseLsn('16B374D848'), /not an LSN/);
  });

  it('lag is primary LSN minus replica LSN, never negative, only for standbys behind a primary', () => {
    assert.equal(lagBytes(primary('db-0', 1000n), replica('db-1', 400n)), 600);
    assert.equal(lagBytes(primary('db-0', 1000n), replica('db-1', 1200n)), 0);
    assert.equal(lagBytes(primary('db-0', 1000n), primary('db-1', 10n)), undefined);
    assert.equal(lagBytes(gone('db-0'), replica('db-1', 10n)), undefined);
  });
});

describe('planReplication: bootstrap and steady state', () => {
  it('elects ordinal 0 in term 1 when there is no record', () => {
    const members = [gone('db-0'), gone('db-1'), gone('db-2')];
    assert.deepEqual(next({ record: { term: 0 }, members }), {
      kind: 'elect',
      term: 1,
      primary: 'db-0',
      reason: 'Bootstrap',
    });
  });

  it('elects the instance already running as a primary (a SampleDB scaled up from one pod)', () => {
    const members = [replica('db-0', 5n), primary('db-1', 9n, { roleLabel: undefined })];
    assert.equal((next({ record: { term: 0 }, members }) as { primary: string }).primary, 'db-1');
  });

  it('refuses to choose between two running primaries without a record', () => {
    const members = [primary('db-0', 5n), primary('db-1', 9n)];
    const action = next({ record: { term: 0 }, members });
    assert.equal(action.kind, 'wait');
    assert.match((action as { why: string }).why, /db-0 and db-1 both run as primaries/);
  });

  it('publishes the record to the pods before anything else', () => {
    const cases: ReplicationObservation['published'][] = [
      undefined,
      { primary: 'db-0', term: 0 },
      { primary: 'db-1', term: 1 },
    ];
    for (const published of cases) {
      assert.deepEqual(
        next({ published }),
        { kind: 'publish', term: 1, primary: 'db-0' },
        JSON.stringify(published),
      );
    }
  });

  it('is steady with a labelled primary and streaming replicas', () => {
    assert.deepEqual(next(), { kind: 'steady', term: 1 });
  });

  it('labels the primary with the current term, then every unlabelled standby', () => {
    assert.deepEqual(
      next({ members: [primary('db-0', 1n, { roleLabel: undefined }), replica('db-1', 1n)] }),
      {
        kind: 'label',
        term: 1,
        pod: 'db-0',
        role: 'primary',
      },
    );
    assert.equal(
      next({ record: { primary: 'db-0', term: 2 }, members: [primary('db-0', 1n)] }).kind,
      'label',
      'labelled in an older term',
    );
    assert.deepEqual(
      next({ members: [primary('db-0', 1n), replica('db-1', 1n, { roleLabel: undefined })] }),
      {
        kind: 'label',
        term: 1,
        pod: 'db-1',
        role: 'replica',
      },
    );
  });

  it('rejoins a standby that is ahead of the primary and not streaming, and only that one', () => {
    const members = [
      primary('db-0', 100n),
      replica('db-1', 150n, { sql: { inRecovery: true, lsn: 150n, streaming: false } }),
    ];
    assert.equal(next({ members }).kind, 'rejoin');
    const behind = [
      primary('db-0', 100n),
      replica('db-1', 50n, { sql: { inRecovery: true, lsn: 50n, streaming: false } }),
    ];
    assert.equal(next({ members: behind }).kind, 'steady');
  });

  it('re-clones a standby behind the primary that has not streamed for the bound, not before', () => {
    const stuck = (since: Date | undefined) => [
      primary('db-0', 900n),
      replica('db-1', 50n, {
        sql: { inRecovery: true, lsn: 50n, streaming: false },
        ...(since ? { notStreamingSince: since } : {}),
      }),
      replica('db-2', 900n),
    ];
    assert.equal(next({ members: stuck(undefined) }).kind, 'steady', 'first seen not streaming');
    assert.equal(next({ members: stuck(secondsAgo(29)) }).kind, 'steady', 'within the bound');
    assert.deepEqual(next({ members: stuck(secondsAgo(31)) }), {
      kind: 'rejoin',
      term: 1,
      pod: 'db-1',
      why: 'it has answered without streaming from the primary for 31s',
    });
  });

  it('never re-clones while the primary is unavailable or a handover is under way', () => {
    const notStreaming = replica('db-1', 50n, {
      sql: { inRecovery: true, lsn: 50n, streaming: false },
      notStreamingSince: secondsAgo(300),
    });
    const down = next({
      members: [primary('db-0', 900n, { ready: false }), notStreaming, replica('db-2', 900n)],
    });
    assert.notEqual(down.kind, 'rejoin');
    const handover = next({
      record: { primary: 'db-2', term: 2, handover: { from: 'db-0', reason: 'Switchover', lsn: 900n } },
      members: [replica('db-0', 900n), notStreaming, replica('db-2', 900n)],
    });
    assert.notEqual(handover.kind, 'rejoin');
  });
});

describe('planReplication: publishing', () => {
  it('publishes nobody while the primary’s pod is being deleted or gone, so its new pod starts as a standby', () => {
    const record = { primary: 'db-0', term: 1 };
    const published = { primary: 'db-0', term: 1 };
    for (const pod of ['terminating', 'absent'] as const) {
      const members = [gone('db-0', { pod }), replica('db-1', 300n), replica('db-2', 300n)];
      assert.deepEqual(next({ record, published, members }), { kind: 'publish', term: 1, primary: NOBODY });
    }
    // A lone instance has no one to lose to: its name stays published.
    assert.equal(
      next({ record, published, members: [gone('db-0', { pod: 'terminating' })] }).kind,
      'mark-unavailable',
    );
    // The recorded primary back as a standby (it started while nobody was published): its name again, then promoted.
    const back = [
      replica('db-0', 300n, { roleLabel: undefined, termLabel: undefined }),
      replica('db-1', 300n),
    ];
    assert.deepEqual(next({ record, published: { primary: NOBODY, term: 1 }, members: back }), {
      kind: 'publish',
      term: 1,
      primary: 'db-0',
    });
    assert.deepEqual(next({ record, published, members: back }), { kind: 'promote', term: 1, pod: 'db-0' });
  });
});

describe('planReplication: fencing', () => {
  it('deletes an instance that answers as a primary but is not the elected one', () => {
    const members = [primary('db-0', 1n), primary('db-1', 1n, { roleLabel: undefined })];
    assert.deepEqual(next({ members }), {
      kind: 'fence',
      term: 1,
      pod: 'db-1',
      deletePod: true,
      why: 'it is not the elected primary',
    });
  });

  it('takes the primary label off a standby or a terminating pod that is not elected, without deleting it', () => {
    for (const stale of [
      replica('db-1', 1n, { roleLabel: 'primary' }),
      gone('db-1', { pod: 'terminating', roleLabel: 'primary' }),
    ]) {
      const action = next({ members: [primary('db-0', 1n), stale] });
      assert.equal(action.kind, 'fence');
      assert.equal((action as { deletePod: boolean }).deletePod, false);
    }
  });

  it('deletes the old primary of a handover while it runs, even when it does not answer', () => {
    const record = { primary: 'db-1', term: 2, handover: { from: 'db-0', reason: 'Failover' as const } };
    const hung = primary('db-0', 1n, { ready: false, sql: undefined, roleLabel: undefined, termLabel: 1 });
    assert.deepEqual(next({ record, members: [hung, replica('db-1', 1n)] }), {
      kind: 'fence',
      term: 2,
      pod: 'db-0',
      deletePod: true,
      why: 'it is not the elected primary',
    });
    // The pod the StatefulSet created in its place carries no term: it is left to start as a standby.
    const recreated = gone('db-0', { pod: 'running', roleLabel: undefined, termLabel: undefined });
    assert.deepEqual(next({ record, members: [recreated, replica('db-1', 1n)] }), {
      kind: 'promote',
      term: 2,
      pod: 'db-1',
    });
  });
});

describe('planReplication: failover', () => {
  const lost = [
    gone('db-0', { pod: 'terminating', roleLabel: 'primary' }),
    replica('db-1', 300n),
    replica('db-2', 500n),
  ];

  it('records when the primary was first seen unavailable', () => {
    for (const old of [
      gone('db-0'),
      gone('db-0', { pod: 'terminating' }),
      primary('db-0', 1n, { ready: false }),
      primary('db-0', 1n, { sql: undefined }),
    ]) {
      const action = next({ members: [old, replica('db-1', 1n)] });
      assert.deepEqual(action, { kind: 'mark-unavailable', term: 1, since: now }, inspect(old));
    }
  });

  it('a primary pod gone or replaced by a fresh one is failed over at once; a terminating one once gone', () => {
    const fresh = primary('db-0', 1n, {
      ready: false,
      sql: undefined,
      roleLabel: undefined,
      termLabel: undefined,
    });
    for (const old of [gone('db-0'), fresh]) {
      const action = next({
        record: { primary: 'db-0', term: 1, primaryUnavailableSince: secondsAgo(0) },
        members: [old, replica('db-1', 300n), replica('db-2', 500n)],
      });
      assert.equal(action.kind, 'elect', inspect(old));
    }
    const terminating = gone('db-0', { pod: 'terminating', roleLabel: 'primary', termLabel: 1 });
    const members = [terminating, replica('db-1', 300n), replica('db-2', 500n)];
    const early = next({
      record: { primary: 'db-0', term: 1, primaryUnavailableSince: secondsAgo(1) },
      members,
    });
    assert.equal(early.kind, 'wait', 'its shutdown is still sending WAL');
    const late = next({
      record: { primary: 'db-0', term: 1, primaryUnavailableSince: secondsAgo(5) },
      members,
    });
    assert.equal(late.kind, 'elect', 'stuck terminating: the delay bounds the wait');
  });

  it('waits out the delay for a primary that runs but is not ready, then elects the most advanced replica', () => {
    const hung = [primary('db-0', 1n, { ready: false }), replica('db-1', 300n), replica('db-2', 500n)];
    const waiting = next({
      record: { primary: 'db-0', term: 1, primaryUnavailableSince: secondsAgo(2) },
      members: hung,
    });
    assert.equal(waiting.kind, 'wait');
    assert.equal((waiting as { retryInMs: number }).retryInMs, 3000);
    const elected = next({
      record: { primary: 'db-0', term: 1, primaryUnavailableSince: secondsAgo(5) },
      members: hung,
    });
    assert.deepEqual(elected, {
      kind: 'elect',
      term: 2,
      primary: 'db-2',
      reason: 'Failover',
      handover: { from: 'db-0', reason: 'Failover' },
    });
  });

  it('clears the mark when the primary comes back within the delay', () => {
    assert.deepEqual(next({ record: { primary: 'db-0', term: 1, primaryUnavailableSince: secondsAgo(2) } }), {
      kind: 'clear-unavailable',
      term: 1,
    });
  });

  it('ranks candidates by WAL, then ordinal; only standbys that answer qualify', () => {
    const members = [
      gone('db-0'),
      replica('db-1', 700n),
      replica('db-2', 900n, { sql: undefined }),
      replica('db-3', 700n),
      primary('db-4', 1000n),
      replica('db-5', 10n, { pod: 'terminating' }),
    ];
    assert.deepEqual(
      rankCandidates(members, 'db-0').map((m) => m.name),
      ['db-1', 'db-3'],
    );
  });

  it('waits when no replica answers', () => {
    const action = next({
      record: { primary: 'db-0', term: 1, primaryUnavailableSince: secondsAgo(60) },
      members: [gone('db-0'), replica('db-1', 1n, { sql: undefined })],
    });
    assert.equal(action.kind, 'wait');
  });

  it('fences, promotes the elected one, completes the handover, then labels it', () => {
    const handover = { from: 'db-0', reason: 'Failover' as const };
    const record = { primary: 'db-2', term: 2, handover };
    assert.equal(next({ record, members: lost }).kind, 'fence');
    const fenced = [gone('db-0', { pod: 'terminating' }), replica('db-1', 300n), replica('db-2', 500n)];
    assert.deepEqual(next({ record, members: fenced }), { kind: 'promote', term: 2, pod: 'db-2' });
    const promoted = [gone('db-0'), replica('db-1', 300n), primary('db-2', 510n, { roleLabel: 'replica' })];
    assert.deepEqual(next({ record, members: promoted }), {
      kind: 'complete-handover',
      term: 2,
      primary: 'db-2',
      handover,
    });
    assert.deepEqual(next({ record: { primary: 'db-2', term: 2 }, members: promoted }), {
      kind: 'label',
      term: 2,
      pod: 'db-2',
      role: 'primary',
    });
  });

  it('never promotes while another instance answers as a primary', () => {
    const record = { primary: 'db-1', term: 2, handover: { from: 'db-0', reason: 'Failover' as const } };
    const action = next({
      record,
      members: [primary('db-0', 1n, { roleLabel: undefined }), replica('db-1', 1n)],
    });
    assert.equal(action.kind, 'fence');
  });

  it('elects again in a new term when the candidate is lost before its promotion', () => {
    const record = {
      primary: 'db-1',
      term: 2,
      handover: { from: 'db-0', reason: 'Failover' as const },
      primaryUnavailableSince: secondsAgo(10),
    };
    const action = next({ record, members: [gone('db-0'), gone('db-1'), replica('db-2', 1n)] });
    assert.deepEqual(action, {
      kind: 'elect',
      term: 3,
      primary: 'db-2',
      reason: 'Failover',
      handover: { from: 'db-1', reason: 'Failover' },
    });
  });
});

describe('planReplication: switchover and scaling', () => {
  it('hands over to a ready streaming replica with the old primary’s LSN as the handover point', () => {
    assert.deepEqual(next({ switchoverTo: 'db-1' }), {
      kind: 'elect',
      term: 2,
      primary: 'db-1',
      reason: 'Switchover',
      handover: { from: 'db-0', reason: 'Switchover', lsn: 300n },
    });
    assert.deepEqual(
      next({ switchoverTo: 'db-0' }),
      { kind: 'clear-switchover', term: 1, target: 'db-0' },
      'already the primary: the request is done and its annotation removed',
    );
  });

  it('refuses a switchover to an instance that cannot take over, saying why', () => {
    const cases: [string, MemberObservation[], RegExp][] = [
      ['db-7', [primary('db-0', 1n)], /no such instance/],
      ['db-1', [primary('db-0', 1n), replica('db-1', 1n, { ready: false })], /not running and Ready/],
      ['db-1', [primary('db-0', 1n), replica('db-1', 1n, { sql: undefined })], /does not answer/],
      [
        'db-1',
        [primary('db-0', 1n), replica('db-1', 1n, { sql: { inRecovery: true, lsn: 1n, streaming: false } })],
        /not streaming/,
      ],
    ];
    for (const [target, members, why] of cases) {
      const action = next({ switchoverTo: target, members });
      assert.equal(action.kind, 'refuse-switchover', target);
      assert.match((action as { why: string }).why, why);
    }
  });

  it('a switchover step by step: observations -> next action', () => {
    const handover = { from: 'db-0', reason: 'Switchover' as const, lsn: 500n };
    const started = { primary: 'db-1', term: 2, handover };
    const waiting = { ...started, primaryUnavailableSince: secondsAgo(3) };
    // The old primary restarted as a standby: before it streams, its receive LSN is the start of its last segment
    // and its replay LSN the end of its shutdown checkpoint (measured on PostgreSQL 15: 0/4000000 and 0/401BD40).
    const oldAsStandby = (replayLsn: bigint) =>
      replica('db-0', 0x4000000n, {
        roleLabel: undefined,
        termLabel: undefined,
        sql: { inRecovery: true, lsn: 0x4000000n, replayLsn, streaming: false },
      });
    const target = (lsn: bigint) => replica('db-1', lsn);
    const cases: [string, Partial<ReplicationObservation>, ReplicationAction | RegExp][] = [
      [
        'the request: a new term naming the target',
        { switchoverTo: 'db-1' },
        {
          kind: 'elect',
          term: 2,
          primary: 'db-1',
          reason: 'Switchover',
          handover: { ...handover, lsn: 300n },
        },
      ],
      [
        'elected, not yet published',
        {
          record: started,
          published: { primary: 'db-0', term: 1 },
          members: [primary('db-0', 600n), target(600n)],
        },
        { kind: 'publish', term: 2, primary: 'db-1' },
      ],
      [
        'published: the old primary is fenced, its pod deleted',
        { record: started, members: [primary('db-0', 600n), target(600n)] },
        { kind: 'fence', term: 2, pod: 'db-0', deletePod: true, why: 'it is not the elected primary' },
      ],
      [
        'fenced: the start of the wait is recorded (it bounds the switchover)',
        { record: started, members: [gone('db-0', { pod: 'terminating' }), target(600n)] },
        { kind: 'mark-unavailable', term: 2, since: now },
      ],
      [
        'the old primary shuts down',
        { record: waiting, members: [gone('db-0', { pod: 'terminating' }), target(600n)] },
        /db-0 is shutting down; its last WAL must reach db-1/,
      ],
      [
        'its pod is gone, not yet recreated',
        { record: waiting, members: [gone('db-0'), target(0x401bd40n)] },
        /db-0 has stopped; waiting for it to answer as a standby/,
      ],
      [
        'recreated, not answering yet',
        { record: waiting, members: [gone('db-0', { pod: 'running' }), target(0x401bd40n)] },
        /db-0 has stopped; waiting for it to answer as a standby/,
      ],
      [
        'back as a standby, the target short of its final WAL',
        { record: waiting, members: [oldAsStandby(0x401bd40n), target(0x401bcc8n)] },
        /db-1 has received WAL up to 0\/401BCC8, not the final 0\/401BD40 of db-0 \(3s of 60s\)/,
      ],
      [
        'the target has the final WAL: promote it',
        { record: waiting, members: [oldAsStandby(0x401bd40n), target(0x401bd40n)] },
        { kind: 'promote', term: 2, pod: 'db-1' },
      ],
      [
        'promoted: the handover is complete',
        {
          record: waiting,
          members: [oldAsStandby(0x401bd40n), primary('db-1', 0x401be00n, { roleLabel: 'replica' })],
        },
        { kind: 'complete-handover', term: 2, primary: 'db-1', handover },
      ],
      [
        'complete: the done request is removed',
        {
          record: { primary: 'db-1', term: 2 },
          switchoverTo: 'db-1',
          members: [oldAsStandby(0x401bd40n), primary('db-1', 0x401be00n, { roleLabel: 'replica' })],
        },
        { kind: 'clear-switchover', term: 2, target: 'db-1' },
      ],
      [
        'then the new primary is labelled',
        {
          record: { primary: 'db-1', term: 2 },
          members: [oldAsStandby(0x401bd40n), primary('db-1', 0x401be00n, { roleLabel: 'replica' })],
        },
        { kind: 'label', term: 2, pod: 'db-1', role: 'primary' },
      ],
    ];
    for (const [what, overrides, expected] of cases) {
      const action = next(overrides);
      if (expected instanceof RegExp) {
        assert.equal(action.kind, 'wait', what);
        assert.match((action as { why: string }).why, expected, what);
      } else {
        assert.deepEqual(action, expected, what);
      }
    }
  });

  it('a target that never gets the final WAL: aborted after the bound, the old primary elected back', () => {
    const record = {
      primary: 'db-1',
      term: 2,
      handover: { from: 'db-0', reason: 'Switchover' as const, lsn: 500n },
      primaryUnavailableSince: secondsAgo(60),
    };
    const old = replica('db-0', 0n, {
      roleLabel: undefined,
      termLabel: undefined,
      sql: { inRecovery: true, lsn: 0n, replayLsn: 900n, streaming: false },
    });
    const members = [old, replica('db-1', 800n), replica('db-2', 800n)];
    const why =
      'db-1 has received WAL up to 0/320, not the final 0/384 of db-0 after 60s; db-0 is elected back';
    assert.deepEqual(
      next({ record, members, switchoverTo: 'db-1' }),
      { kind: 'abort-switchover', term: 2, target: 'db-1', why },
      'the request goes first, so it is not started again',
    );
    assert.deepEqual(next({ record, members }), {
      kind: 'elect',
      term: 3,
      primary: 'db-0',
      reason: 'SwitchoverAborted',
      why,
    });
    assert.equal(
      next({ record: { ...record, primaryUnavailableSince: secondsAgo(59) }, members }).kind,
      'wait',
      'not before the bound',
    );
    // Elected back: it is a standby holding every commit; it is promoted, never the target.
    assert.deepEqual(next({ record: { primary: 'db-0', term: 3 }, members }), {
      kind: 'promote',
      term: 3,
      pod: 'db-0',
    });
    // An old primary that never answers again is a lost primary: the chosen target is promoted after the bound.
    assert.deepEqual(next({ record, members: [gone('db-0'), replica('db-1', 800n)] }), {
      kind: 'promote',
      term: 2,
      pod: 'db-1',
    });
  });

  it('scaling down below the primary hands over to a replica that stays, and keeps the primary’s pod meanwhile', () => {
    const members = [replica('db-0', 1n), replica('db-1', 1n), primary('db-2', 1n)];
    const plan = planReplication(
      observation({ instances: 2, record: { primary: 'db-2', term: 1 }, members }),
    );
    assert.equal(plan.replicas, 3);
    assert.deepEqual(plan.next, {
      kind: 'elect',
      term: 2,
      primary: 'db-0',
      reason: 'ScaleDown',
      handover: { from: 'db-2', reason: 'ScaleDown', lsn: 1n },
    });
    assert.equal(planReplication(observation({ instances: 2 })).replicas, 2);
    assert.equal(
      next({ switchoverTo: 'db-2', instances: 2 }).kind,
      'refuse-switchover',
      'no switchover to a pod the scale down removes',
    );
  });
});

describe('the term is the fencing token', () => {
  it('an action is current only in the term it was planned for', () => {
    const elect: ReplicationAction = { kind: 'elect', term: 3, primary: 'db-1', reason: 'Failover' };
    assert.equal(stillCurrent(elect, { term: 2 }), true);
    assert.equal(stillCurrent(elect, { term: 3 }), false, 'another leader already elected term 3');
    assert.equal(stillCurrent({ kind: 'promote', term: 3, pod: 'db-1' }, { term: 3 }), true);
    assert.equal(stillCurrent({ kind: 'promote', term: 3, pod: 'db-1' }, { term: 4 }), false);
  });
});

/**
 * A small model cluster the plans are carried out on. A "kill" makes the operator forget everything but the
 * record: the next run re-plans from what the cluster shows.
 */
class Model {
  record: ElectionRecord = { primary: 'db-0', term: 1 };
  published = { primary: 'db-0', term: 1 };
  members: MemberObservation[] = [primary('db-0', 300n), replica('db-1', 300n), replica('db-2', 320n)];
  promotions: { term: number; pod: string }[] = [];
  clock = now.getTime();
  switchoverTo: string | undefined;
  switchoverTimeoutMs = 5000;
  /** Whether the standbys' connections to a fenced primary last through its shutdown (false: the old bug). */
  shutdownReachesStandbys = true;
  /** Where each pod's WAL ends on its volume. */
  disk = new Map<string, bigint>();
  rejoins: string[] = [];
  /** The old primary's last acknowledged commit, when a fence shut it down. */
  acknowledged = 0n;

  observe(): ReplicationObservation {
    return {
      instances: 3,
      failoverDelayMs: 5000,
      rejoinAfterMs: 30_000,
      switchoverTimeoutMs: this.switchoverTimeoutMs,
      record: structuredClone(this.record),
      published: { ...this.published },
      members: structuredClone(this.members),
      switchoverTo: this.switchoverTo,
      now: new Date(this.clock),
    };
  }

  member(name: string): MemberObservation {
    const m = this.members.find((x) => x.name === name);
    assert.ok(m, name);
    return m;
  }

  apply(action: ReplicationAction): void {
    assert.ok(stillCurrent(action, this.record), `stale action ${inspect(action)}`);
    switch (action.kind) {
      case 'elect':
        this.record = { primary: action.primary, term: action.term, handover: action.handover };
        return;
      case 'publish':
        this.published = { primary: action.primary, term: action.term };
        return;
      case 'fence': {
        const m = this.member(action.pod);
        m.roleLabel = undefined;
        if (action.deletePod) {
          // Its fast shutdown writes a checkpoint and sends the connected standbys all its WAL, when the connection
          // lasts; the StatefulSet recreates it as a standby (tick).
          if (m.sql && !m.sql.inRecovery) {
            this.acknowledged = m.sql.lsn;
            const end = m.sql.lsn + 100n;
            this.disk.set(m.name, end);
            for (const r of this.members) {
              if (r.sql?.inRecovery && r.sql.streaming && this.shutdownReachesStandbys) r.sql.lsn = end;
            }
          }
          Object.assign(m, { pod: 'terminating', ready: false, sql: undefined });
        }
        return;
      }
      case 'mark-unavailable':
        this.record.primaryUnavailableSince = action.since;
        return;
      case 'clear-unavailable':
        delete this.record.primaryUnavailableSince;
        return;
      case 'promote': {
        const m = this.member(action.pod);
        // The executor asks pg_is_in_recovery() first: promoting a primary again is a no-op.
        if (m.sql && !m.sql.inRecovery) return;
        assert.equal(
          this.members.filter((x) => x !== m && x.sql && !x.sql.inRecovery).length,
          0,
          'promoting while another instance runs as a primary',
        );
        this.promotions.push({ term: action.term, pod: action.pod });
        const fork = m.sql ? ((m.sql.replayLsn ?? 0n) > m.sql.lsn ? (m.sql.replayLsn ?? 0n) : m.sql.lsn) : 0n;
        if (m.sql) m.sql = { inRecovery: false, lsn: fork, streaming: false };
        // The others follow the new timeline unless their WAL went past its fork point.
        for (const r of this.members) {
          if (r === m || !r.sql?.inRecovery) continue;
          const end = (r.sql.replayLsn ?? 0n) > r.sql.lsn ? (r.sql.replayLsn ?? 0n) : r.sql.lsn;
          r.sql =
            end > fork ? { ...r.sql, streaming: false } : { inRecovery: true, lsn: fork, streaming: true };
        }
        return;
      }
      case 'complete-handover':
        delete this.record.handover;
        delete this.record.primaryUnavailableSince;
        return;
      case 'label': {
        const m = this.member(action.pod);
        m.roleLabel = action.role;
        m.termLabel = action.term;
        return;
      }
      case 'refuse-switchover':
        this.switchoverTo = undefined;
        return;
      case 'clear-switchover':
      case 'abort-switchover':
        assert.equal(this.switchoverTo, action.target);
        this.switchoverTo = undefined;
        return;
      case 'wait':
        this.tick(action.retryInMs ?? 1000);
        return;
      case 'rejoin':
        this.rejoins.push(action.pod);
        return;
      case 'steady':
        return;
    }
  }

  /** Time passes: pods the StatefulSet recreates come back as standbys of the published primary. */
  tick(ms: number): void {
    this.clock += ms;
    for (const m of this.members) {
      if (m.pod === 'terminating') Object.assign(m, { pod: 'absent' });
      else if (m.pod === 'absent' && m.name !== this.published.primary) {
        // A pod with WAL on its volume replays it and waits for a primary (it cannot stream from a standby).
        const end = this.disk.get(m.name);
        const primary = this.members.find((x) => x.pod === 'running' && x.sql && !x.sql.inRecovery);
        const follows = end === undefined || (primary?.sql !== undefined && primary.sql.lsn >= end);
        Object.assign(m, {
          pod: 'running',
          ready: true,
          roleLabel: undefined,
          termLabel: undefined,
          sql:
            end === undefined
              ? { inRecovery: true, lsn: 0n, streaming: true }
              : { inRecovery: true, lsn: 0n, replayLsn: end, streaming: follows && primary !== undefined },
        });
      }
    }
  }

  settled(): boolean {
    return this.members.every((m) => m.pod === 'running');
  }

  /** Plans and carries out actions until the plan is steady and every pod runs. */
  run(limit = 50): ReplicationAction[] {
    const done: ReplicationAction[] = [];
    for (let i = 0; i < limit; i++) {
      const action = planReplication(this.observe()).next;
      done.push(action);
      if (action.kind === 'steady' && this.settled()) return done;
      if (action.kind === 'steady') this.tick(1000);
      this.apply(action);
    }
    assert.fail(`no steady state after ${limit} actions: ${inspect(done.slice(-5))}`);
  }
}

describe('planReplication carried out on a model cluster', () => {
  it('a hung primary: one election after the delay, one promotion of the most advanced replica, the old one back as a replica', () => {
    const model = new Model();
    Object.assign(model.member('db-0'), { ready: false, sql: undefined });
    const actions = model.run();
    assert.deepEqual(model.promotions, [{ term: 2, pod: 'db-2' }]);
    assert.equal(model.record.primary, 'db-2');
    assert.equal(model.record.term, 2);
    assert.equal(model.member('db-2').roleLabel, 'primary');
    assert.equal(model.member('db-0').roleLabel, 'replica', 'the old primary rejoined as a replica');
    assert.ok(model.clock - now.getTime() >= 5000, 'the failover waited out the delay');
    assert.deepEqual(
      actions.map((a) => a.kind).filter((k) => k !== 'wait'),
      [
        'mark-unavailable',
        'elect',
        'publish',
        'fence',
        'promote',
        'complete-handover',
        'label',
        'steady',
        'steady',
        'label',
        'steady',
      ],
    );
  });

  it('replaying any prefix after a kill reaches the same end with a single promotion', () => {
    const reference = new Model();
    Object.assign(reference.member('db-0'), { pod: 'terminating', ready: false, sql: undefined });
    const steps = reference.run().length;
    for (let kill = 1; kill < steps; kill++) {
      const model = new Model();
      Object.assign(model.member('db-0'), { pod: 'terminating', ready: false, sql: undefined });
      for (let i = 0; i < kill; i++) {
        const action = planReplication(model.observe()).next;
        model.apply(action);
        // The killed operator may have carried its last action out without recording that it did: do it again.
        if (i === kill - 1 && action.kind !== 'elect' && action.kind !== 'wait') model.apply(action);
      }
      model.run();
      assert.deepEqual(model.promotions, [{ term: 2, pod: 'db-2' }], `killed after ${kill} actions`);
      assert.equal(model.record.primary, 'db-2');
      // What the killed leader had planned for term 1 can no longer be carried out.
      assert.equal(
        stillCurrent({ kind: 'elect', term: 2, primary: 'db-1', reason: 'Failover' }, model.record),
        false,
      );
    }
  });

  it('a switchover: the target gets every WAL byte of the old primary, its shutdown checkpoint too, before its promotion', () => {
    const model = new Model();
    model.member('db-0').sql = { inRecovery: false, lsn: 900n, streaming: false };
    model.switchoverTo = 'db-1';
    const actions = model.run();
    assert.deepEqual(model.promotions, [{ term: 2, pod: 'db-1' }]);
    assert.equal(model.member('db-1').sql?.lsn, 1000n, 'up to the end of the shutdown checkpoint');
    assert.equal(model.member('db-0').roleLabel, 'replica');
    assert.equal(model.member('db-0').sql?.streaming, true, 'the old primary follows the new one');
    assert.deepEqual(model.rejoins, [], 'without a re-clone');
    assert.equal(model.switchoverTo, undefined, 'the done request is removed');
    assert.equal(model.record.primaryUnavailableSince, undefined);
    const promoted = actions.findIndex((a) => a.kind === 'promote');
    const fenced = actions.findIndex((a) => a.kind === 'fence');
    assert.ok(fenced >= 0 && fenced < promoted, 'fence before promote');
  });

  it('a switchover whose target loses the old primary’s last WAL (the stream cut by the fence) is aborted without loss', () => {
    const model = new Model();
    model.member('db-0').sql = { inRecovery: false, lsn: 900n, streaming: false };
    model.switchoverTo = 'db-1';
    model.shutdownReachesStandbys = false;
    const actions = model.run(200);
    assert.ok(
      actions.some((a) => a.kind === 'abort-switchover' && a.target === 'db-1'),
      'the request is removed',
    );
    assert.ok(actions.some((a) => a.kind === 'elect' && a.reason === 'SwitchoverAborted'));
    assert.deepEqual(model.promotions, [{ term: 3, pod: 'db-0' }], 'the target is never promoted');
    assert.equal(model.record.primary, 'db-0');
    assert.ok((model.member('db-0').sql?.lsn ?? 0n) >= model.acknowledged, 'no acknowledged commit lost');
    assert.equal(model.member('db-1').sql?.streaming, true, 'the target follows the old primary again');
    assert.deepEqual(model.rejoins, []);
    assert.equal(model.switchoverTo, undefined, 'not started again');
  });

  for (const reaches of [true, false]) {
    it(`a switchover ${reaches ? 'that succeeds' : 'that is aborted'}, the operator killed after each step: the same end, one promotion`, () => {
      const fresh = () => {
        const model = new Model();
        model.member('db-0').sql = { inRecovery: false, lsn: 900n, streaming: false };
        model.switchoverTo = 'db-1';
        model.shutdownReachesStandbys = reaches;
        return model;
      };
      const reference = fresh();
      const steps = reference.run(200).length;
      const expected = reaches ? [{ term: 2, pod: 'db-1' }] : [{ term: 3, pod: 'db-0' }];
      assert.deepEqual(reference.promotions, expected);
      for (let kill = 1; kill < steps; kill++) {
        const model = fresh();
        for (let i = 0; i < kill; i++) {
          const action = planReplication(model.observe()).next;
          model.apply(action);
          // The killed operator may have carried its last action out without recording that it did: do it again.
          if (
            i === kill - 1 &&
            !['elect', 'wait', 'abort-switchover', 'clear-switchover'].includes(action.kind)
          )
            model.apply(action);
        }
        model.run(200);
        assert.deepEqual(model.promotions, expected, `killed after ${kill} actions`);
        assert.ok((model.record.primary === 'db-1') === reaches);
        assert.ok(
          (model.members.find((m) => m.name === model.record.primary)?.sql?.lsn ?? 0n) >= model.acknowledged,
          `no acknowledged commit lost (killed after ${kill})`,
        );
        assert.deepEqual(model.rejoins, [], `no re-clone (killed after ${kill})`);
      }
    });
  }
});

describe('planReplication while a major upgrade runs (paused)', () => {
  const paused = 'a major upgrade to PostgreSQL 17 runs db-0 alone';
  const published = { primary: 'db-0', term: 1 };

  it('keeps the record published as it is while every pod is going away, and elects nobody', () => {
    const members = [
      primary('db-0', 300n, { pod: 'terminating', ready: false }),
      replica('db-1', 300n, { pod: 'terminating' }),
      gone('db-2'),
    ];
    assert.deepEqual(next({ members, published, paused }), {
      kind: 'wait',
      term: 1,
      why: paused,
      retryInMs: 2000,
    });
    const allGone = [gone('db-0'), gone('db-1'), gone('db-2')];
    assert.equal(next({ members: allGone, published, paused }).kind, 'wait');
    // A stale publication (NOBODY from before the pause) is put back to the record, so pod 0 starts as the primary.
    assert.deepEqual(next({ members: allGone, published: { primary: NOBODY, term: 1 }, paused }), {
      kind: 'publish',
      term: 1,
      primary: 'db-0',
    });
  });

  it('labels the upgraded pod 0 once it answers as the primary, and fences or re-clones nothing', () => {
    const fresh = primary('db-0', 10n, { roleLabel: undefined, termLabel: undefined });
    assert.deepEqual(next({ members: [fresh, gone('db-1'), gone('db-2')], published, paused }), {
      kind: 'label',
      term: 1,
      pod: 'db-0',
      role: 'primary',
    });
    // Without the pause the same fresh, unlabelled pod is a replaced primary: it is failed over from.
    assert.notEqual(next({ members: [fresh, gone('db-1'), gone('db-2')], published }).kind, 'wait');
    const diverged = replica('db-1', 900n, { sql: { inRecovery: true, lsn: 900n, streaming: false } });
    assert.equal(
      next({ members: [primary('db-0', 300n), diverged, gone('db-2')], published, paused }).kind,
      'wait',
    );
  });
});
