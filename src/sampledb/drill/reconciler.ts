// The SampleDBDrill controller: observes (observe.ts), asks planDrill (plan.ts) for the next action and performs it,
// writing status.current before any write that cannot be taken back (the fault), so a restarted operator (or the
// next leader, after a kill-operator-leader drill) resumes the run. Each run ends in status.runs, an Event and the
// drill metrics.
import { isDeepStrictEqual } from 'node:util';
import {
  API_VERSION,
  EVENT_REASONS,
  KINDS,
  parseQuantity,
  type SampleDbDrillObject,
  type SampleDbDrillStatus,
} from '../../api/index.ts';
import {
  ConflictError,
  describeError,
  type ReconcileContext,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
} from '../../runtime/index.ts';
import type { SampleDbInstance } from '../instance.ts';
import { resolveInstance } from '../instance.ts';
import { JOBS, NETWORK_POLICIES, PODS, PVCS, SAMPLEDB_DRILLS, SAMPLEDBS } from '../resources.ts';
import type { SampleDbDeps } from '../steps/context.ts';
import { Writer } from '../writer.ts';
import { isolationPolicyName, netcheckName, runJobNames, runPolicyNames } from './names.ts';
import {
  dataClaimOf,
  drillJob,
  type FillTarget,
  fillDiskJob,
  isolationPolicy,
  netcheckJob,
  netcheckPolicy,
  throwawaySampleDb,
} from './objects.ts';
import { dueRun, type OperatorIdentity, observeDrill } from './observe.ts';
import { type DrillAction, planDrill } from './plan.ts';
import { drillStatus } from './status.ts';

export interface DrillDeps extends SampleDbDeps {
  operator: OperatorIdentity;
}

/** While a run is in progress, look again this often even without events (the clock decides timeouts). */
const RUN_REQUEUE_MS = 2_000;
const MAX_IDLE_REQUEUE_MS = 60 * 60_000;

/** fill-disk's volume as the cache shows it now: the pod's node and the claim's capacity. */
function fillTarget(view: DrillDeps['view'], instance: SampleDbInstance, pod: string): FillTarget {
  const running = view.get(PODS, instance.namespace, pod);
  const claim = view.get(PVCS, instance.namespace, dataClaimOf(instance, pod));
  const size =
    claim?.status?.capacity?.storage ??
    claim?.spec?.resources?.requests?.storage ??
    instance.spec.storage.size;
  return {
    pod,
    ...(running?.spec?.nodeName ? { node: running.spec.nodeName } : {}),
    claimBytes: parseQuantity(size) ?? 0,
  };
}

const describeFault = (drill: SampleDbDrillObject, target: string | undefined) =>
  drill.spec.kind === 'fill-disk'
    ? `${drill.spec.kind}: filling the data volume of ${target}.`
    : drill.spec.kind === 'isolate-primary'
      ? `${drill.spec.kind}: a NetworkPolicy denies all traffic to and from ${target}.`
      : `${drill.spec.kind}: deleting ${target}.`;

export class SampleDbDrillReconciler implements Reconciler {
  readonly #deps: DrillDeps;

  constructor(deps: DrillDeps) {
    this.#deps = deps;
  }

