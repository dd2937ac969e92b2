// The in-place restore planner: from what the cluster shows to the next action. Walks a restore from start to end,
// the failure paths (before the data is touched: nothing changed; after: the safety backup goes back), and a restart
// at every point giving the same next action.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planRestore, type RestoreObservation, restoreSteps } from '../../../../src/sampledb/restore/plan.ts';

const CHECKSUM = `sha256:${'d'.repeat(64)}`;
const start: RestoreObservation = {
  name: 'undo',
  sampleDbName: 'orders',
  db: { ready: true, serviceBlocked: false },
  source: { phase: 'Completed', ofSampleDb: 'orders', checksum: CHECKSUM },
};
const stopped = { ready: true, writesStoppedBy: 'undo', serviceBlocked: true };
const kind = (o: RestoreObservation) => planRestore(o).kind;
const stateOf = (o: RestoreObservation, step: string) => restoreSteps(o).find((s) => s.name === step)?.state;

describe('planRestore', () => {
  it('walks safety backup → stop writes → restore → resume writes → Completed', () => {
    const steps: Array<[RestoreObservation, string]> = [
      [start, 'create-safety-backup'],
      [{ ...start, safety: { phase: 'Running' } }, 'wait'],
      [{ ...start, safety: { phase: 'Completed' } }, 'stop-writes'],
      [{ ...start, safety: { phase: 'Completed' }, db: { ...stopped, serviceBlocked: false } }, 'wait'],
      [{ ...start, safety: { phase: 'Completed' }, db: stopped }, 'start-restore-job'],
      [{ ...start, safety: { phase: 'Completed' }, db: stopped, restoreJob: { state: 'running' } }, 'wait'],
      [
        { ...start, safety: { phase: 'Completed' }, db: stopped, restoreJob: { state: 'succeeded' } },
        'resume-writes',
      ],
      [
        {
          ...start,
          safety: { phase: 'Completed' },
          db: { ready: true, serviceBlocked: false },
          restoreJob: { state: 'succeeded' },
        },
        'finish',
      ],
    ];
    for (const [observation, expected] of steps)
      assert.equal(kind(observation), expected, JSON.stringify(observation));
    const done = planRestore(steps.at(-1)?.[0] ?? start);
    assert.ok(done.kind === 'finish' && done.phase === 'Completed');
    assert.deepEqual(
      restoreSteps(steps.at(-1)?.[0] ?? start).map((s) => s.state),
      ['Done', 'Done', 'Done', 'Done', 'Done', 'Skipped'],
    );
  });

  it('never touches the data before a Completed safety backup exists, and never without a Ready database', () => {
    assert.equal(kind({ ...start, db: { ready: false, serviceBlocked: false } }), 'wait');
    for (const phase of [undefined, 'Pending', 'Running'])
      assert.equal(kind({ ...start, safety: phase ? { phase } : {}, db: stopped }), 'wait');
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
      [{ ...start, safety: { phase: 'Failed', message: 'disk full' } }, 'SafetyBackupFailed'],
    ];
    for (const [observation, reason] of cases) {
      const action = planRestore(observation);
      assert.ok(action.kind === 'finish' && action.phase === 'Failed', reason);
      assert.equal(action.reason, reason);
    }
  });

  it('lets clients back before reporting a refusal that came after writes were stopped', () => {
    assert.equal(
      kind({ ...start, source: undefined, db: stopped, safety: { phase: 'Completed' } }),
      'resume-writes',
    );
  });

  it('puts the safety backup back when the restore or its check fails, then lets clients back: RolledBack', () => {
    const failed = {
      ...start,
      safety: { phase: 'Completed' },
      db: stopped,
      restoreJob: {
        state: 'failed' as const,
        message: 'verification failed: after the restore these tables differ',
      },
    };
    assert.equal(kind(failed), 'start-rollback-job');
    assert.equal(stateOf(failed, 'restore'), 'Done');
    assert.equal(stateOf(failed, 'verify'), 'Failed');
    assert.equal(kind({ ...failed, rollbackJob: { state: 'running' } }), 'wait');
    assert.equal(kind({ ...failed, rollbackJob: { state: 'succeeded' } }), 'resume-writes');
    const rolledBack = planRestore({
      ...failed,
      db: { ready: true, serviceBlocked: false },
      rollbackJob: { state: 'succeeded' },
    });
    assert.ok(rolledBack.kind === 'finish' && rolledBack.phase === 'RolledBack');
    assert.match(rolledBack.message, /the safety backup was put back/);
  });

  it('keeps writes stopped when putting the safety backup back fails too, and says what to do', () => {
    const action = planRestore({
      ...start,
      safety: { phase: 'Completed' },
      db: stopped,
      restoreJob: { state: 'failed', message: 'pg_restore: error' },
      rollbackJob: { state: 'failed', message: 'pg_restore: error again' },
    });
    assert.ok(action.kind === 'finish' && action.phase === 'Failed');
    assert.equal(action.reason, 'RollbackFailed');
    assert.match(action.message, /writes stay stopped/);
  });

  it('is the same decision after a restart: it depends on the observation only', () => {
    const o = { ...start, safety: { phase: 'Completed' }, db: stopped };
    assert.deepEqual(planRestore(structuredClone(o)), planRestore(o));
  });
});
