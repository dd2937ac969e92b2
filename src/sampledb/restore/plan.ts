// What to do next for an in-place restore (SampleDBRestore), decided from what the cluster shows and nothing else:
// the operator can be killed between any two writes and the next run picks up where this one stopped. Every action
// is idempotent (deterministic names, created once; an annotation set or removed), and the data is only ever
// replaced after a Completed safety backup exists, so a failure from then on can always put it back.
import type { RestorePhase, RestoreStepName, SampleDbRestoreStatus } from '../../api/index.ts';
import { VERIFY_FAILURE_PREFIX } from '../scripts/in-place-restore.ts';

export type JobState =
  | { state: 'running' }
  | { state: 'succeeded'; message?: string }
  | { state: 'failed'; message: string };

export interface RestoreObservation {
  /** The SampleDB; absent when it does not exist. */
  db?: {
    ready: boolean;
    /** The SampleDBRestore named by its writes-stopped annotation, if any. */
    writesStoppedBy?: string;
    /** Its client Service selects no pod (the SampleDB controller applied the stop). */
    serviceBlocked: boolean;
  };
  /** The backup to restore. */
  source?: { phase?: string; ofSampleDb: string; checksum?: string };
  /** This restore's safety backup, once created. */
  safety?: { phase?: string; message?: string };
  restoreJob?: JobState;
  rollbackJob?: JobState;
  /** Name of this SampleDBRestore and of the SampleDB it names. */
  name: string;
  sampleDbName: string;
  /** Another restore of the same SampleDB that is not finished (only one at a time). */
  otherRestoreRunning?: string;
}

export type RestoreAction =
  | { kind: 'wait'; step: RestoreStepName; message: string }
  | { kind: 'create-safety-backup' }
  | { kind: 'stop-writes' }
  | { kind: 'start-restore-job' }
  | { kind: 'start-rollback-job' }
  | { kind: 'resume-writes' }
  | {
      kind: 'finish';
      phase: Extract<RestorePhase, 'Completed' | 'Failed' | 'RolledBack'>;
      reason: string;
      message: string;
    };

const fail = (reason: string, message: string): RestoreAction => ({
  kind: 'finish',
  phase: 'Failed',
  reason,
  message,
});

/** Before any data is touched: refuse what cannot be restored, with the reason. */
function refusal(o: RestoreObservation): RestoreAction | undefined {
  if (!o.db) return fail('SampleDBNotFound', `SampleDB ${o.sampleDbName} was not found in this namespace.`);
  if (!o.source)
    return fail('BackupNotFound', 'The SampleDBBackup to restore was not found in this namespace.');
  if (o.source.ofSampleDb !== o.sampleDbName)
    return fail(
      'BackupOfAnotherSampleDB',
      `The backup is of SampleDB ${o.source.ofSampleDb}, not ${o.sampleDbName}; restore it into a new SampleDB with bootstrap.fromBackup.`,
    );
  if (o.source.phase === 'Failed')
    return fail('BackupFailed', 'The backup to restore failed; it holds no data.');
  if (o.otherRestoreRunning)
    return fail(
      'RestoreInProgress',
      `SampleDBRestore ${o.otherRestoreRunning} is restoring this SampleDB; one restore at a time.`,
    );
  return undefined;
}

const clientsBack: RestoreAction = {
  kind: 'wait',
  step: 'resume-writes',
  message: 'Waiting for the client Service to select the database pod again.',
};

