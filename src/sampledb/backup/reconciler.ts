// The SampleDBBackup controller: runs the backup steps (steps.ts) once the database serves, and writes the status
// (status.ts) from what they observed. A finished backup is never touched again; its end is also an Event.
import { isDeepStrictEqual } from 'node:util';
import { API_VERSION, EVENT_REASONS, KINDS, type SampleDbBackupStatus } from '../../api/index.ts';
import {
  describeError,
  type ReconcileContext,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
} from '../../runtime/index.ts';
import { backupJobName } from '../names.ts';
import { JOBS, SAMPLEDB_BACKUPS } from '../resources.ts';
import type { SampleDbDeps } from '../steps/context.ts';
import { runSteps } from '../steps/run.ts';
import { Writer } from '../writer.ts';
import { backupStatusFor } from './status.ts';
import { BACKUP_STEPS } from './steps.ts';
import { VERIFY_STEPS, verificationOpen, verificationStatusFor } from './verification.ts';

export class SampleDbBackupReconciler implements Reconciler {
  readonly #deps: SampleDbDeps;

  constructor(deps: SampleDbDeps) {
    this.#deps = deps;
  }

  async reconcile(req: ReconcileRequest, rc: ReconcileContext): Promise<ReconcileResult> {
    const { view } = this.#deps;
    const now = this.#deps.now ?? (() => new Date());
    const backup = view.get(SAMPLEDB_BACKUPS, req.namespace, req.name);
    if (!backup || backup.metadata.deletionTimestamp) return undefined;
    const verifying = verificationOpen(backup);
    const write = new Writer(this.#deps.client);
    // A finished backup is never run again, except to finish the verification it completed with.
    if ((backup.status?.phase === 'Completed' || backup.status?.phase === 'Failed') && !verifying) {
      await this.#releaseJob(req.namespace, req.name, write);
      return undefined;
    }

    const subject = { backup, defaults: this.#deps.defaults ?? {} };
    const ctx = { ...subject, view, write, log: rc.log, signal: rc.signal, now };
    let status: SampleDbBackupStatus;
    if (verifying) {
      const run = await runSteps(VERIFY_STEPS, ctx, {});
      if (run.aborted) return undefined;
      status = verificationStatusFor(backup, run.observed, now());
    } else {
      const run = await runSteps(BACKUP_STEPS, ctx, {});
      if (run.aborted) return undefined;
      status = backupStatusFor(backup, run.observed, now());
    }
    if (isDeepStrictEqual(JSON.parse(JSON.stringify(status)), backup.status ?? {})) return undefined;
    await write.only(['status']).applyStatusOf(SAMPLEDB_BACKUPS, backup, {
      apiVersion: API_VERSION,
      kind: KINDS.sampleDbBackup,
      metadata: { name: req.name, namespace: req.namespace },
      status,
    });
    const event = finishedEvent(backup.status, status);
    if (event)
      await write
        .only(['event'])
        .event({ regarding: backup, ...event })
        .catch((err: unknown) => rc.log.warn({ err: describeError(err) }, 'could not record event'));
    if (status.phase === 'Completed' || status.phase === 'Failed')
      await this.#releaseJob(req.namespace, req.name, write);
    return undefined;
  }

  /**
   * Once the result is in the SampleDBBackup's status, its Job and pods have nothing more to say: a TTL of 0 lets the
   * Job controller's TTL cleanup delete both (no delete right needed). Before the status, never: the pods'
   * termination messages are the result.
   */
  async #releaseJob(namespace: string, backupName: string, write: Writer): Promise<void> {
    const name = backupJobName(backupName);
    const job = this.#deps.view.get(JOBS, namespace, name);
    if (!job || job.spec?.ttlSecondsAfterFinished === 0) return;
    await write
      .only(['patch'])
      .patch(JOBS, { namespace, name }, { spec: { ttlSecondsAfterFinished: 0 } }, { ifMissing: 'skip' });
  }
}

type FinishedEvent = { type: 'Normal' | 'Warning'; reason: string; action: string; note: string };

const EVENT_OF = {
  backup: {
    Completed: { type: 'Normal', reason: EVENT_REASONS.backupCompleted },
    Failed: { type: 'Warning', reason: EVENT_REASONS.backupFailed },
  },
  verification: {
    Verified: { type: 'Normal', reason: EVENT_REASONS.backupVerified },
    Failed: { type: 'Warning', reason: EVENT_REASONS.backupVerificationFailed },
  },
} as const;

/** The Event for what just finished: the backup itself, or its verification. Pure. */
export function finishedEvent(
  before: SampleDbBackupStatus | undefined,
  after: SampleDbBackupStatus,
): FinishedEvent | undefined {
  const verification = after.verification;
  if (verification && verification.phase !== before?.verification?.phase) {
    const event =
      verification.phase === 'Verified' || verification.phase === 'Failed'
        ? EVENT_OF.verification[verification.phase]
        : undefined;
    if (event) return { ...event, action: 'Verify', note: verification.message ?? verification.phase };
  }
  if (after.phase === before?.phase) return undefined;
  if (after.phase !== 'Completed' && after.phase !== 'Failed') return undefined;
  return { ...EVENT_OF.backup[after.phase], action: 'Backup', note: after.message ?? after.phase };
}
