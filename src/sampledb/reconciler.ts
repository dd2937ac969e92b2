// The SampleDB reconciler: an ordered table of steps (see steps/context.ts for their shape). Whatever happens, the
// status is written last from what the steps returned, so it always reflects this reconcile. A SampleDB being
// deleted runs the deletion instead (deletion/step.ts).
import { EVENT_REASONS, FINALIZER, type SampleDbObject } from '../api/index.ts';
import {
  ApiError,
  describeError,
  type ReconcileContext,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
} from '../runtime/index.ts';
import { settleClaimsOfGone } from './deletion/gone.ts';
import { DELETION_WRITES, runDeletion } from './deletion/step.ts';
import { resolveInstance } from './instance.ts';
import { CONFIGMAPS, SAMPLEDBS, SECRETS } from './resources.ts';
import { reportBackupHealth } from './steps/backup-health.ts';
import { enforceRetention } from './steps/backup-retention.ts';
import { scheduleBackups } from './steps/backup-schedule.ts';
import { ensureBackupPvc } from './steps/backup-volume.ts';
import { applyConfig, applyServices } from './steps/configuration.ts';
import type { Observation, SampleDbDeps, SampleDbSubject, Step, StepBase } from './steps/context.ts';
import { ensureCredentials } from './steps/credentials.ts';
import { holdDataVolumes } from './steps/data-volumes.ts';
import { ensureFinalizer } from './steps/finalizer.ts';
import { ensureInitJob } from './steps/init-job.ts';
import { runMajorUpgrade } from './steps/major-upgrade.ts';
import { applyMigrations } from './steps/migrations.ts';
import { ensureMonitoring } from './steps/monitoring.ts';
import { publishConnection } from './steps/publish.ts';
import { reconcileReplication } from './steps/replication.ts';
import { runSteps, type StepsRun } from './steps/run.ts';
import { growStorage } from './steps/storage.ts';
import { keepSynchronousReplication } from './steps/synchronous.ts';
import { validateSpec } from './steps/validate.ts';
import { reportVersion } from './steps/version.ts';
import { applyStatefulSet } from './steps/workload.ts';
import { writeStatus } from './steps/write-status.ts';
import { referencedObjects } from './watches.ts';
import { Writer } from './writer.ts';

/** The order matters: each step may rely on what the ones before it created or observed. */
export const LIVE_STEPS: readonly Step[] = [
  validateSpec,
  ensureFinalizer,
  // Early: a claim deleted with its namespace must be retained before a later step fails on the namespace's refusals
  // (it takes no creates). The StatefulSet's controller makes the claims; their watch events bring this step back.
  holdDataVolumes,
  ensureCredentials,
  ensureMonitoring,
  applyConfig,
  applyServices,
  // Before the StatefulSet: its pods mount the election record this step publishes.
  reconcileReplication,
  // After the election: it sets synchronous_standby_names on the instances the record names.
  keepSynchronousReplication,
  ensureBackupPvc,
  // Before the StatefulSet: it decides the image and replicas while a major upgrade runs.
  runMajorUpgrade,
  applyStatefulSet,
  growStorage,
  ensureInitJob,
  reportVersion,
  // After the version step: migrations run once the server reports its version and no upgrade runs.
  applyMigrations,
  publishConnection,
  // Last: it needs the full observation to know the database is Ready.
  scheduleBackups,
  enforceRetention,
  reportBackupHealth,
];

/** How soon to look again while a referenced object's by-name watch has not listed yet. */
const REFERENCE_WAIT_MS = 200;

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
    if (!db) {
      // A claim event of a SampleDB that is gone: our finalizer must not keep its claims forever.
      if (!rc.signal.aborted) await settleClaimsOfGone(req, view, new Writer(this.#deps.client), rc.log);
      return undefined;
    }
    // A user object the spec just named is watched by name from now on: until that watch has listed, "not found"
    // would be a guess (and a wrong status). Its first list takes milliseconds.
    const { secrets, configMaps } = referencedObjects(db);
    const unknown = [
      ...secrets.filter((r) => !view.knows(SECRETS, r.namespace, r.name)),
      ...configMaps.filter((r) => !view.knows(CONFIGMAPS, r.namespace, r.name)),
    ];
    if (unknown.length > 0) return { requeueAfter: REFERENCE_WAIT_MS };
    const instance = resolveInstance(db, this.#deps.defaults);
    // Every child a step creates is announced on the SampleDB (a Normal Created Event).
    const write = new Writer(this.#deps.client, undefined, { announceCreatedOn: db });
    const ctx: StepBase & SampleDbSubject & { write: Writer } = {
      instance,
      view,
      write,
      log: rc.log,
      signal: rc.signal,
      now: this.#deps.now ?? (() => new Date()),
    };
    const status = (run: Pick<StepsRun<Observation>, 'observed' | 'conditions' | 'overrides'>) =>
      writeStatus(instance, run, view, write.only(['status', 'event']), ctx.now());

    if (db.metadata.deletionTimestamp) {
      if (!db.metadata.finalizers?.includes(FINALIZER)) return undefined;
      // The deletion reports its own steps (deletion/execute.ts); what it creates (a final backup) is one of them.
      const deletion = await runDeletion({
        ...ctx,
        write: new Writer(this.#deps.client, DELETION_WRITES),
        observed: {},
      });
      if (deletion.removed || rc.signal.aborted) return undefined;
      await status({ observed: {}, conditions: deletion.outcome.conditions ?? [], overrides: [] });
      return requeue(deletion.outcome.requeueAfterMs);
    }
    let run: StepsRun<Observation>;
    try {
      run = await runSteps(this.#steps, ctx, {});
    } catch (err) {
      // A child the apiserver refuses (a 422 admission did not catch) is the user's to fix: say so in the status and
      // an Event, then fail the reconcile so the controller retries with its growing delay.
      if (err instanceof ApiError && err.status === 422 && !rc.signal.aborted)
        await this.#reportRejected(db, rejectionMessage(err), status, write, rc);
      throw err;
    }
    if (!run.aborted) await status(run);
    return requeue(run.requeueAfterMs);
  }

  async #reportRejected(
    db: SampleDbObject,
    message: string,
    status: (run: Pick<StepsRun<Observation>, 'observed' | 'conditions' | 'overrides'>) => Promise<unknown>,
    write: Writer,
    rc: ReconcileContext,
  ): Promise<void> {
    try {
      await status({ observed: { rejectedChild: message }, conditions: [], overrides: [] });
      await write.only(['event']).event({
        regarding: db,
        type: 'Warning',
        reason: EVENT_REASONS.childRejected,
        action: 'Apply',
        note: message.slice(0, 1024),
      });
    } catch (reportErr) {
      rc.log.warn({ err: describeError(reportErr) }, 'could not report the refused child');
    }
  }
}

/** The apiserver's own words (metav1.Status message), without the request line. */
function rejectionMessage(err: ApiError): string {
  const body = err.body as { message?: unknown } | undefined;
  return typeof body?.message === 'string' ? body.message : err.message;
}
