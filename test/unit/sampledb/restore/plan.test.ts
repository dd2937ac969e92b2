// The in-place restore planner (ADR 0014): from what the cluster shows to the next action. Walks a restore from start
// to end, the failure paths (a failed restore Job changed nothing; a failed safety backup or cleanup keeps the
// replaced data), a restore an older operator started, and a restart at every point giving the same next action.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  planRestore,
  type RestoreAction,
  type RestoreObservation,
  restoreSteps,
} from '../../../../src/sampledb/restore/plan.ts';

const CHECKSUM = `sha256:${'d'.repeat(64)}`;
const start: RestoreObservation = {
  name: 'undo',
  sampleDbName: 'orders',
  previousDatabase: 'app_sdb_pre_0123abcd',
  stagingDatabase: 'app_sdb_restoring',
  db: { ready: true, serviceBlocked: false },
  source: { phase: 'Completed', ofSampleDb: 'orders', checksum: CHECKSUM },
};
const stopped = { ready: true, writesStoppedBy: 'undo', serviceBlocked: true };
const open = { ready: true, serviceBlocked: false };
const switched: RestoreObservation = { ...start, db: open, restoreJob: { state: 'succeeded' } };
const backedUp: RestoreObservation = { ...switched, safety: { phase: 'Completed', ofPrevious: true } };
const kind = (o: RestoreObservation) => planRestore(o).kind;
const states = (o: RestoreObservation) => restoreSteps(o).map((s) => `${s.name}:${s.state}`);
const stateOf = (o: RestoreObservation, step: string) => restoreSteps(o).find((s) => s.name === step)?.state;
const finish = (o: RestoreObservation) => {
  const action = planRestore(o);
  assert.equal(action.kind, 'finish', JSON.stringify(action));
  return action as Extract<RestoreAction, { kind: 'finish' }>;
};
const failedJob = (message: string) => ({ state: 'failed' as const, message });

