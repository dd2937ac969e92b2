// The SampleDBRestore controller: observes the restore's SampleDB, backups, Jobs and client Service from the cache,
// asks planRestore (plan.ts) for the next action, performs it, and writes the status with every step's state. The
// plan is pure and derived from what exists, so a restart at any point resumes the restore where it was (ADR 0014).
import { isDeepStrictEqual } from 'node:util';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import {
  ANNOTATIONS,
  API_VERSION,
  CONTAINERS,
  EVENT_REASONS,
  KINDS,
  RESTORE_CONDITIONS,
  type SampleDbRestoreObject,
  type SampleDbRestoreStatus,
} from '../../api/index.ts';
import {
  type Condition,
  describeError,
  mergeConditions,
  metaTime,
  type ReconcileContext,
  type ReconcileRequest,
  type ReconcileResult,
  type Reconciler,
} from '../../runtime/index.ts';
import { scriptJobOutcome } from '../backup/job-outcome.ts';
import { resolveInstance } from '../instance.ts';
import {
  JOBS,
  PODS,
  SAMPLEDB_BACKUPS,
  SAMPLEDB_RESTORES,
  SAMPLEDBS,
  SERVICES,
  STATEFULSETS,
} from '../resources.ts';
import { parseDropDatabasesResult } from '../scripts/drop-databases.ts';
import { parseInPlaceRestoreResult } from '../scripts/in-place-restore.ts';
import { serviceSelectsNothing } from '../services.ts';
import type { SampleDbDeps } from '../steps/context.ts';
import { Writer } from '../writer.ts';
import {
  cleanupJob,
  cleanupJobName,
  inPlaceRestoreJob,
  restoreDatabases,
  restoreJobName,
  rollbackJobName,
  SWITCH_METHOD,
  safetyBackup,
  safetyBackupName,
} from './objects.ts';
import {
  type JobState,
  planRestore,
  type RestoreAction,
  type RestoreObservation,
  restoreSteps,
} from './plan.ts';

const TERMINAL = new Set(['Completed', 'Failed', 'RolledBack']);

function jobState<T>(
  job: V1Job | undefined,
  pods: readonly V1Pod[],
  parse: (text: string | undefined) => T | undefined,
  describe: (result: T) => string,
): JobState | undefined {
  if (!job) return undefined;
  const outcome = scriptJobOutcome(job, pods, CONTAINERS.restore, parse);
  switch (outcome.phase) {
    case 'Running':
      return { state: 'running' };
    case 'Succeeded':
      return { state: 'succeeded', message: describe(outcome.result) };
    case 'NoResult':
      return { state: 'failed', message: 'the Job succeeded without reporting a result' };
    case 'Failed':
      return { state: 'failed', message: outcome.message };
  }
}

export class SampleDbRestoreReconciler implements Reconciler {
  readonly #deps: SampleDbDeps;

  constructor(deps: SampleDbDeps) {
    this.#deps = deps;
  }

