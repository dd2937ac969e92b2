// Verification of a Completed SampleDBBackup (spec.backup.verify of its SampleDB): the steps that start the verify Job
// and the status from what it reported. Pure except for the steps' one write (the Job, created once).
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import {
  BACKUP_CONDITIONS,
  CONTAINERS,
  REASONS,
  type SampleDbBackupObject,
  type SampleDbBackupStatus,
} from '../../api/index.ts';
import { type Condition, type ConditionInput, mergeConditions, metaTime } from '../../runtime/index.ts';
import { verifyJobName } from '../names.ts';
import { JOBS, PODS } from '../resources.ts';
import { parseVerifyResult } from '../scripts/verify.ts';
import type { Step } from '../steps/context.ts';
import { verifyJob } from '../verify-job.ts';
import { scriptJobOutcome } from './job-outcome.ts';
import { type BackupObservation, type BackupSubject, findSampleDb } from './steps.ts';

type Verification = NonNullable<SampleDbBackupStatus['verification']>;

export interface VerifyObservation extends BackupObservation {
  verifyJob?: V1Job;
  verifyPods?: readonly V1Pod[];
}

type VerifyStep = Step<VerifyObservation, BackupSubject>;

export const observeVerifyJob: VerifyStep = {
  name: 'verify-job',
  writes: [],
  async run({ backup, view }) {
    const job = view.get(JOBS, backup.metadata.namespace ?? '', verifyJobName(backup.metadata.name ?? ''));
    if (!job) return undefined;
    return { observed: { verifyJob: job, verifyPods: view.ownedBy(PODS, job.metadata.uid) }, halt: true };
  },
};

export const startVerifyJob: VerifyStep = {
  name: 'start-verify-job',
  writes: ['create-once'],
  async run({ backup, observed, write, log }) {
    const instance = observed.instance;
    if (!instance) return { halt: true };
    const job = verifyJob(instance, backup);
    const created = await write.createOnce(JOBS, job);
    log.info({ job: job.metadata?.name }, 'verification Job created');
    return { observed: { verifyJob: created ?? job, verifyPods: [], started: true } };
  },
};

export const VERIFY_STEPS: readonly VerifyStep[] = [findSampleDb, observeVerifyJob, startVerifyJob];

/** Whether a backup's verification still has to run or finish. */
export function verificationOpen(backup: SampleDbBackupObject): boolean {
  const phase = backup.status?.verification?.phase;
  return backup.status?.phase === 'Completed' && (phase === 'Pending' || phase === 'Running');
}

const verifiedCondition = (status: 'True' | 'False', reason: string, message: string): ConditionInput => ({
  type: BACKUP_CONDITIONS.verified,
  status,
  reason,
  message,
});

/** What a backup's status says when it completes and its SampleDB verifies backups. */
export function pendingVerification(
  previous: readonly Condition[],
  now: Date,
): Pick<SampleDbBackupStatus, 'verification' | 'conditions'> {
  const message = 'Waiting for the verification Job to restore and check the dump.';
  return {
    verification: { phase: 'Pending', message },
    conditions: mergeConditions(
      [...previous],
      [verifiedCondition('False', REASONS.verificationPending, message)],
      now,
    ),
  };
}

/** The status after the verification steps ran: Running, Verified or Failed, with the measured restore time. */
export function verificationStatusFor(
  backup: SampleDbBackupObject,
  observed: VerifyObservation,
  now: Date,
): SampleDbBackupStatus {
  const previous = backup.status ?? {};
  const prior = (previous.conditions ?? []) as Condition[];
  const startedAt = previous.verification?.startedAt ?? metaTime(now);
  const finish = (verification: Verification, verified: boolean, condition: ConditionInput) => ({
    ...previous,
    verified,
    verification,
    conditions: mergeConditions(prior, [condition], now),
  });
  if (!observed.instance) {
    const message = `SampleDB ${backup.spec.sampleDB.name} is gone: there is no verification to run.`;
    return finish(
      { phase: 'Failed', startedAt, completedAt: metaTime(now), message },
      false,
      verifiedCondition('False', REASONS.sampleDbNotFound, message),
    );
  }
  const job = observed.verifyJob;
  const outcome =
    !job || observed.started
      ? ({ phase: 'Running' } as const)
      : scriptJobOutcome(job, observed.verifyPods ?? [], CONTAINERS.verify, parseVerifyResult);
  switch (outcome.phase) {
    case 'Running': {
      const message = 'Restoring the dump into a temporary server to check it.';
      return {
        ...previous,
        verification: { phase: 'Running', startedAt, message },
        conditions: mergeConditions(prior, [verifiedCondition('False', REASONS.verifying, message)], now),
      };
    }
    case 'Succeeded': {
      const r = outcome.result;
      const restoreSeconds = Math.round(r.restoreMs) / 1000;
      const message = `Restored in ${restoreSeconds} s into a temporary server: ${r.tables} tables, ${r.rows} rows as recorded when the backup was taken${r.query ? ', and the verification query returned the same' : ''}.`;
      return finish(
        {
          phase: 'Verified',
          startedAt,
          completedAt: outcome.finishedAt,
          restoreSeconds,
          tables: r.tables,
          rows: r.rows,
          query: r.query,
          message,
        },
        true,
        verifiedCondition('True', REASONS.verified, message),
      );
    }
    case 'NoResult':
    case 'Failed': {
      const message =
        outcome.phase === 'Failed'
          ? `The backup failed verification: ${outcome.message}`
          : 'The verification Job succeeded but reported no result: the backup is not verified.';
      return finish(
        { phase: 'Failed', startedAt, completedAt: metaTime(now), message },
        false,
        verifiedCondition('False', REASONS.verificationFailed, message),
      );
    }
  }
}