describe('planRestore', () => {
  it('walks stop writes → restore (into a new database, checked, switched) → resume → safety backup → cleanup → Completed', () => {
    const walk: Array<[RestoreObservation, string]> = [
      [start, 'stop-writes'],
      [{ ...start, db: { ...stopped, serviceBlocked: false } }, 'wait'],
      [{ ...start, db: stopped }, 'start-restore-job'],
      [{ ...start, db: stopped, restoreJob: { state: 'running' } }, 'wait'],
      [{ ...start, db: stopped, restoreJob: { state: 'succeeded' } }, 'resume-writes'],
      [{ ...start, db: { ready: true, serviceBlocked: true }, restoreJob: { state: 'succeeded' } }, 'wait'],
      [switched, 'create-safety-backup'],
      [{ ...switched, safety: { ofPrevious: true } }, 'wait'],
      [{ ...switched, safety: { phase: 'Running', ofPrevious: true } }, 'wait'],
      [backedUp, 'start-cleanup-job'],
      [{ ...backedUp, cleanupJob: { state: 'running' } }, 'wait'],
      [{ ...backedUp, cleanupJob: { state: 'succeeded' } }, 'finish'],
    ];
    for (const [observation, expected] of walk)
      assert.equal(kind(observation), expected, JSON.stringify(observation));
    const done = finish({ ...backedUp, cleanupJob: { state: 'succeeded' } });
    assert.equal(done.phase, 'Completed');
    assert.equal(done.reason, 'Restored');
    assert.deepEqual(states({ ...backedUp, cleanupJob: { state: 'succeeded' } }), [
      'stop-writes:Done',
      'restore:Done',
      'verify:Done',
      'switch:Done',
      'resume-writes:Done',
      'safety-backup:Done',
      'cleanup:Done',
    ]);
  });

  it('the cleanup after the safety backup drops the previous database, never the live one', () => {
    const action = planRestore(backedUp);
    assert.deepEqual(action, {
      kind: 'start-cleanup-job',
      databases: ['app_sdb_pre_0123abcd', 'app_sdb_restoring'],
    });
  });

  it('lets clients write again before it backs up the replaced data', () => {
    assert.equal(kind({ ...switched, db: stopped }), 'resume-writes');
    assert.equal(stateOf({ ...switched, db: stopped }, 'resume-writes'), 'Running');
    assert.equal(stateOf({ ...switched, db: stopped }, 'safety-backup'), 'Pending');
  });

  it('never stops writes before the backup to restore is Completed with a checksum, nor while the SampleDB is not Ready', () => {
    for (const source of [
      { phase: 'Running', ofSampleDb: 'orders' },
      { phase: 'Completed', ofSampleDb: 'orders' },
      { ofSampleDb: 'orders' },
    ])
      assert.equal(kind({ ...start, source }), 'wait', JSON.stringify(source));
    assert.equal(kind({ ...start, db: { ready: false, serviceBlocked: false } }), 'wait');
    // Once this restore stopped writes, a pod that is restarting does not stop the restore from going on.
    assert.equal(kind({ ...start, db: { ...stopped, ready: false } }), 'start-restore-job');
  });

  it('refuses what cannot be restored, with the reason, leaving the data as it was', () => {
    const cases: Array<[RestoreObservation, string]> = [
      [{ ...start, db: undefined }, 'SampleDBNotFound'],
      [{ ...start, source: undefined }, 'BackupNotFound'],
      [
        { ...start, source: { phase: 'Completed', ofSampleDb: 'other', checksum: CHECKSUM } },
        'BackupOfAnotherSampleDB',
      ],
      [{ ...start, source: { phase: 'Failed', ofSampleDb: 'orders' } }, 'BackupFailed'],
      [{ ...start, otherRestoreRunning: 'earlier' }, 'RestoreInProgress'],
    ];
    for (const [observation, reason] of cases) {
      const action = finish(observation);
      assert.equal(action.phase, 'Failed', reason);
      assert.equal(action.reason, reason);
    }
  });

  it('lets clients back before reporting a refusal that came after writes were stopped', () => {
    assert.equal(kind({ ...start, source: undefined, db: stopped }), 'resume-writes');
  });

  it('a failed restore Job changed nothing: clients back, the unfinished copy dropped, Failed with the reason', () => {
    const cases: Array<[string, string, string]> = [
      ['pg_restore into a new database failed, the live data is unchanged: bad', 'RestoreFailed', 'restore'],
      ['verification failed: these tables differ', 'VerificationFailed', 'verify'],
      ['switch failed: database "app" is being accessed by other users', 'SwitchFailed', 'switch'],
    ];
    for (const [message, reason, step] of cases) {
      const failed = { ...start, db: stopped, restoreJob: failedJob(message) };
      assert.equal(kind(failed), 'resume-writes', reason);
      const back = { ...failed, db: open };
      assert.deepEqual(planRestore(back), { kind: 'start-cleanup-job', databases: ['app_sdb_restoring'] });
      assert.equal(kind({ ...back, cleanupJob: { state: 'running' } }), 'wait');
      const action = finish({ ...back, cleanupJob: { state: 'succeeded' } });
      assert.equal(action.phase, 'Failed');
      assert.equal(action.reason, reason);
      assert.match(action.message, /Nothing was changed: the live data is as it was\./);
      const shown = restoreSteps({ ...back, cleanupJob: { state: 'succeeded' } });
      assert.equal(shown.find((s) => s.name === step)?.state, 'Failed', reason);
      assert.equal(shown.find((s) => s.name === step)?.message, message);
      assert.equal(stateOf(back, 'safety-backup'), 'Skipped');
      assert.equal(stateOf({ ...back, cleanupJob: { state: 'succeeded' } }, 'resume-writes'), 'Done');
    }
    const verifyFailed = { ...start, db: open, restoreJob: failedJob('verification failed: x') };
    assert.deepEqual(
      restoreSteps(verifyFailed)
        .slice(1, 4)
        .map((s) => s.state),
      ['Done', 'Failed', 'Skipped'],
    );
  });

  it('says so when the unfinished copy could not be dropped', () => {
    const action = finish({
      ...start,
      db: open,
      restoreJob: failedJob('pg_restore into a new database failed'),
      cleanupJob: failedJob('connection refused'),
    });
    assert.equal(action.phase, 'Failed');
    assert.match(action.message, /app_sdb_restoring.*connection refused.*drop it by hand/);
  });

  it('keeps the replaced data when its safety backup fails or it cannot be dropped: Completed, saying where it is', () => {
    const safetyFailed = finish({
      ...switched,
      safety: { phase: 'Failed', message: 'disk full', ofPrevious: true },
    });
    assert.equal(safetyFailed.phase, 'Completed');
    assert.equal(safetyFailed.reason, 'PreviousDataKept');
    assert.match(safetyFailed.message, /disk full.*stays in database app_sdb_pre_0123abcd/);
    assert.equal(
      stateOf(
        { ...switched, safety: { phase: 'Failed', message: 'disk full', ofPrevious: true } },
        'cleanup',
      ),
      'Skipped',
    );
    const dropFailed = finish({ ...backedUp, cleanupJob: failedJob('timeout') });
    assert.equal(dropFailed.reason, 'PreviousDataKept');
    assert.match(dropFailed.message, /app_sdb_pre_0123abcd/);
  });

  it('is the same decision after a restart: it depends on the observation only', () => {
    for (const o of [start, { ...start, db: stopped }, switched, backedUp]) {
      assert.deepEqual(planRestore(structuredClone(o)), planRestore(o));
      assert.deepEqual(restoreSteps(structuredClone(o)), restoreSteps(o));
    }
  });
});