  async reconcile(req: ReconcileRequest, rc: ReconcileContext): Promise<ReconcileResult> {
    const { view } = this.#deps;
    const now = (this.#deps.now ?? (() => new Date()))();
    const drill = view.get(SAMPLEDB_DRILLS, req.namespace, req.name);
    if (!drill || drill.metadata.deletionTimestamp) return undefined;
    const o = observeDrill(view, drill, this.#deps.operator, now);
    const action = planDrill(o);
    const write = new Writer(this.#deps.client);
    if (action.kind !== 'idle' && action.kind !== 'wait') rc.log.info({ action: action.kind }, 'drill step');
    const ns = req.namespace;
    const db = view.get(SAMPLEDBS, ns, drill.spec.sampleDB.name);
    const instance = db ? resolveInstance(db, this.#deps.defaults) : undefined;
    const writeStatus = async (status: SampleDbDrillStatus) => {
      if (isDeepStrictEqual(JSON.parse(JSON.stringify(status)), drill.status ?? {})) return;
      await write.only(['status']).applyStatusOf(SAMPLEDB_DRILLS, drill, {
        apiVersion: API_VERSION,
        kind: KINDS.sampleDbDrill,
        metadata: { name: req.name, namespace: ns },
        status,
      });
    };
    const event = (type: 'Normal' | 'Warning', reason: string, note: string) =>
      write
        .only(['event'])
        .event({ regarding: drill, type, reason, action: 'Drill', note })
        .catch((err: unknown) => rc.log.warn({ err: describeError(err) }, 'could not record event'));
    const createFillDiskJob = async (which: 'fill' | 'release', run: number, pod: string) => {
      if (instance)
        await write.createOnce(
          JOBS,
          fillDiskJob(instance, drill, run, which, fillTarget(view, instance, pod)),
        );
    };
    const status = (a: DrillAction) => drillStatus(drill, a, now, dueRun(drill, now).next);
    // isolate-primary's policies are deleted by name: a 404 is a deletion already done (nothing is cached).
    const deletePolicy = (name: string) => write.delete(NETWORK_POLICIES, { namespace: ns, name });
    const isolate = async (run: number, pod: string) => {
      if (instance) await write.createOnce(NETWORK_POLICIES, isolationPolicy(instance, drill, run, pod));
    };

    switch (action.kind) {
      case 'start-run':
        await writeStatus(status(action));
        await event(
          'Normal',
          EVENT_REASONS.drillStarted,
          `Run ${action.current.run} of ${drill.spec.kind} started.`,
        );
        break;
      case 'create-canary':
        if (instance && drill.status?.current)
          await write.createOnce(JOBS, drillJob(instance, drill, drill.status.current.run, 'canary'));
        break;
      case 'inject': {
        // Recorded first: once the deletion is sent, the run must be resumable as "injected".
        await writeStatus(status(action));
        if (action.current.step === 'inject' && drill.status?.current?.step !== 'inject')
          await event(
            'Warning',
            EVENT_REASONS.drillFaultInjected,
            describeFault(drill, action.current.target),
          );
        const target = action.target;
        if (target.kind === 'isolation') {
          await isolate(action.current.run, target.name);
          await deletePolicy(netcheckName(req.name, action.current.run));
          return { requeueAfter: 200 };
        }
        if (target.kind === 'volume') {
          await createFillDiskJob('fill', action.current.run, target.name);
          return { requeueAfter: 1_000 };
        }
        if (target.kind === 'pod')
          await write
            .delete(PODS, { namespace: ns, name: target.name }, { preconditions: { uid: target.uid } })
            .catch((err: unknown) => {
              // A uid precondition that no longer holds is a pod already gone and re-created: the fault happened.
              if (!(err instanceof ConflictError)) throw err;
            });
        else if (this.#deps.operator.namespace)
          await write.delete(PODS, { namespace: this.#deps.operator.namespace, name: target.identity });
        // The pod's deletion is watched; the operator's own pod stops this process (a second request is harmless).
        return { requeueAfter: target.kind === 'pod' ? 200 : 2_000 };
      }
      case 'create-probe':
        if (drill.spec.kind === 'isolate-primary' && action.current.target && !action.current.liftedAt)
          await isolate(action.current.run, action.current.target);
        if (instance) await write.createOnce(JOBS, drillJob(instance, drill, action.current.run, 'probe'));
        await writeStatus(status(action));
        break;
      case 'create-netcheck':
        await writeStatus(status(action));
        if (instance) {
          // The policy first: the check's pod must never run unconfined.
          await write.createOnce(NETWORK_POLICIES, netcheckPolicy(instance, drill, action.current.run));
          await write.createOnce(JOBS, netcheckJob(instance, drill, action.current.run, action.primaryIp));
        }
        break;
      case 'lift-isolation':
        await deletePolicy(isolationPolicyName(req.name, action.current.run));
        await writeStatus(status(action));
        await event(
          'Normal',
          EVENT_REASONS.drillFaultLifted,
          `The isolation of ${action.current.target} was lifted (NetworkPolicy ${isolationPolicyName(req.name, action.current.run)} deleted).`,
        );
        break;
      case 'create-release':
        await writeStatus(status(action));
        if (action.current.target)
          await createFillDiskJob('release', action.current.run, action.current.target);
        break;
      case 'mark-detected':
        await writeStatus(status(action));
        await event(
          'Normal',
          EVENT_REASONS.drillFaultDetected,
          `The operator saw the fault ${(
            (Date.parse(action.current.detectedAt ?? '') - Date.parse(action.current.injectedAt ?? '')) / 1000
          ).toFixed(1)}s after it was injected.`,
        );
        break;
      case 'create-throwaway':
        if (db && drill.status?.current)
          await write.createOnce(
            SAMPLEDBS,
            throwawaySampleDb(db, drill, drill.status.current.run, action.backup),
          );
        break;
      case 'delete-throwaway':
        await writeStatus(status(action));
        if (action.current.target)
          await write.delete(SAMPLEDBS, { namespace: ns, name: action.current.target });
        break;
      case 'finish': {
        // Before the run leaves status.current: once it has, nothing would delete an isolation left behind.
        if (drill.spec.kind === 'isolate-primary')
          for (const name of runPolicyNames(req.name, action.run.run)) await deletePolicy(name);
        await writeStatus(status(action));
        const run = action.run;
        await event(
          run.result === 'Succeeded' ? 'Normal' : 'Warning',
          run.result === 'Succeeded'
            ? EVENT_REASONS.drillSucceeded
            : run.result === 'Refused'
              ? EVENT_REASONS.drillRefused
              : EVENT_REASONS.drillFailed,
          `${drill.spec.kind} run ${run.run}: ${run.reason}: ${run.message}`.slice(0, 1024),
        );
        // The Jobs' results are in status.runs now; their pods would only pile up with every scheduled run. As for
        // backups, the TTL controller removes them (ttlSecondsAfterFinished 0): no delete right on Jobs needed.
        for (const name of runJobNames(req.name, run.run))
          await write.patch(
            JOBS,
            { namespace: ns, name },
            { spec: { ttlSecondsAfterFinished: 0 } },
            { ifMissing: 'skip' },
          );
        break;
      }
      case 'wait':
      case 'idle':
        await writeStatus(status(action));
        break;
    }
    if (action.kind === 'idle') {
      const next = dueRun(drill, now).next;
      return next
        ? { requeueAfter: Math.min(MAX_IDLE_REQUEUE_MS, Math.max(1_000, next.getTime() - now.getTime())) }
        : undefined;
    }
    return { requeueAfter: action.kind === 'wait' ? RUN_REQUEUE_MS : 100 };
  }
}
