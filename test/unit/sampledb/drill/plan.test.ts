// The drill planner: from what the cluster shows (and the run recorded in the drill's status) to the next action.
// Tables: each guard rail refuses with its reason; a kill-primary run walks canary → inject → probe → detected →
// measured; a resumed run (operator killed after recording the fault) re-sends the fault or goes on; restore-check
// walks create → Ready → delete → Succeeded; isolate-primary walks canary → enforcement check → isolate → probe →
// lift → measured (or refuses where nothing enforces NetworkPolicy); fill-disk walks canary → fill → full → probe →
// released → measured (or
// refuses a shared volume, or removes the ballast of a failed fill); the measurements come out of the probe's report.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DrillCurrentRun, DrillKind } from '../../../../src/api/index.ts';
import {
  type DrillAction,
  type DrillDb,
  type DrillObservation,
  type ProbeResult,
  planDrill,
} from '../../../../src/sampledb/drill/plan.ts';

const NOW = new Date('2026-12-04T02:00:10Z');
const pods = [
  { name: 'orders-0', uid: 'u0', ready: true, terminating: false, ip: '10.0.0.10' },
  { name: 'orders-1', uid: 'u1', ready: true, terminating: false, ip: '10.0.0.11' },
];
const healthy: DrillDb = {
  ready: true,
  instances: 2,
  failoverDelaySeconds: 5,
  primary: 'orders-0',
  pods,
  primaryAvailable: true,
  instanceReady: { 'orders-0': true, 'orders-1': true },
  replicasReady: true,
  upgrading: false,
};
const base = (kind: DrillKind = 'kill-primary', more: Partial<DrillObservation> = {}): DrillObservation => ({
  now: NOW,
  kind,
  name: 'drill',
  sampleDbName: 'orders',
  due: {},
  namespaceAllowed: true,
  db: healthy,
  operator: { leaderElection: true, identity: 'operator-a' },
  runCount: 0,
  latestBackup: 'orders-nightly',
  ...more,
});
const canary: DrillCurrentRun = { run: 1, step: 'canary', startedAt: '2026-12-04T02:00:00Z' };
const injected: DrillCurrentRun = {
  ...canary,
  step: 'recover',
  target: 'orders-0',
  targetUid: 'u0',
  injectedAt: '2026-12-04T02:00:02Z',
};
const probe = (r: Partial<ProbeResult> = {}): DrillObservation['probeJob'] => ({
  state: 'succeeded',
  result: {
    writableAtMs: Date.parse('2026-12-04T02:00:08.5Z'),
    failedWrites: 12,
    canaryPresent: true,
    replicasExpected: 1,
    replicasCaughtUp: 1,
    caughtUpAtMs: Date.parse('2026-12-04T02:00:09Z'),
    ...r,
  },
});
const afterFailover: DrillDb = {
  ...healthy,
  primary: 'orders-1',
  pods: [
    { name: 'orders-0', uid: 'u0b', ready: true, terminating: false },
    pods[1] as DrillDb['pods'][number],
  ],
};

const finished = (a: DrillAction) => {
  assert.equal(a.kind, 'finish', JSON.stringify(a));
  return (a as Extract<DrillAction, { kind: 'finish' }>).run;
};

