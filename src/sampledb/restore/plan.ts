// What to do next for an in-place restore (SampleDBRestore, ADR 0014), decided from what the cluster shows and
// nothing else: the operator can be killed between any two writes and the next run picks up where this one stopped.
// Every action is idempotent (deterministic names, created once; an annotation set or removed).
//
// The live database is never changed in place: the restore Job restores into a new database, checks it and switches
// the names in one transaction. So a failed restore Job means nothing was changed, and after a succeeded one the
// replaced data is a database of its own, dropped only once its safety backup has completed.
import type { RestorePhase, RestoreStepName, SampleDbRestoreStatus } from '../../api/index.ts';
import { SWITCH_FAILURE_PREFIX, VERIFY_FAILURE_PREFIX } from '../scripts/in-place-restore.ts';

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
  /**
   * This restore's safety backup, once created. `ofPrevious`: it backs up the previous database (created after the
   * switch); false for one an operator before ADR 0014 took of the live data before the restore.
   */
  safety?: { phase?: string; message?: string; ofPrevious: boolean };
  /** `legacy`: a Job of an operator before ADR 0014, which restored over the live data. */
  restoreJob?: JobState & { legacy?: boolean };
  /** The Job that drops the unfinished copy after a failure, or the previous database after its safety backup. */
  cleanupJob?: JobState;
  /** Only for a legacy restore Job that failed: the Job that put its safety backup back. */
  rollbackJob?: JobState;
  /** Name of this SampleDBRestore and of the SampleDB it names. */
  name: string;
  sampleDbName: string;
  /** The database the switch renames the live one to (`restorePreviousDatabase`). */
  previousDatabase: string;
  /** The database the restore Job restores into (`restoreStagingDatabase`). */
  stagingDatabase: string;
  /** Another restore of the same SampleDB that is not finished (only one at a time). */
  otherRestoreRunning?: string;
}

export type RestoreAction =
  | { kind: 'wait'; step: RestoreStepName; message: string }
  | { kind: 'stop-writes' }
  | { kind: 'start-restore-job' }
  | { kind: 'resume-writes' }
  | { kind: 'create-safety-backup' }
  | { kind: 'start-cleanup-job'; databases: string[] }
  | { kind: 'start-rollback-job' }
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

/** Resume writes first, then wait for the Service to route again; undefined once clients are back. */
function clientsFirst(o: RestoreObservation): RestoreAction | undefined {
  if (o.db?.writesStoppedBy === o.name) return { kind: 'resume-writes' };
  if (o.db?.serviceBlocked) return clientsBack;
  return undefined;
}

/** Why a restore Job failed, as the condition's reason. */
function failureReason(message: string): string {
  if (message.includes(VERIFY_FAILURE_PREFIX)) return 'VerificationFailed';
  if (message.includes(SWITCH_FAILURE_PREFIX)) return 'SwitchFailed';
  return 'RestoreFailed';
}

export function planRestore(o: RestoreObservation): RestoreAction {
  const job = o.restoreJob;
  if (job?.legacy) return planLegacy(o, job);
  if (job?.state === 'running')
    return {
      kind: 'wait',
      step: 'restore',
      message: 'pg_restore is restoring the backup into a new database; it is checked, then switched in.',
    };
  if (job?.state === 'failed') {
    const back = clientsFirst(o);
    if (back) return back;
    const cleanup = o.cleanupJob;
    if (!cleanup) return { kind: 'start-cleanup-job', databases: [o.stagingDatabase] };
    if (cleanup.state === 'running')
      return { kind: 'wait', step: 'cleanup', message: 'Dropping the unfinished copy.' };
    const leftover =
      cleanup.state === 'failed'
        ? ` Dropping the unfinished copy (database ${o.stagingDatabase}) failed (${cleanup.message}); drop it by hand.`
        : '';
    return fail(
      failureReason(job.message),
      `The restore failed (${job.message}). Nothing was changed: the live data is as it was.${leftover}`,
    );
  }
  if (job?.state === 'succeeded') return planAfterSwitch(o);

  // Nothing replaced yet: a refusal leaves the data as it was.
  const refused = refusal(o);
  if (refused) return clientsFirst(o) ?? refused;
  if (o.source?.phase !== 'Completed' || !o.source.checksum)
    return { kind: 'wait', step: 'stop-writes', message: 'Waiting for the backup to restore to complete.' };
  if (o.db?.writesStoppedBy !== o.name) {
    if (!o.db?.ready)
      return { kind: 'wait', step: 'stop-writes', message: 'Waiting for the SampleDB to be Ready.' };
    return { kind: 'stop-writes' };
  }
  if (!o.db.serviceBlocked)
    return { kind: 'wait', step: 'stop-writes', message: 'Waiting for the client Service to select no pod.' };
  return { kind: 'start-restore-job' };
}

