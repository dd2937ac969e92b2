import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  decideSynchronous,
  quorumOf,
  type SynchronousAnswer,
  type SynchronousObservation,
  standbyNamesSetting,
  type WalSender,
} from '../../../../src/sampledb/replication/synchronous.ts';
import { alterSystemSql } from '../../../../src/sampledb/replication/synchronous-sql.ts';

const MEMBERS = ['db-0', 'db-1', 'db-2'];
const ANY1 = 'ANY 1 ("db-0", "db-1", "db-2")';
const ANY2 = 'ANY 2 ("db-0", "db-1", "db-2")';

const streaming = (name: string, syncState = 'async'): WalSender => ({ name, state: 'streaming', syncState });
const primary = (setting: string, senders: WalSender[], versionNum = 150004): SynchronousAnswer => ({
  inRecovery: false,
  setting,
  versionNum,
  senders,
});
const standby = (setting: string): SynchronousAnswer => ({
  inRecovery: true,
  setting,
  versionNum: 150004,
  senders: [],
});

function observation(
  synchronous: number,
  answers: Record<string, SynchronousAnswer>,
  overrides: Partial<SynchronousObservation> = {},
): SynchronousObservation {
  return {
    synchronous,
    members: MEMBERS,
    primary: 'db-0',
    answers: new Map(Object.entries(answers)),
    ...overrides,
  };
}

interface Row {
  name: string;
  obs: SynchronousObservation;
  /** pod=setting, in the order they are changed. */
  changes: string[];
  status: 'True' | 'False';
  reason: string;
}

const TABLE: Row[] = [
  {
    name: 'bootstrap: the primary runs alone and asynchronous; nothing is set until a standby streams',
    obs: observation(1, { 'db-0': primary('', []) }),
    changes: [],
    status: 'False',
    reason: 'WaitingForStandbys',
  },
  {
    name: 'a clone in progress (pg_basebackup) does not count as a standby',
    obs: observation(1, { 'db-0': primary('', [streaming('pg_basebackup')]) }),
    changes: [],
    status: 'False',
    reason: 'WaitingForStandbys',
  },
  {
    name: 'a standby still catching up (not streaming) does not count',
    obs: observation(1, {
      'db-0': primary('', [{ name: 'db-1', state: 'catchup', syncState: 'async' }]),
      'db-1': standby(''),
    }),
    changes: [],
    status: 'False',
    reason: 'WaitingForStandbys',
  },
  {
    name: 'one standby streams: set on the standbys first, then the primary',
    obs: observation(1, {
      'db-0': primary('', [streaming('db-1')]),
      'db-1': standby(''),
      'db-2': standby(''),
    }),
    changes: [`db-1=${ANY1}`, `db-2=${ANY1}`, `db-0=${ANY1}`],
    status: 'False',
    reason: 'WaitingForStandbys',
  },
  {
    name: 'in force and a standby confirms: True, nothing to change',
    obs: observation(1, {
      'db-0': primary(ANY1, [streaming('db-1', 'quorum'), streaming('db-2', 'quorum')]),
      'db-1': standby(ANY1),
      'db-2': standby(ANY1),
    }),
    changes: [],
    status: 'True',
    reason: 'StandbysConfirming',
  },
  {
    name: 'in force, every standby gone: kept (commits wait), never dropped',
    obs: observation(1, { 'db-0': primary(ANY1, []) }),
    changes: [],
    status: 'False',
    reason: 'WaitingForStandbys',
  },
  {
    name: 'raised from 1 to 2 with one standby streaming: kept at 1 until two stream',
    obs: observation(2, {
      'db-0': primary(ANY1, [streaming('db-1', 'quorum')]),
      'db-1': standby(ANY1),
    }),
    changes: [],
    status: 'False',
    reason: 'WaitingForStandbys',
  },
  {
    name: 'raised from 1 to 2 with two streaming: raised everywhere',
    obs: observation(2, {
      'db-0': primary(ANY1, [streaming('db-1', 'quorum'), streaming('db-2', 'quorum')]),
      'db-1': standby(ANY1),
      'db-2': standby(ANY1),
    }),
    changes: [`db-1=${ANY2}`, `db-2=${ANY2}`, `db-0=${ANY2}`],
    status: 'False',
    reason: 'WaitingForStandbys',
  },
  {
    name: 'lowered from 2 to 1: at once, even with no standby streaming',
    obs: observation(1, { 'db-0': primary(ANY2, []), 'db-1': standby(ANY2) }),
    changes: [`db-1=${ANY1}`, `db-0=${ANY1}`],
    status: 'False',
    reason: 'WaitingForStandbys',
  },
  {
    name: 'synchronous: 0 turns it off at once on every instance',
    obs: observation(0, {
      'db-0': primary(ANY1, [streaming('db-1', 'quorum')]),
      'db-1': standby(ANY1),
      'db-2': standby(''),
    }),
    changes: ['db-1=', 'db-0='],
    status: 'False',
    reason: 'Asynchronous',
  },
  {
    name: 'after a failover: the promoted standby already has it (set ahead) and keeps it before its standbys return',
    obs: observation(1, { 'db-1': primary(ANY1, []), 'db-2': standby(ANY1) }, { primary: 'db-1' }),
    changes: [],
    status: 'False',
    reason: 'WaitingForStandbys',
  },
  {
    name: 'after a failover to a standby cloned before it was set: set on it once a standby streams',
    obs: observation(
      1,
      { 'db-1': primary('', [streaming('db-2')]), 'db-2': standby(ANY1), 'db-0': standby('') },
      { primary: 'db-1' },
    ),
    changes: [`db-0=${ANY1}`, `db-1=${ANY1}`],
    status: 'False',
    reason: 'WaitingForStandbys',
  },
  {
    name: 'the recorded primary is still a standby (mid-failover): nothing changes',
    obs: observation(1, { 'db-1': standby(''), 'db-2': standby('') }, { primary: 'db-1' }),
    changes: [],
    status: 'False',
    reason: 'WaitingForPrimary',
  },
  {
    name: 'the primary does not answer: nothing changes',
    obs: observation(1, { 'db-1': standby(''), 'db-2': standby('') }),
    changes: [],
    status: 'False',
    reason: 'WaitingForPrimary',
  },
  {
    name: 'scaled up to 4: the list follows, the quorum is kept',
    obs: observation(
      1,
      {
        'db-0': primary(ANY1, [streaming('db-1', 'quorum')]),
        'db-1': standby(ANY1),
        'db-3': standby(ANY1),
      },
      { members: [...MEMBERS, 'db-3'] },
    ),
    changes: [
      'db-1=ANY 1 ("db-0", "db-1", "db-2", "db-3")',
      'db-3=ANY 1 ("db-0", "db-1", "db-2", "db-3")',
      'db-0=ANY 1 ("db-0", "db-1", "db-2", "db-3")',
    ],
    status: 'False',
    reason: 'WaitingForStandbys',
  },
  {
    name: 'scaled down to 2: a standby of a removed ordinal no longer counts',
    obs: observation(
      1,
      { 'db-0': primary('ANY 1 ("db-0", "db-1")', [streaming('db-2', 'async')]) },
      { members: ['db-0', 'db-1'] },
    ),
    changes: [],
    status: 'False',
    reason: 'WaitingForStandbys',
  },
  {
    name: 'PostgreSQL 14: no least-privilege way to set it; said so, nothing changes',
    obs: observation(1, { 'db-0': primary('', [streaming('db-1')], 140011) }),
    changes: [],
    status: 'False',
    reason: 'RequiresPostgres15',
  },
];