describe('planDrill guard rails', () => {
  const cases: Array<[string, DrillObservation, string]> = [
    ['namespace not labelled', base('kill-primary', { namespaceAllowed: false }), 'NamespaceNotAllowed'],
    [
      'isolate-primary on one instance',
      base('isolate-primary', { db: { ...healthy, instances: 1, pods: pods.slice(0, 1) } }),
      'WouldLeaveNoHealthyInstance',
    ],
    [
      'fill-disk on one instance',
      base('fill-disk', { db: { ...healthy, instances: 1, pods: pods.slice(0, 1) } }),
      'WouldLeaveNoHealthyInstance',
    ],
    ['SampleDB missing', base('kill-primary', { db: undefined as never }), 'SampleDBNotFound'],
    ['SampleDB not Ready', base('kill-primary', { db: { ...healthy, ready: false } }), 'SampleDBNotReady'],
    ['upgrade running', base('kill-primary', { db: { ...healthy, upgrading: true } }), 'UpgradeInProgress'],
    [
      // An upgrade restarts the pod: the SampleDB is not Ready then, and the upgrade is the reason to name.
      'upgrade running with the SampleDB not Ready',
      base('kill-primary', { db: { ...healthy, ready: false, upgrading: true } }),
      'UpgradeInProgress',
    ],
    [
      'upgrade running, on one instance',
      base('kill-replica', { db: { ...healthy, instances: 1, pods: pods.slice(0, 1), upgrading: true } }),
      'UpgradeInProgress',
    ],
    [
      'backup running',
      base('kill-primary', { busy: { reason: 'BackupInProgress', message: 'SampleDBBackup b is running' } }),
      'BackupInProgress',
    ],
    [
      'another drill running',
      base('kill-replica', { busy: { reason: 'DrillInProgress', message: 'SampleDBDrill d is running' } }),
      'DrillInProgress',
    ],
    [
      'kill-primary on one instance',
      base('kill-primary', { db: { ...healthy, instances: 1, pods: pods.slice(0, 1) } }),
      'WouldLeaveNoHealthyInstance',
    ],
    [
      'kill-replica with the only replica not Ready',
      base('kill-replica', {
        db: { ...healthy, pods: [pods[0] as DrillDb['pods'][number], { ...pods[1], ready: false } as never] },
      }),
      'WouldLeaveNoHealthyInstance',
    ],
    [
      'kill-operator-leader without leader election',
      base('kill-operator-leader', { operator: { leaderElection: false, identity: 'x' } }),
      'LeaderElectionDisabled',
    ],
    [
      'restore-check without a backup',
      base('restore-check', { latestBackup: undefined as never }),
      'NoCompletedBackup',
    ],
  ];
  for (const [what, o, reason] of cases) {
    it(`refuses: ${what} → ${reason}`, () => {
      const clean = JSON.parse(JSON.stringify(o)) as DrillObservation;
      clean.now = NOW;
      const run = finished(planDrill(clean));
      assert.equal(run.result, 'Refused');
      assert.equal(run.reason, reason);
      assert.ok(run.message.length > 10);
    });
  }

  it('names what it checked in the message: the field, the object or the condition that refused', () => {
    const message = (o: DrillObservation) => finished(planDrill(o)).message;
    assert.match(message(base('kill-primary', { namespaceAllowed: false })), /sampledb\.io\/drills=allowed/);
    assert.match(
      message(
        base('kill-primary', {
          db: {
            ...healthy,
            ready: false,
            notReady: { reason: 'PodNotReady', message: 'pod orders-0 starting' },
          },
        }),
      ),
      /SampleDB orders is not Ready \(PodNotReady: pod orders-0 starting\)/,
    );
    assert.match(
      message(
        base('kill-primary', {
          db: { ...healthy, upgrading: true, upgradeStep: { reason: 'RollingRestart', message: 'Step 1' } },
        }),
      ),
      /SampleDB orders is being upgraded \(Upgrading: RollingRestart: Step 1\)/,
    );
    assert.match(
      message(base('kill-primary', { db: { ...healthy, instances: 1, pods: pods.slice(0, 1) } })),
      /spec\.instances 1, 1 Ready/,
    );
    assert.match(
      message(
        base('kill-primary', {
          busy: { reason: 'BackupInProgress', message: 'SampleDBBackup b is running' },
        }),
      ),
      /SampleDBBackup b/,
    );
  });

  it('does nothing when no run is due', () => {
    assert.deepEqual(planDrill(base('kill-primary', { due: undefined as never })), { kind: 'idle' });
  });

  it('checks the guard rails again at the moment of the fault', () => {
    const run = finished(
      planDrill(
        base('kill-primary', {
          current: canary,
          canaryJob: { state: 'succeeded', result: true },
          db: { ...healthy, ready: false },
        }),
      ),
    );
    assert.equal(run.reason, 'SampleDBNotReady');
  });
});