/** The backup is live under the SampleDB's database name: clients back, then the replaced data backed up, dropped. */
function planAfterSwitch(o: RestoreObservation): RestoreAction {
  const back = clientsFirst(o);
  if (back) return back;
  const restored = 'The backup was restored and checked; clients can connect again.';
  const kept = (why: string): RestoreAction => ({
    kind: 'finish',
    phase: 'Completed',
    reason: 'PreviousDataKept',
    message: `${restored} ${why}, so the data it replaced stays in database ${o.previousDatabase} on the server: drop it when it is no longer needed.`,
  });
  if (!o.safety) return { kind: 'create-safety-backup' };
  if (o.safety.phase === 'Failed') return kept(`The safety backup failed (${o.safety.message ?? 'see it'})`);
  if (o.safety.phase !== 'Completed')
    return {
      kind: 'wait',
      step: 'safety-backup',
      message: `${restored} Backing up the data it replaced (database ${o.previousDatabase}).`,
    };
  // Taken of the live data before the restore (an older operator): later writes are only in the previous database.
  if (!o.safety.ofPrevious) return kept('The safety backup was taken before writes were stopped');
  const cleanup = o.cleanupJob;
  if (!cleanup) return { kind: 'start-cleanup-job', databases: [o.previousDatabase, o.stagingDatabase] };
  if (cleanup.state === 'running')
    return { kind: 'wait', step: 'cleanup', message: `Dropping database ${o.previousDatabase} (backed up).` };
  if (cleanup.state === 'failed') return kept(`Dropping it failed (${cleanup.message})`);
  return {
    kind: 'finish',
    phase: 'Completed',
    reason: 'Restored',
    message: `${restored} The data it replaced is in the safety backup.`,
  };
}

/** A restore Job of an operator before ADR 0014 restored over the live data: a failure puts the safety backup back. */
function planLegacy(o: RestoreObservation, job: JobState): RestoreAction {
  if (job.state === 'running')
    return { kind: 'wait', step: 'restore', message: 'pg_restore is replacing the data, then checks it.' };
  if (job.state === 'succeeded')
    return (
      clientsFirst(o) ?? {
        kind: 'finish',
        phase: 'Completed',
        reason: 'Restored',
        message: 'The backup was restored and checked; clients can connect again.',
      }
    );
  if (!o.rollbackJob) return { kind: 'start-rollback-job' };
  if (o.rollbackJob.state === 'running')
    return { kind: 'wait', step: 'rollback', message: 'The restore failed: putting the safety backup back.' };
  if (o.rollbackJob.state === 'failed')
    // Writes stay stopped: the data is in an unknown state and clients must not write into it.
    return fail(
      'RollbackFailed',
      `The restore failed (${job.message}) and putting the safety backup back failed too (${o.rollbackJob.message}); writes stay stopped. Restore the safety backup into a new SampleDB (bootstrap.fromBackup) or retry with a new SampleDBRestore of it.`,
    );
  return (
    clientsFirst(o) ?? {
      kind: 'finish',
      phase: 'RolledBack',
      reason: 'RolledBack',
      message: `The restore failed (${job.message}); the safety backup was put back. The data of the failed restore is in database ${o.previousDatabase}: drop it when it is no longer needed.`,
    }
  );
}

type StepStatus = NonNullable<SampleDbRestoreStatus['steps']>[number];
type State = StepStatus['state'];

const failedWith = (j: JobState | undefined) =>
  j?.state === 'failed' ? { message: j.message.slice(-512) } : {};

const jobStep = (j: JobState | undefined): State =>
  !j ? 'Pending' : j.state === 'running' ? 'Running' : j.state === 'succeeded' ? 'Done' : 'Failed';