export function planRestore(o: RestoreObservation): RestoreAction {
  const stoppedByMe = o.db?.writesStoppedBy === o.name;

  // The data has been (or is being) replaced: finish, or put the safety backup back.
  if (o.restoreJob) {
    if (o.restoreJob.state === 'running')
      return { kind: 'wait', step: 'restore', message: 'pg_restore is replacing the data, then checks it.' };
    if (o.restoreJob.state === 'succeeded') {
      if (stoppedByMe) return { kind: 'resume-writes' };
      if (o.db?.serviceBlocked) return clientsBack;
      return {
        kind: 'finish',
        phase: 'Completed',
        reason: 'Restored',
        message: 'The backup was restored and checked; clients can connect again.',
      };
    }
    if (!o.rollbackJob) return { kind: 'start-rollback-job' };
    if (o.rollbackJob.state === 'running')
      return {
        kind: 'wait',
        step: 'rollback',
        message: 'The restore failed: putting the safety backup back.',
      };
    if (o.rollbackJob.state === 'failed')
      // Writes stay stopped: the data is in an unknown state and clients must not write into it.
      return fail(
        'RollbackFailed',
        `The restore failed (${o.restoreJob.message}) and putting the safety backup back failed too (${o.rollbackJob.message}); writes stay stopped. Restore the safety backup into a new SampleDB (bootstrap.fromBackup) or retry with a new SampleDBRestore of it.`,
      );
    if (stoppedByMe) return { kind: 'resume-writes' };
    if (o.db?.serviceBlocked) return clientsBack;
    return {
      kind: 'finish',
      phase: 'RolledBack',
      reason: 'RolledBack',
      message: `The restore failed (${o.restoreJob.message}); the safety backup was put back, the data is as it was before.`,
    };
  }

  // Nothing replaced yet: a refusal or a failed safety backup leaves the data as it was.
  const refused = refusal(o);
  if (refused) {
    if (stoppedByMe) return { kind: 'resume-writes' };
    return refused;
  }
  if (o.source?.phase !== 'Completed' || !o.source.checksum)
    return { kind: 'wait', step: 'safety-backup', message: 'Waiting for the backup to restore to complete.' };
  if (!o.safety) {
    if (!o.db?.ready)
      return { kind: 'wait', step: 'safety-backup', message: 'Waiting for the SampleDB to be Ready.' };
    return { kind: 'create-safety-backup' };
  }
  if (o.safety.phase === 'Failed') {
    if (stoppedByMe) return { kind: 'resume-writes' };
    return fail(
      'SafetyBackupFailed',
      `The safety backup failed (${o.safety.message ?? 'see it'}); nothing was changed.`,
    );
  }
  if (o.safety.phase !== 'Completed')
    return { kind: 'wait', step: 'safety-backup', message: 'Taking a safety backup of the current data.' };
  if (!stoppedByMe) return { kind: 'stop-writes' };
  if (!o.db?.serviceBlocked)
    return { kind: 'wait', step: 'stop-writes', message: 'Waiting for the client Service to select no pod.' };
  return { kind: 'start-restore-job' };
}

type StepStatus = NonNullable<SampleDbRestoreStatus['steps']>[number];
type State = StepStatus['state'];

/** Each step's state, for the status: derived from the same observation, so it is right after a restart too. */
export function restoreSteps(o: RestoreObservation): StepStatus[] {
  const job = o.restoreJob;
  const verifyFailed = job?.state === 'failed' && job.message.includes(VERIFY_FAILURE_PREFIX);
  const stoppedByMe = o.db?.writesStoppedBy === o.name;
  const finished =
    job?.state === 'succeeded' || (job?.state === 'failed' && o.rollbackJob?.state === 'succeeded');
  const safety: State = !o.safety
    ? 'Pending'
    : o.safety.phase === 'Completed'
      ? 'Done'
      : o.safety.phase === 'Failed'
        ? 'Failed'
        : 'Running';
  const stop: State =
    job || (stoppedByMe && o.db?.serviceBlocked) ? 'Done' : stoppedByMe ? 'Running' : 'Pending';
  const restore: State = !job
    ? 'Pending'
    : job.state === 'running'
      ? 'Running'
      : job.state === 'succeeded' || verifyFailed
        ? 'Done'
        : 'Failed';
  const verify: State = !job
    ? 'Pending'
    : job.state === 'succeeded'
      ? 'Done'
      : verifyFailed
        ? 'Failed'
        : job.state === 'failed'
          ? 'Skipped'
          : 'Pending';
  const resume: State = finished && !stoppedByMe ? 'Done' : finished ? 'Running' : 'Pending';
  const rollback: State =
    job?.state === 'failed'
      ? !o.rollbackJob
        ? 'Pending'
        : o.rollbackJob.state === 'running'
          ? 'Running'
          : o.rollbackJob.state === 'succeeded'
            ? 'Done'
            : 'Failed'
      : job?.state === 'succeeded'
        ? 'Skipped'
        : 'Pending';
  const message = (j: JobState | undefined) =>
    j?.state === 'failed' ? { message: j.message.slice(-512) } : {};
  return [
    {
      name: 'safety-backup',
      state: safety,
      ...(o.safety?.message && safety === 'Failed' ? { message: o.safety.message } : {}),
    },
    { name: 'stop-writes', state: stop },
    { name: 'restore', state: restore, ...(restore === 'Failed' ? message(job) : {}) },
    { name: 'verify', state: verify, ...(verify === 'Failed' ? message(job) : {}) },
    { name: 'resume-writes', state: resume },
    { name: 'rollback', state: rollback, ...(rollback === 'Failed' ? message(o.rollbackJob) : {}) },
  ];
}