describe('planDrill kill-primary', () => {
  it('walks start → canary → inject (primary by uid) → probe → detected → measured', () => {
    const start = planDrill(base());
    assert.equal(start.kind, 'start-run');
    assert.deepEqual(planDrill(base('kill-primary', { current: canary })), { kind: 'create-canary' });
    assert.equal(
      planDrill(base('kill-primary', { current: canary, canaryJob: { state: 'running' } })).kind,
      'wait',
    );
    const inject = planDrill(
      base('kill-primary', { current: canary, canaryJob: { state: 'succeeded', result: true } }),
    );
    assert.equal(inject.kind, 'inject');
    if (inject.kind !== 'inject') return;
    assert.deepEqual(inject.target, { kind: 'pod', name: 'orders-0', uid: 'u0' });
    assert.equal(inject.current.injectedAt, '2026-12-04T02:00:10Z');
    // The pod is gone: the probe starts.
    const gone = { ...inject.current, injectedAt: '2026-12-04T02:00:02Z' };
    const probeAction = planDrill(
      base('kill-primary', { current: gone, db: { ...healthy, pods: pods.slice(1) } }),
    );
    assert.equal(probeAction.kind, 'create-probe');
    // The operator's status shows the primary unavailable: detected.
    const detected = planDrill(
      base('kill-primary', {
        current: injected,
        probeJob: { state: 'running' },
        db: { ...healthy, primaryAvailable: false, pods: pods.slice(1) },
      }),
    );
    assert.equal(detected.kind, 'mark-detected');
    // Writes back, every instance Ready again: the run is measured.
    const run = finished(
      planDrill(
        base('kill-primary', {
          current: { ...injected, detectedAt: '2026-12-04T02:00:03Z' },
          probeJob: probe(),
          db: afterFailover,
        }),
      ),
    );
    assert.equal(run.result, 'Succeeded');
    assert.equal(run.reason, 'Recovered');
    assert.equal(run.detectSeconds, 1);
    assert.equal(run.writableSeconds, 6.5);
    assert.equal(run.replicationSeconds, 0.5);
    assert.equal(run.canaryPresent, true);
    assert.equal(run.replicationCaughtUp, true);
    assert.equal(run.target, 'orders-0');
  });

  it('a resumed run with the target still there sends the same deletion again; the recorded time stays', () => {
    const current = { ...injected, step: 'inject' as const };
    const a = planDrill(base('kill-primary', { current }));
    assert.equal(a.kind, 'inject');
    if (a.kind === 'inject') {
      assert.equal(a.current.injectedAt, injected.injectedAt);
      assert.deepEqual(a.target, { kind: 'pod', name: 'orders-0', uid: 'u0' });
    }
    // Same name, new uid: that is the re-created pod, the fault happened.
    assert.equal(planDrill(base('kill-primary', { current, db: afterFailover })).kind, 'create-probe');
  });

  it('waits while the killed pod is back but not yet Ready, then fails after the timeout', () => {
    const notBack = {
      ...afterFailover,
      pods: [{ ...pods[0], uid: 'u0b', ready: false } as never, pods[1] as never],
    };
    const current = { ...injected, detectedAt: '2026-12-04T02:00:03Z' };
    assert.equal(planDrill(base('kill-primary', { current, probeJob: probe(), db: notBack })).kind, 'wait');
    const late = planDrill(
      base('kill-primary', {
        current,
        probeJob: probe(),
        db: notBack,
        now: new Date('2026-12-04T02:20:00Z'),
      }),
    );
    assert.equal(finished(late).reason, 'NotRecovered');
  });

  const outcomes: Array<[string, Partial<ProbeResult>, string, string]> = [
    ['canary lost', { canaryPresent: false }, 'Failed', 'CanaryLost'],
    [
      'a replica behind',
      { replicasCaughtUp: 0, caughtUpAtMs: undefined as never },
      'Failed',
      'ReplicationBehind',
    ],
    ['no write refused', { failedWrites: 0 }, 'Succeeded', 'Recovered'],
  ];
  for (const [what, r, result, reason] of outcomes) {
    it(`records ${what} as ${result} (${reason})`, () => {
      const clean = JSON.parse(JSON.stringify(r)) as Partial<ProbeResult>;
      const run = finished(
        planDrill(
          base('kill-primary', {
            current: { ...injected, detectedAt: '2026-12-04T02:00:03Z' },
            probeJob: probe(clean),
            db: afterFailover,
          }),
        ),
      );
      assert.equal(run.result, result);
      assert.equal(run.reason, reason);
      if (clean.failedWrites === 0) {
        assert.equal(run.writableSeconds, 0);
        // Not "writes accepted 0s after the fault": the probe starts after it, and may miss a short interruption.
        assert.match(
          run.message,
          /its first, 6\.5s after the fault, was accepted \(an interruption that ended before then is not observed\)/,
        );
      }
    });
  }

  it('a canary that cannot be written ends the run before any fault', () => {
    const run = finished(
      planDrill(
        base('kill-primary', { current: canary, canaryJob: { state: 'failed', message: 'timeout' } }),
      ),
    );
    assert.equal(run.reason, 'CanaryFailed');
    assert.equal(run.target, undefined);
  });
});