describe('decideSynchronous', () => {
  for (const row of TABLE) {
    it(row.name, () => {
      const decision = decideSynchronous(row.obs);
      assert.deepEqual(
        decision.changes.map((c) => `${c.pod}=${c.setting}`),
        row.changes,
      );
      assert.equal(decision.condition.type, 'SynchronousReplication');
      assert.equal(decision.condition.status, row.status, decision.condition.message);
      assert.equal(decision.condition.reason, row.reason, decision.condition.message);
      const primaryChange = decision.changes.filter((c) => c.primary);
      assert.ok(primaryChange.every((c) => c.pod === row.obs.primary));
      assert.ok(
        decision.changes.findIndex((c) => c.primary) === -1 ||
          decision.changes.findIndex((c) => c.primary) === decision.changes.length - 1,
        'the primary is changed last',
      );
    });
  }

  it('never raises a quorum beyond the streaming standbys of this SampleDB, whatever it observes', () => {
    const settings = ['', ANY1, ANY2, 'ANY 1 ("db-0", "db-1")'];
    const senderSets: WalSender[][] = [
      [],
      [streaming('db-1')],
      [streaming('db-1', 'quorum'), streaming('db-2', 'quorum')],
      [streaming('other')],
      [{ name: 'db-2', state: 'startup', syncState: 'async' }],
    ];
    for (const synchronous of [0, 1, 2])
      for (const setting of settings)
        for (const senders of senderSets) {
          const obs = observation(synchronous, {
            'db-0': primary(setting, senders),
            'db-1': standby(setting),
          });
          const decision = decideSynchronous(obs);
          const onPrimary = decision.changes.find((c) => c.primary)?.setting;
          if (onPrimary === undefined) continue;
          const ours = senders.filter((s) => MEMBERS.includes(s.name) && s.state === 'streaming').length;
          const raised = quorumOf(onPrimary) > quorumOf(setting);
          assert.ok(
            !raised || quorumOf(onPrimary) <= ours,
            `${synchronous} ${setting} ${JSON.stringify(senders)}`,
          );
          if (synchronous > 0) assert.notEqual(onPrimary, '', 'never dropped while asked for');
        }
  });
});

describe('the setting', () => {
  it('names the instances, quoted (pod names have dashes)', () => {
    assert.equal(standbyNamesSetting(1, MEMBERS), ANY1);
    assert.equal(standbyNamesSetting(0, MEMBERS), '');
  });

  it('reads the quorum of every form PostgreSQL accepts', () => {
    assert.equal(quorumOf(''), 0);
    assert.equal(quorumOf(ANY2), 2);
    assert.equal(quorumOf('FIRST 3 (a, b, c)'), 3);
    assert.equal(quorumOf('2 (a, b)'), 2);
    assert.equal(quorumOf('any 1 (*)'), 1);
    assert.equal(quorumOf('a, b'), 1);
    assert.equal(quorumOf('*'), 1);
  });

  it('ALTER SYSTEM quotes the value, and RESET turns it off', () => {
    assert.equal(
      alterSystemSql(ANY1),
      `ALTER SYSTEM SET synchronous_standby_names = 'ANY 1 ("db-0", "db-1", "db-2")'`,
    );
    assert.equal(alterSystemSql("a'b"), "ALTER SYSTEM SET synchronous_standby_names = 'a''b'");
    assert.equal(alterSystemSql(''), 'ALTER SYSTEM RESET synchronous_standby_names');
  });
});