/** Each step's state, for the status: derived from the same observation, so it is right after a restart too. */
export function restoreSteps(o: RestoreObservation): StepStatus[] {
  const job = o.restoreJob;
  if (job?.legacy) return legacySteps(o);
  const failedAt =
    job?.state !== 'failed'
      ? undefined
      : job.message.includes(VERIFY_FAILURE_PREFIX)
        ? 'verify'
        : job.message.includes(SWITCH_FAILURE_PREFIX)
          ? 'switch'
          : 'restore';
  const order = ['restore', 'verify', 'switch'] as const;
  const part = (name: (typeof order)[number]): State => {
    if (!job || job.state === 'running') return job && name === 'restore' ? 'Running' : 'Pending';
    if (job.state === 'succeeded' || !failedAt) return 'Done';
    const at = order.indexOf(failedAt);
    const mine = order.indexOf(name);
    return mine < at ? 'Done' : mine === at ? 'Failed' : 'Skipped';
  };
  const stoppedByMe = o.db?.writesStoppedBy === o.name;
  const finished = job !== undefined && job.state !== 'running';
  const stop: State =
    job || (stoppedByMe && o.db?.serviceBlocked) ? 'Done' : stoppedByMe ? 'Running' : 'Pending';
  const resume: State = !finished ? 'Pending' : stoppedByMe || o.db?.serviceBlocked ? 'Running' : 'Done';
  const safety: State =
    job?.state === 'failed'
      ? 'Skipped'
      : !o.safety
        ? 'Pending'
        : o.safety.phase === 'Completed'
          ? 'Done'
          : o.safety.phase === 'Failed'
            ? 'Failed'
            : 'Running';
  const cleanup: State =
    job?.state === 'succeeded' && (o.safety?.phase === 'Failed' || o.safety?.ofPrevious === false)
      ? 'Skipped'
      : jobStep(o.cleanupJob);
  return [
    { name: 'stop-writes', state: stop },
    { name: 'restore', state: part('restore'), ...(failedAt === 'restore' ? failedWith(job) : {}) },
    { name: 'verify', state: part('verify'), ...(failedAt === 'verify' ? failedWith(job) : {}) },
    { name: 'switch', state: part('switch'), ...(failedAt === 'switch' ? failedWith(job) : {}) },
    { name: 'resume-writes', state: resume },
    {
      name: 'safety-backup',
      state: safety,
      ...(o.safety?.message && safety === 'Failed' ? { message: o.safety.message } : {}),
    },
    { name: 'cleanup', state: cleanup, ...(cleanup === 'Failed' ? failedWith(o.cleanupJob) : {}) },
  ];
}

/** The steps of a restore an operator before ADR 0014 started, as it showed them. */
function legacySteps(o: RestoreObservation): StepStatus[] {
  const job = o.restoreJob;
  const verifyFailed = job?.state === 'failed' && job.message.includes(VERIFY_FAILURE_PREFIX);
  const stoppedByMe = o.db?.writesStoppedBy === o.name;
  const finished =
    job?.state === 'succeeded' || (job?.state === 'failed' && o.rollbackJob?.state === 'succeeded');
  const restore: State =
    job?.state === 'running' ? 'Running' : job?.state === 'succeeded' || verifyFailed ? 'Done' : 'Failed';
  const verify: State =
    job?.state === 'succeeded'
      ? 'Done'
      : verifyFailed
        ? 'Failed'
        : job?.state === 'failed'
          ? 'Skipped'
          : 'Pending';
  const rollback: State =
    job?.state === 'failed' ? jobStep(o.rollbackJob) : job?.state === 'succeeded' ? 'Skipped' : 'Pending';
  return [
    { name: 'safety-backup', state: 'Done' },
    { name: 'stop-writes', state: 'Done' },
    { name: 'restore', state: restore, ...(restore === 'Failed' ? failedWith(job) : {}) },
    { name: 'verify', state: verify, ...(verify === 'Failed' ? failedWith(job) : {}) },
    { name: 'resume-writes', state: finished && !stoppedByMe ? 'Done' : finished ? 'Running' : 'Pending' },
    { name: 'rollback', state: rollback, ...(rollback === 'Failed' ? failedWith(o.rollbackJob) : {}) },
  ];
}