describe('planDrill kill-replica and kill-operator-leader', () => {
  it('kill-replica hits a Ready pod that is not the primary, detected when its instance is not ready', () => {
    const a = planDrill(
      base('kill-replica', { current: canary, canaryJob: { state: 'succeeded', result: true } }),
    );
    assert.equal(a.kind, 'inject');
    if (a.kind === 'inject') assert.deepEqual(a.target, { kind: 'pod', name: 'orders-1', uid: 'u1' });
    const current = { ...injected, target: 'orders-1', targetUid: 'u1' };
    const seen = planDrill(
      base('kill-replica', {
        current,
        probeJob: { state: 'running' },
        db: { ...healthy, instanceReady: { 'orders-0': true, 'orders-1': false } },
      }),
    );
    assert.equal(seen.kind, 'mark-detected');
  });

  it('kill-operator-leader targets its own identity; the next leader sees the fault and goes on', () => {
    const a = planDrill(
      base('kill-operator-leader', { current: canary, canaryJob: { state: 'succeeded', result: true } }),
    );
    assert.equal(a.kind, 'inject');
    if (a.kind !== 'inject') return;
    assert.deepEqual(a.target, { kind: 'operator', identity: 'operator-a' });
    // Still the same process (the deletion is on its way): send it again.
    assert.equal(planDrill(base('kill-operator-leader', { current: a.current })).kind, 'inject');
    // Another leader: the probe starts, then the new leader is the detection.
    const next = { leaderElection: true, identity: 'operator-b' };
    assert.equal(
      planDrill(base('kill-operator-leader', { current: a.current, operator: next })).kind,
      'create-probe',
    );
    const recovering = { ...a.current, step: 'recover' as const };
    assert.equal(
      planDrill(
        base('kill-operator-leader', { current: recovering, operator: next, probeJob: { state: 'running' } }),
      ).kind,
      'mark-detected',
    );
  });
});

describe('planDrill restore-check', () => {
  const started: DrillCurrentRun = {
    run: 1,
    step: 'restore',
    startedAt: '2026-12-04T02:00:00Z',
    restoreStartedAt: '2026-12-04T02:00:00Z',
    target: 'orders-drill1',
  };
  it('walks create throw-away → Ready → delete → Succeeded with the restore time', () => {
    const start = planDrill(base('restore-check'));
    assert.equal(start.kind, 'start-run');
    if (start.kind === 'start-run') assert.equal(start.current.target, 'orders-drill1');
    assert.deepEqual(planDrill(base('restore-check', { current: started })), {
      kind: 'create-throwaway',
      backup: 'orders-nightly',
    });
    const readyAction = planDrill(
      base('restore-check', { current: started, throwaway: { ready: true, deleting: false } }),
    );
    assert.equal(readyAction.kind, 'delete-throwaway');
    if (readyAction.kind !== 'delete-throwaway') return;
    assert.equal(readyAction.current.restoreReadyAt, '2026-12-04T02:00:10Z');
    const cleanup = readyAction.current;
    assert.equal(
      planDrill(base('restore-check', { current: cleanup, throwaway: { ready: true, deleting: true } })).kind,
      'wait',
    );
    const run = finished(planDrill(base('restore-check', { current: cleanup })));
    assert.equal(run.result, 'Succeeded');
    assert.equal(run.restoreSeconds, 10);
  });

  it('a restore that fails is cleaned up and recorded as Failed', () => {
    const a = planDrill(
      base('restore-check', {
        current: started,
        throwaway: { ready: false, failed: 'pg_restore', deleting: false },
      }),
    );
    assert.equal(a.kind, 'delete-throwaway');
    if (a.kind !== 'delete-throwaway') return;
    assert.equal(a.current.restoreReadyAt, undefined);
    assert.equal(
      finished(planDrill(base('restore-check', { current: a.current }))).reason,
      'RestoreCheckFailed',
    );
  });
});

