// The SampleDB reconciler: an ordered table of steps, each reading from the cache, building the desired object with a
// pure builder, applying it and recording what it saw. Whatever happens, the status step runs last, so the status
// always reflects this reconcile. A SampleDB being deleted runs the deletion steps instead (deletion/step.ts).
import type { SampleDbObject } from '../api/index.ts';
import type { ReconcileContext, ReconcileRequest, ReconcileResult, Reconciler } from '../runtime/index.ts';
import { runDeletion } from './deletion/step.ts';
import { namesFor } from './names.ts';
import { SAMPLEDBS } from './resources.ts';
import { scheduleBackups } from './steps/backup-schedule.ts';
import { ensureBackupPvc } from './steps/backup-volume.ts';
import { applyConfig, applyServices } from './steps/configuration.ts';
import type { SampleDbDeps, Step, StepContext, StepResult } from './steps/context.ts';
import { ensureCredentials } from './steps/credentials.ts';
import { ensureFinalizer, FINALIZER } from './steps/finalizer.ts';
import { ensureInitJob } from './steps/init-job.ts';
import { ensureMonitoring } from './steps/monitoring.ts';
import { publishConnection } from './steps/publish.ts';
import { growStorage } from './steps/storage.ts';
import { validateSpec } from './steps/validate.ts';
import { applyStatefulSet } from './steps/workload.ts';
import { writeStatus } from './steps/write-status.ts';

/** The order matters: each step may rely on what the ones before it created or observed. */
export const LIVE_STEPS: readonly Step[] = [
  validateSpec,
  ensureFinalizer,
  ensureCredentials,
  ensureMonitoring,
  applyConfig,
  applyServices,
  ensureBackupPvc,
  applyStatefulSet,
  growStorage,
  ensureInitJob,
  publishConnection,
  // Last: it needs the full observation to know the database is Ready.
  scheduleBackups,
];

/** Runs steps in order until one halts; returns the shortest requeue any of them asked for. */
export async function runSteps(steps: readonly Step[], ctx: StepContext): Promise<number | undefined> {
  let requeueAfterMs: number | undefined;
  const want = (result: StepResult | undefined) => {
    if (result?.requeueAfterMs !== undefined)
      requeueAfterMs = Math.min(requeueAfterMs ?? Number.POSITIVE_INFINITY, result.requeueAfterMs);
  };
  for (const step of steps) {
    if (ctx.signal.aborted) break;
    const result = await step.run(ctx);
    want(result);
    if (result && 'halt' in result) {
      ctx.log.debug({ step: step.name }, 'halted');
      break;
    }
  }
  return requeueAfterMs;
}

export class SampleDbReconciler implements Reconciler {
  readonly #deps: SampleDbDeps;

  constructor(deps: SampleDbDeps) {
    this.#deps = deps;
  }

  async reconcile(req: ReconcileRequest, rc: ReconcileContext): Promise<ReconcileResult> {
    const { view, client } = this.#deps;
    const db = view.get<SampleDbObject>(SAMPLEDBS, req.namespace, req.name);
    if (!db) return undefined;
    const ctx: StepContext = {
      db,
      namespace: req.namespace,
      names: namesFor(req.name),
      client,
      view,
      log: rc.log,
      signal: rc.signal,
      now: this.#deps.now ?? (() => new Date()),
      defaults: this.#deps.defaults ?? {},
      observed: {},
      conditions: [],
      overrides: [],
    };
    if (db.metadata.deletionTimestamp) {
      if (!db.metadata.finalizers?.includes(FINALIZER)) return undefined;
      const { removed, result } = await runDeletion(ctx);
      if (removed) return undefined;
      await writeStatus(ctx);
      return result?.requeueAfterMs !== undefined ? { requeueAfter: result.requeueAfterMs } : undefined;
    }
    const requeueAfterMs = await runSteps(LIVE_STEPS, ctx);
    if (!ctx.signal.aborted) await writeStatus(ctx);
    return requeueAfterMs !== undefined ? { requeueAfter: requeueAfterMs } : undefined;
  }
}