  async reconcile(req: ReconcileRequest, rc: ReconcileContext): Promise<ReconcileResult> {
    const { view } = this.#deps;
    const now = (this.#deps.now ?? (() => new Date()))();
    const restore = view.get(SAMPLEDB_RESTORES, req.namespace, req.name);
    if (!restore || restore.metadata.deletionTimestamp) return undefined;
    if (TERMINAL.has(restore.status?.phase ?? '')) return undefined;
    const ns = req.namespace;
    const dbName = restore.spec.sampleDB.name;
    const db = view.get(SAMPLEDBS, ns, dbName);
    const instance = db ? resolveInstance(db, this.#deps.defaults) : undefined;
    const source = view.get(SAMPLEDB_BACKUPS, ns, restore.spec.backup.name);
    const safety = view.get(SAMPLEDB_BACKUPS, ns, safetyBackupName(req.name));
    const pods = (j: V1Job | undefined) => (j ? view.ownedBy(PODS, j.metadata?.uid) : []);
    const restoreJobOf = (name: string) => {
      const j = view.get(JOBS, ns, name);
      const state = jobState(j, pods(j), parseInPlaceRestoreResult, (r) => `${r.tables} tables checked`);
      return (
        state && { ...state, legacy: j?.metadata?.annotations?.[ANNOTATIONS.restoreMethod] !== SWITCH_METHOD }
      );
    };
    const cleanup = view.get(JOBS, ns, cleanupJobName(req.name));
    const cleanupState = jobState(
      cleanup,
      pods(cleanup),
      parseDropDatabasesResult,
      (r) => `${r.dropped} dropped`,
    );
    const databases = instance ? restoreDatabases(instance, req.name) : { staging: '', previous: '' };
    const sts = instance ? view.get(STATEFULSETS, ns, instance.names.statefulSet) : undefined;
    const other = view
      .list(SAMPLEDB_RESTORES, ns)
      .filter(
        (r) =>
          r.metadata.name !== req.name &&
          r.spec.sampleDB.name === dbName &&
          !TERMINAL.has(r.status?.phase ?? '') &&
          String(r.metadata.creationTimestamp) < String(restore.metadata.creationTimestamp),
      )[0];
    const observation: RestoreObservation = {
      name: req.name,
      sampleDbName: dbName,
      previousDatabase: databases.previous,
      stagingDatabase: databases.staging,
      ...(instance
        ? {
            db: {
              ready: (sts?.status?.readyReplicas ?? 0) >= 1,
              ...(db?.metadata.annotations?.[ANNOTATIONS.writesStopped]
                ? { writesStoppedBy: db.metadata.annotations[ANNOTATIONS.writesStopped] }
                : {}),
              serviceBlocked: serviceSelectsNothing(view.get(SERVICES, ns, instance.names.clientService)),
            },
          }
        : {}),
      ...(source
        ? {
            source: {
              ofSampleDb: source.spec.sampleDB.name,
              ...(source.status?.phase ? { phase: source.status.phase } : {}),
              ...(source.status?.checksum ? { checksum: source.status.checksum } : {}),
            },
          }
        : {}),
      ...(safety
        ? {
            safety: {
              ofPrevious: Boolean(safety.metadata.annotations?.[ANNOTATIONS.previousDatabase]),
              ...(safety.status?.phase ? { phase: safety.status.phase } : {}),
              ...(safety.status?.message ? { message: safety.status.message } : {}),
            },
          }
        : {}),
      ...(other?.metadata.name ? { otherRestoreRunning: other.metadata.name } : {}),
    };
    const restoreJob = restoreJobOf(restoreJobName(req.name));
    const rollbackJob = restoreJobOf(rollbackJobName(req.name));
    if (restoreJob) observation.restoreJob = restoreJob;
    if (rollbackJob) observation.rollbackJob = rollbackJob;
    if (cleanupState) observation.cleanupJob = cleanupState;

    const action = planRestore(observation);
    const write = new Writer(this.#deps.client);
    rc.log.info({ action: action.kind }, 'restore step');
    let stoppedAt = restore.status?.writesStoppedAt;
    let stoppedSeconds = restore.status?.writesStoppedSeconds;
    let restoredAt = restore.status?.restoredAt;
    switch (action.kind) {
      case 'create-safety-backup':
        if (instance) await write.createOnce(SAMPLEDB_BACKUPS, safetyBackup(instance, restore));
        break;
      case 'stop-writes':
        await write.patch(
          SAMPLEDBS,
          { namespace: ns, name: dbName },
          {
            metadata: { annotations: { [ANNOTATIONS.writesStopped]: req.name } },
          },
        );
        stoppedAt = metaTime(now);
        break;
      case 'resume-writes':
        await write.patch(
          SAMPLEDBS,
          { namespace: ns, name: dbName },
          {
            metadata: { annotations: { [ANNOTATIONS.writesStopped]: null } },
          },
        );
        if (stoppedAt) stoppedSeconds = Math.max(0, (now.getTime() - Date.parse(stoppedAt)) / 1000);
        if (restoreJob?.state === 'succeeded') restoredAt = metaTime(now);
        break;
      case 'start-cleanup-job':
        if (instance) await write.createOnce(JOBS, cleanupJob(instance, restore, action.databases));
        break;
      case 'start-restore-job':
        if (instance && source)
          await write.createOnce(JOBS, inPlaceRestoreJob(instance, restore, source, 'restore'));
        break;
      case 'start-rollback-job':
        if (instance && safety)
          await write.createOnce(JOBS, inPlaceRestoreJob(instance, restore, safety, 'rollback'));
        break;
      default:
        break;
    }
    const status = restoreStatus(restore, observation, action, now, {
      writesStoppedAt: stoppedAt,
      writesStoppedSeconds: stoppedSeconds,
      restoredAt,
    });
    if (!isDeepStrictEqual(JSON.parse(JSON.stringify(status)), restore.status ?? {})) {
      await write.only(['status']).applyStatusOf(SAMPLEDB_RESTORES, restore, {
        apiVersion: API_VERSION,
        kind: KINDS.sampleDbRestore,
        metadata: { name: req.name, namespace: ns },
        status,
      });
      const stepChanged = status.step !== restore.status?.step || status.phase !== restore.status?.phase;
      if (stepChanged)
        await write
          .only(['event'])
          .event({
            regarding: restore,
            // Kept data needs the user's hand (drop it once no longer needed): a warning, though Completed.
            type:
              status.phase === 'Failed' ||
              status.phase === 'RolledBack' ||
              (action.kind === 'finish' && action.reason === 'PreviousDataKept')
                ? 'Warning'
                : 'Normal',
            reason:
              action.kind !== 'finish'
                ? EVENT_REASONS.restoreStep
                : action.phase === 'Completed'
                  ? EVENT_REASONS.restoreCompleted
                  : action.phase === 'RolledBack'
                    ? EVENT_REASONS.restoreRolledBack
                    : EVENT_REASONS.restoreFailed,
            action: 'Restore',
            note: status.message ?? status.phase ?? '',
          })
          .catch((err: unknown) => rc.log.warn({ err: describeError(err) }, 'could not record event'));
    }
    // Writes done by this reconcile show up as watch events; the Jobs and backups it waits for too.
    return action.kind === 'wait' ? undefined : { requeueAfter: 1_000 };
  }
}

const STEP_OF: Record<RestoreAction['kind'], SampleDbRestoreStatus['step']> = {
  wait: undefined,
  'stop-writes': 'stop-writes',
  'start-restore-job': 'restore',
  'resume-writes': 'resume-writes',
  'create-safety-backup': 'safety-backup',
  'start-cleanup-job': 'cleanup',
  'start-rollback-job': 'rollback',
  finish: undefined,
};

/** Times the reconciler carries from one status to the next. */
export interface RestoreTimes {
  writesStoppedAt: string | undefined;
  writesStoppedSeconds: number | undefined;
  restoredAt: string | undefined;
}

/** Pure: the status for an observation and the action taken on it. */
export function restoreStatus(
  restore: SampleDbRestoreObject,
  o: RestoreObservation,
  action: RestoreAction,
  now: Date,
  times: RestoreTimes,
): SampleDbRestoreStatus {
  const { writesStoppedAt, writesStoppedSeconds, restoredAt } = times;
  const previous = restore.status ?? {};
  const finished = action.kind === 'finish';
  const step = action.kind === 'wait' ? action.step : STEP_OF[action.kind];
  const message =
    action.kind === 'wait' || action.kind === 'finish'
      ? action.message
      : `${step}: ${action.kind.replace(/-/g, ' ')}.`;
  const phase = finished ? action.phase : 'Running';
  return {
    phase,
    ...(step && !finished ? { step } : {}),
    steps: restoreSteps(o),
    ...(o.safety || action.kind === 'create-safety-backup' ? { safetyBackup: safetyBackupName(o.name) } : {}),
    ...(previousKept(o) ? { previousDatabase: o.previousDatabase } : {}),
    ...(restoredAt ? { restoredAt } : {}),
    startedAt: previous.startedAt ?? metaTime(now),
    ...(finished ? { completedAt: metaTime(now) } : {}),
    ...(writesStoppedAt ? { writesStoppedAt } : {}),
    ...(writesStoppedSeconds !== undefined ? { writesStoppedSeconds } : {}),
    message,
    conditions: mergeConditions(
      (previous.conditions ?? []) as Condition[],
      [
        {
          type: RESTORE_CONDITIONS.completed,
          status: finished && action.phase === 'Completed' ? 'True' : 'False',
          reason: finished ? action.reason : 'Running',
          message,
        },
      ],
      now,
    ),
    ...(restore.metadata.generation !== undefined ? { observedGeneration: restore.metadata.generation } : {}),
  };
}

/** The previous database exists from the switch until the cleanup Job dropped it. */
function previousKept(o: RestoreObservation): boolean {
  if (o.restoreJob?.legacy) return o.rollbackJob?.state === 'succeeded';
  return o.restoreJob?.state === 'succeeded' && o.cleanupJob?.state !== 'succeeded';
}