describe('planDrill fill-disk', () => {
  const fillInjected: DrillCurrentRun = { ...injected, step: 'inject' };
  const filling = (more: Partial<DrillObservation>) => base('fill-disk', { current: fillInjected, ...more });
  const released = (r: Partial<{ filledBytes: number; releasedAtMs: number }> = {}) =>
    ({
      state: 'succeeded',
      result: {
        filledBytes: 700 * 2 ** 20,
        filledAtMs: Date.parse('2026-12-04T02:00:03Z'),
        releasedAtMs: Date.parse('2026-12-04T02:00:06Z'),
        ...r,
      },
    }) as const;

  it("after the canary, fills the primary's volume (recorded before the Job is created)", () => {
    const a = planDrill(
      base('fill-disk', { current: canary, canaryJob: { state: 'succeeded', result: true } }),
    );
    assert.equal(a.kind, 'inject');
    const inject = a as Extract<DrillAction, { kind: 'inject' }>;
    assert.deepEqual(inject.target, { kind: 'volume', name: 'orders-0', uid: 'u0' });
    assert.equal(inject.current.step, 'inject');
    assert.equal(inject.current.target, 'orders-0');
    assert.ok(inject.current.injectedAt);
  });

  it('a resumed run creates the fill Job again (idempotent), waits while it fills, probes once it is full', () => {
    assert.equal(planDrill(filling({})).kind, 'inject');
    assert.equal(planDrill(filling({ fillJob: { state: 'running' } })).kind, 'wait');
    const probe = planDrill(filling({ fillJob: { state: 'running', ready: true } }));
    assert.equal(probe.kind, 'create-probe');
    assert.equal((probe as Extract<DrillAction, { kind: 'create-probe' }>).current.step, 'recover');
    // The operator missed the full phase (down for the hold): the probe still runs, against a released volume.
    assert.equal(planDrill(filling({ fillJob: released() })).kind, 'create-probe');
  });

  it("refuses a shared volume with the fill Job's measurement, and nothing was written", () => {
    const run = finished(
      planDrill(
        filling({
          fillJob: {
            state: 'succeeded',
            result: { unsafe: "the data volume's file system holds 95000 MiB but its claim 1024 MiB" },
          },
        }),
      ),
    );
    assert.equal(run.result, 'Refused');
    assert.equal(run.reason, 'FillDiskUnsafe');
    assert.match(run.message, /95000 MiB but its claim 1024 MiB/);
  });

  it('a failed fill Job (killed, deadline): the release Job removes any ballast before the run ends Failed', () => {
    const failed = { state: 'failed', message: 'DeadlineExceeded' } as const;
    const a = planDrill(filling({ fillJob: failed }));
    assert.equal(a.kind, 'create-release');
    const cleanup = (a as Extract<DrillAction, { kind: 'create-release' }>).current;
    assert.equal(cleanup.step, 'cleanup');
    const at = (more: Partial<DrillObservation>) =>
      planDrill(base('fill-disk', { current: cleanup, fillJob: failed, ...more }));
    assert.equal(at({}).kind, 'create-release');
    assert.equal(at({ releaseJob: { state: 'running' } }).kind, 'wait');
    const run = finished(at({ releaseJob: { state: 'succeeded', result: true } }));
    assert.equal(run.result, 'Failed');
    assert.equal(run.reason, 'FillFailed');
    assert.match(run.message, /DeadlineExceeded.*removed any ballast/);
    const stuck = finished(at({ releaseJob: { state: 'failed', message: 'pod Pending' } }));
    assert.match(
      stuck.message,
      /\.sampledb-drill-ballast may still fill the data volume of orders-0; delete it/,
    );
    // The fill Job failing during the recovery too.
    assert.equal(
      planDrill(base('fill-disk', { current: injected, fillJob: failed, probeJob: probe() })).kind,
      'create-release',
    );
  });

  it("waits for the ballast's removal, then measures recovery from it", () => {
    const recovering = (more: Partial<DrillObservation>) =>
      base('fill-disk', { current: injected, probeJob: { state: 'running' }, ...more });
    assert.equal(planDrill(recovering({ fillJob: { state: 'running', ready: true } })).kind, 'wait');
    assert.equal(planDrill(recovering({ fillJob: released() })).kind, 'wait');
    const run = finished(
      planDrill(
        recovering({
          fillJob: released(),
          probeJob: probe({ refusedAtMs: Date.parse('2026-12-04T02:00:04Z'), failedWrites: 9 }),
        }),
      ),
    );
    assert.equal(run.result, 'Succeeded');
    assert.equal(run.reason, 'Recovered');
    // Writable at 02:00:08.5, released at 02:00:06: 2.5 s (not the 6.5 s since the fault).
    assert.equal(run.writableSeconds, 2.5);
    assert.equal(run.filledBytes, 700 * 2 ** 20);
    assert.equal(run.canaryPresent, true);
    assert.match(
      run.message,
      /700 MiB of ballast.*refused 2s after the fault.*2\.5s after the ballast was removed/,
    );
    // The primary never failed over and the Ready condition held: the operator's status never showed the fault.
    assert.equal(run.detectSeconds, undefined);
    assert.match(run.message, /never showed the fault/);
  });

  it('says so when no write was refused on the full volume', () => {
    const run = finished(
      planDrill(
        base('fill-disk', { current: injected, fillJob: released(), probeJob: probe({ failedWrites: 0 }) }),
      ),
    );
    assert.equal(run.writableSeconds, 0);
    assert.match(run.message, /no write was refused while it was full/);
  });

  it('a lost canary or a failed probe fails the run; no recovery within the bound is NotRecovered', () => {
    const o = (more: Partial<DrillObservation>) =>
      base('fill-disk', { current: injected, fillJob: released(), ...more });
    assert.equal(finished(planDrill(o({ probeJob: probe({ canaryPresent: false }) }))).reason, 'CanaryLost');
    assert.equal(
      finished(planDrill(o({ probeJob: { state: 'failed', message: 'no write accepted' } }))).reason,
      'ProbeFailed',
    );
    const late = finished(
      planDrill(o({ now: new Date(Date.parse('2026-12-04T02:11:00Z')), probeJob: { state: 'running' } })),
    );
    assert.equal(late.reason, 'NotRecovered');
    assert.equal(late.filledBytes, 700 * 2 ** 20);
  });

  it('a failover during the fill is the operator seeing the fault', () => {
    const a = planDrill(
      base('fill-disk', {
        current: injected,
        fillJob: { state: 'running', ready: true },
        probeJob: { state: 'running' },
        db: { ...healthy, primary: 'orders-1' },
      }),
    );
    assert.equal(a.kind, 'mark-detected');
  });
});

