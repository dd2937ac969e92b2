// The SampleDB reconciler: an ordered table of steps (see steps/context.ts for their shape). Whatever happens, the
// status is written last from what the steps returned, so it always reflects this reconcile. A SampleDB being
// deleted runs the deletion instead (deletion/step.ts).
import { FINALIZER } from '../api/index.ts';
import type { ReconcileContext, ReconcileRequest, ReconcileResult, Reconciler } from '../runtime/index.ts';
import { DELETION_WRITES, runDeletion } from './deletion/step.ts';
import { resolveInstance } from './instance.ts';
import { SAMPLEDBS } from './resources.ts';
import { scheduleBackups } from './steps/backup-schedule.ts';
import { ensureBackupPvc } from './steps/backup-volume.ts';
import { applyConfig, applyServices } from './steps/configuration.ts';
import type { Observation, SampleDbDeps, SampleDbSubject, Step, StepBase } from './steps/context.ts';
import { ensureCredentials } from './steps/credentials.ts';
import { ensureFinalizer } from './steps/finalizer.ts';
import { ensureInitJob } from './steps/init-job.ts';
import { ensureMonitoring } from './steps/monitoring.ts';
import { publishConnection } from './steps/publish.ts';
import { reconcileReplication } from './steps/replication.ts';
import { runSteps, type StepsRun } from './steps/run.ts';
import { growStorage } from './steps/storage.ts';
import { validateSpec } from './steps/validate.ts';
import { applyStatefulSet } from './steps/workload.ts';
import { writeStatus } from './steps/write-status.ts';
import { Writer } from './writer.ts';

/** The order matters: each step may rely on what the ones before it created or observed. */
export const LIVE_STEPS: readonly Step[] = [
  validateSpec,
  ensureFinalizer,
  ensureCredentials,
  ensureMonitoring,
  applyConfig,
  applyServices,
  // Before the StatefulSet: its pods mount the election record this step publishes.
  reconcileReplication,
  ensureBackupPvc,
  applyStatefulSet,
  growStorage,
  ensureInitJob,
  publishConnection,
  // Last: it needs the full observation to know the database is Ready.
  scheduleBackups,
];

const requeue = (ms: number | undefined): ReconcileResult =>
  ms !== undefined ? { requeueAfter: ms } : undefined;

export class SampleDbReconciler implements Reconciler {
  readonly #deps: SampleDbDeps;
  readonly #steps: readonly Step[];

  /** `steps`: the live table (tests pass their own to check the orchestration). */
  constructor(deps: SampleDbDeps, steps: readonly Step[] = LIVE_STEPS) {
    this.#deps = deps;
    this.#steps = steps;
  }

  async reconcile(req: ReconcileRequest, rc: ReconcileContext): Promise<ReconcileResult> {
    const { view } = this.#deps;
    const db = view.get(SAMPLEDBS, req.namespace, req.name);
    if (!db) return undefined;
    const instance = resolveInstance(db, this.#deps.defaults);
    const write = new Writer(this.#deps.client);
    const ctx: StepBase & SampleDbSubject & { write: Writer } = {
      instance,
      view,
      write,
      log: rc.log,
      signal: rc.signal,
      now: this.#deps.now ?? (() => new Date()),
    };
    const status = (run: Pick<StepsRun<Observation>, 'observed' | 'conditions' | 'overrides'>) =>
      writeStatus(instance, run, view, write.only(['status']), ctx.now());

    if (db.metadata.deletionTimestamp) {
      if (!db.metadata.finalizers?.includes(FINALIZER)) return undefined;
      const deletion = await runDeletion({ ...ctx, write: write.only(DELETION_WRITES), observed: {} });
      if (deletion.removed) return undefined;
      await status({ observed: {}, conditions: deletion.outcome.conditions ?? [], overrides: [] });
      return requeue(deletion.outcome.requeueAfterMs);
    }
    const run = await runSteps(this.#steps, ctx, {});
    if (!run.aborted) await status(run);
    return requeue(run.requeueAfterMs);
  }
}