describe('planRestore for a restore an operator before ADR 0014 started', () => {
  const legacySafety = { phase: 'Completed', ofPrevious: false };

  it('a legacy restore Job that failed is rolled back with its safety backup, then clients are let back', () => {
    const failed = {
      ...start,
      safety: legacySafety,
      db: stopped,
      restoreJob: {
        ...failedJob('verification failed: after the restore these tables differ'),
        legacy: true,
      },
    };
    assert.equal(kind(failed), 'start-rollback-job');
    assert.equal(kind({ ...failed, rollbackJob: { state: 'running' } }), 'wait');
    assert.equal(kind({ ...failed, rollbackJob: { state: 'succeeded' } }), 'resume-writes');
    const rolledBack = finish({ ...failed, db: open, rollbackJob: { state: 'succeeded' } });
    assert.equal(rolledBack.phase, 'RolledBack');
    assert.match(rolledBack.message, /the safety backup was put back.*app_sdb_pre_0123abcd/);
    assert.deepEqual(states({ ...failed, db: open, rollbackJob: { state: 'succeeded' } }), [
      'safety-backup:Done',
      'stop-writes:Done',
      'restore:Done',
      'verify:Failed',
      'resume-writes:Done',
      'rollback:Done',
    ]);
  });

  it('keeps writes stopped when putting the safety backup back fails too, and says what to do', () => {
    const action = finish({
      ...start,
      safety: legacySafety,
      db: stopped,
      restoreJob: { ...failedJob('pg_restore: error'), legacy: true },
      rollbackJob: failedJob('pg_restore: error again'),
    });
    assert.equal(action.reason, 'RollbackFailed');
    assert.match(action.message, /writes stay stopped/);
  });

  it('a legacy restore Job that succeeded finishes as before', () => {
    const done = {
      ...start,
      safety: legacySafety,
      db: open,
      restoreJob: { state: 'succeeded' as const, legacy: true },
    };
    assert.equal(finish(done).phase, 'Completed');
  });

  it('a legacy safety backup taken before the restore Job existed: the switch goes on, the replaced data is kept', () => {
    assert.equal(kind({ ...start, safety: legacySafety }), 'stop-writes');
    const action = finish({ ...switched, safety: legacySafety });
    assert.equal(action.phase, 'Completed');
    assert.equal(action.reason, 'PreviousDataKept');
    assert.match(action.message, /taken before writes were stopped/);
  });
});