describe('planDrill isolate-primary', () => {
  const checking: DrillCurrentRun = { ...canary, step: 'netcheck', target: 'orders-0', targetUid: 'u0' };
  const isolated: DrillCurrentRun = { ...checking, step: 'recover', injectedAt: '2026-12-04T02:00:02Z' };
  const at = (more: Partial<DrillObservation>) => base('isolate-primary', more);
  const enforced = (yes: boolean): DrillObservation['netcheckJob'] => ({
    state: 'succeeded',
    result: { enforced: yes, answered: yes ? 0 : 38, unanswered: yes ? 3 : 0 },
  });

  it('after the canary, checks enforcement against the primary pod IP before any fault', () => {
    const a = planDrill(at({ current: canary, canaryJob: { state: 'succeeded', result: true } }));
    assert.equal(a.kind, 'create-netcheck');
    assert.deepEqual(a.kind === 'create-netcheck' && [a.primaryIp, a.current.step, a.current.target], [
      '10.0.0.10',
      'netcheck',
      'orders-0',
    ]);
    assert.equal(a.kind === 'create-netcheck' && a.current.injectedAt, undefined);
    assert.equal(planDrill(at({ current: checking, netcheckJob: { state: 'running' } })).kind, 'wait');
  });

  it('refuses where a pod under deny-all egress still reached the primary, or the check failed: nothing injected', () => {
    const open = finished(planDrill(at({ current: checking, netcheckJob: enforced(false) })));
    assert.deepEqual([open.result, open.reason], ['Refused', 'NetworkPolicyNotEnforced']);
    assert.match(open.message, /reached orders-0's PostgreSQL port \(38 answers/);
    assert.match(open.message, /Nothing was injected/);
    const failed = finished(
      planDrill(at({ current: checking, netcheckJob: { state: 'failed', message: 'deadline exceeded' } })),
    );
    assert.deepEqual([failed.result, failed.reason], ['Refused', 'NetworkPolicyNotEnforced']);
    assert.match(failed.message, /deadline exceeded/);
  });

  it('enforced: isolates the primary (recorded first), then probes; a changed primary refuses instead', () => {
    const a = planDrill(at({ current: checking, netcheckJob: enforced(true) }));
    assert.equal(a.kind, 'inject');
    assert.deepEqual(a.kind === 'inject' && a.target, { kind: 'isolation', name: 'orders-0', uid: 'u0' });
    assert.equal(a.kind === 'inject' && a.current.injectedAt, '2026-12-04T02:00:10Z');
    const resumed = planDrill(
      at({ current: { ...checking, step: 'inject', injectedAt: '2026-12-04T02:00:02Z' } }),
    );
    assert.equal(resumed.kind, 'create-probe');
    const moved = finished(
      planDrill(
        at({ current: checking, netcheckJob: enforced(true), db: { ...healthy, primary: 'orders-1' } }),
      ),
    );
    assert.equal(moved.reason, 'WouldLeaveNoHealthyInstance');
    assert.match(moved.message, /primary changed during the enforcement check/);
  });

  it('holds the isolation until another primary is elected, or at most failover delay + 60 s', () => {
    const running = { probeJob: { state: 'running' } as const };
    const waiting = planDrill(
      at({ current: { ...isolated, detectedAt: '2026-12-04T02:00:05Z' }, ...running, db: { ...healthy } }),
    );
    assert.equal(waiting.kind, 'wait');
    assert.match(waiting.kind === 'wait' ? waiting.message : '', /lifted within 65s/);
    const failedOver = planDrill(
      at({ current: { ...isolated, detectedAt: '2026-12-04T02:00:05Z' }, ...running, db: afterFailover }),
    );
    assert.equal(failedOver.kind, 'lift-isolation');
    assert.equal(failedOver.kind === 'lift-isolation' && failedOver.current.liftedAt, '2026-12-04T02:00:10Z');
    const late = planDrill(
      at({
        now: new Date('2026-12-04T02:01:07Z'),
        current: { ...isolated, detectedAt: '2026-12-04T02:00:05Z' },
        ...running,
      }),
    );
    assert.equal(late.kind, 'lift-isolation');
  });

  it('measures once lifted and whole again; writes accepted throughout is IsolationNotEffective', () => {
    const lifted: DrillCurrentRun = {
      ...isolated,
      detectedAt: '2026-12-04T02:00:05Z',
      liftedAt: '2026-12-04T02:00:08Z',
    };
    const run = finished(planDrill(at({ current: lifted, probeJob: probe(), db: afterFailover })));
    assert.deepEqual(
      [run.result, run.reason, run.detectSeconds, run.writableSeconds, run.isolatedSeconds],
      ['Succeeded', 'Recovered', 3, 6.5, 6],
    );
    assert.match(run.message, /orders-0 was isolated for 6s \(orders-1 was elected primary\)/);
    const open = finished(
      planDrill(at({ current: lifted, probeJob: probe({ failedWrites: 0 }), db: afterFailover })),
    );
    assert.deepEqual([open.result, open.reason], ['Failed', 'IsolationNotEffective']);
    // Not lifted yet: never finished, whatever the probe says.
    assert.notEqual(
      planDrill(at({ current: { ...lifted, liftedAt: undefined }, probeJob: probe(), db: afterFailover }))
        .kind,
      'finish',
    );
  });

  it('the old primary Ready in its own pod is not recovery until the operator sees every replica stream', () => {
    const lifted: DrillCurrentRun = {
      ...isolated,
      detectedAt: '2026-12-04T02:00:05Z',
      liftedAt: '2026-12-04T02:00:08Z',
    };
    // Reachable again, it still runs as a primary (kubelet's probes pass) until the operator fences it.
    const stale = planDrill(
      at({ current: lifted, probeJob: probe(), db: { ...afterFailover, replicasReady: false } }),
    );
    assert.equal(stale.kind, 'wait');
    assert.match(stale.kind === 'wait' ? stale.message : '', /every instance to be Ready/);
  });
});
