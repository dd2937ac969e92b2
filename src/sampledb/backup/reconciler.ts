// The SampleDBBackup controller: runs the backup steps (steps.ts) once the database serves, and writes the status
// (status.ts) from what they observed. A finished backup is never touched again; its end is also an Event.
import { isDeepStrictEqual } from 'node:util';
import { API_VERSION, EVENT_REASONS, KINDS } from '../../api/index.ts';
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
    const write = new Writer(this.#deps.client);
    if (backup.status?.phase === 'Completed' || backup.status?.phase === 'Failed') {
      await this.#releaseJob(req.namespace, req.name, write);
      return undefined;
    }

    const subject = { backup, defaults: this.#deps.defaults ?? {} };
    const run = await runSteps(
      BACKUP_STEPS,
      { ...subject, view, write, log: rc.log, signal: rc.signal, now },
      {},
    );
    if (run.aborted) return undefined;

    const status = backupStatusFor(backup, run.observed, now());
    if (isDeepStrictEqual(JSON.parse(JSON.stringify(status)), backup.status ?? {})) return undefined;
    await write.only(['status']).applyStatus(SAMPLEDB_BACKUPS, {
      apiVersion: API_VERSION,
      kind: KINDS.sampleDbBackup,
      metadata: { name: req.name, namespace: req.namespace },
      status,
    });
    if (status.phase === 'Completed' || status.phase === 'Failed') {
      const completed = status.phase === 'Completed';
      await write
        .only(['event'])
        .event({
          regarding: backup,
          type: completed ? 'Normal' : 'Warning',
          reason: completed ? EVENT_REASONS.backupCompleted : EVENT_REASONS.backupFailed,
          action: 'Backup',
          note: status.message ?? status.phase,
        })
        .catch((err: unknown) => rc.log.warn({ err: describeError(err) }, 'could not record event'));
      await this.#releaseJob(req.namespace, req.name, write);
    }
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
