// The drill's observation, from the informer cache only: the namespace's label, the SampleDB and its pods, what else
// is changing it, the run's Jobs and throw-away SampleDB, and whether a run is due (its schedule, from croner, which
// only computes times here).
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import {
  DRILL_REASONS,
  DRILLS_ALLOWED,
  LABELS,
  SAMPLEDB_CONDITIONS,
  type SampleDbDrillObject,
  type SampleDbObject,
} from '../../api/index.ts';
import { scriptJobOutcome } from '../backup/job-outcome.ts';
import { cronFor } from '../backup-schedule.ts';
import { resolveInstance } from '../instance.ts';
import {
  JOBS,
  NAMESPACES,
  PODS,
  SAMPLEDB_BACKUPS,
  SAMPLEDB_DRILLS,
  SAMPLEDB_RESTORES,
  SAMPLEDBS,
} from '../resources.ts';
import { parseCanaryResult, parseProbeResult } from '../scripts/drill.ts';
import { parseFillResult, parseReleaseResult } from '../scripts/drill-fill.ts';
import { parseNetcheckResult } from '../scripts/drill-netcheck.ts';
import type { ClusterView } from '../view.ts';
import {
  canaryJobName,
  fillJobName,
  netcheckName,
  probeJobName,
  releaseJobName,
  throwawayName,
} from './names.ts';
import type { DrillDb, DrillObservation, JobState } from './plan.ts';

export interface OperatorIdentity {
  leaderElection: boolean;
  /** The Lease identity (the pod name in a cluster). */
  identity: string;
  /** The operator's namespace, where its pods are. */
  namespace?: string;
}

const condition = (db: SampleDbObject | undefined, type: string) =>
  db?.status?.conditions?.find((c) => c.type === type);
const isTrue = (db: SampleDbObject | undefined, type: string) => condition(db, type)?.status === 'True';
const boolOf = (db: SampleDbObject, type: string) => {
  const c = condition(db, type);
  return c ? c.status === 'True' : undefined;
};

const RESTORE_DONE = ['Completed', 'Failed', 'RolledBack'];
const BACKUP_DONE = ['Completed', 'Failed'];

function jobState<R>(
  view: ClusterView,
  ns: string,
  name: string,
  parse: (m: string | undefined) => R | undefined,
): JobState<R> | undefined {
  const job: V1Job | undefined = view.get(JOBS, ns, name);
  if (!job) return undefined;
  const pods = view.ownedBy(PODS, job.metadata?.uid);
  const outcome = scriptJobOutcome(job, pods, 'drill', parse);
  switch (outcome.phase) {
    case 'Running':
      return pods.some((p) => podReady(p) && !p.metadata?.deletionTimestamp)
        ? { state: 'running', ready: true }
        : { state: 'running' };
    case 'Succeeded':
      return { state: 'succeeded', result: outcome.result };
    case 'NoResult':
      return { state: 'failed', message: 'the Job succeeded without reporting a result' };
    case 'Failed':
      return { state: 'failed', message: outcome.message };
  }
}

const podReady = (p: V1Pod) =>
  p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

function dbView(view: ClusterView, db: SampleDbObject): DrillDb {
  const instance = resolveInstance(db);
  const pods = view.list(PODS, instance.namespace, instance.labels.database);
  const replication = db.status?.replication;
  const primary = replication?.primary ?? (instance.spec.instances === 1 ? instance.names.pod : undefined);
  const primaryAvailable = boolOf(db, SAMPLEDB_CONDITIONS.primaryAvailable);
  const replicasReady = boolOf(db, SAMPLEDB_CONDITIONS.replicasReady);
  const ready = condition(db, SAMPLEDB_CONDITIONS.ready);
  const upgrading = condition(db, SAMPLEDB_CONDITIONS.upgrading);
  const quoted = (c: typeof ready) => ({ reason: c?.reason ?? 'Unknown', message: c?.message ?? '' });
  return {
    ready: isTrue(db, SAMPLEDB_CONDITIONS.ready),
    instances: instance.spec.instances,
    failoverDelaySeconds: instance.spec.replication.failoverDelaySeconds,
    ...(primary ? { primary } : {}),
    pods: pods.map((p) => ({
      name: p.metadata?.name ?? '',
      uid: p.metadata?.uid ?? '',
      ready: podReady(p),
      terminating: Boolean(p.metadata?.deletionTimestamp),
      ...(p.spec?.nodeName ? { node: p.spec.nodeName } : {}),
      ...(p.status?.podIP ? { ip: p.status.podIP } : {}),
    })),
    ...(primaryAvailable !== undefined ? { primaryAvailable } : {}),
    ...(replication?.primaryUnavailableSince
      ? { primaryUnavailableSince: replication.primaryUnavailableSince }
      : {}),
    instanceReady: Object.fromEntries((replication?.instances ?? []).map((i) => [i.name, i.ready])),
    ...(replicasReady !== undefined ? { replicasReady } : {}),
    upgrading: upgrading?.status === 'True',
    ...(ready?.status === 'True' ? {} : { notReady: quoted(ready) }),
    ...(upgrading?.status === 'True' ? { upgradeStep: quoted(upgrading) } : {}),
  };
}

/** What else is changing this SampleDB: a backup, an in-place restore or another drill with a run in progress. */
function busyWith(view: ClusterView, drill: SampleDbDrillObject): DrillObservation['busy'] {
  const ns = drill.metadata.namespace ?? '';
  const db = drill.spec.sampleDB.name;
  const backup = view
    .list(SAMPLEDB_BACKUPS, ns)
    .find((b) => b.spec.sampleDB.name === db && !BACKUP_DONE.includes(b.status?.phase ?? ''));
  if (backup)
    return {
      reason: DRILL_REASONS.backupInProgress,
      message: `SampleDBBackup ${backup.metadata.name} of ${db} is running; drills wait for backups.`,
    };
  const restore = view
    .list(SAMPLEDB_RESTORES, ns)
    .find((r) => r.spec.sampleDB.name === db && !RESTORE_DONE.includes(r.status?.phase ?? ''));
  if (restore)
    return {
      reason: DRILL_REASONS.restoreInProgress,
      message: `SampleDBRestore ${restore.metadata.name} is restoring ${db}; drills wait for it.`,
    };
  const other = view
    .list(SAMPLEDB_DRILLS, ns)
    .find((d) => d.metadata.name !== drill.metadata.name && d.spec.sampleDB.name === db && d.status?.current);
  if (other)
    return {
      reason: DRILL_REASONS.drillInProgress,
      message: `SampleDBDrill ${other.metadata.name} is running against ${db}; one drill at a time.`,
    };
  return undefined;
}

function latestCompletedBackup(view: ClusterView, ns: string, db: string): string | undefined {
  return view
    .list(SAMPLEDB_BACKUPS, ns)
    .filter((b) => b.spec.sampleDB.name === db && b.status?.phase === 'Completed' && b.status.checksum)
    .sort((a, b) => String(a.status?.completedAt ?? '').localeCompare(String(b.status?.completedAt ?? '')))
    .at(-1)?.metadata.name;
}

/** Whether a run is due, and when the next slot is (for the status and the requeue). */
export function dueRun(drill: SampleDbDrillObject, now: Date): { due?: { slot?: string }; next?: Date } {
  const status = drill.status ?? {};
  const schedule = drill.spec.schedule;
  if (!schedule) return (status.runCount ?? 0) === 0 && !status.current ? { due: {} } : {};
  const cron = cronFor(schedule, undefined);
  const latest = cron.previousRuns(1, new Date(now.getTime() + 1))[0];
  const next = cron.nextRun(now) ?? undefined;
  const created = Date.parse(drill.metadata.creationTimestamp ?? '');
  const taken = Date.parse(status.lastSlot ?? '');
  const isDue =
    latest !== undefined &&
    (!Number.isFinite(created) || latest.getTime() >= created - 1000) &&
    (!Number.isFinite(taken) || latest.getTime() > taken);
  return {
    ...(isDue && latest ? { due: { slot: latest.toISOString().replace(/\.\d{3}Z$/, 'Z') } } : {}),
    ...(next ? { next } : {}),
  };
}

export function observeDrill(
  view: ClusterView,
  drill: SampleDbDrillObject,
  operator: OperatorIdentity,
  now: Date,
): DrillObservation {
  const ns = drill.metadata.namespace ?? '';
  const name = drill.metadata.name ?? '';
  const dbName = drill.spec.sampleDB.name;
  const db = view.get(SAMPLEDBS, ns, dbName);
  const current = drill.status?.current;
  const namespace = view.get(NAMESPACES, '', ns);
  const { due } = dueRun(drill, now);
  const o: DrillObservation = {
    now,
    kind: drill.spec.kind,
    name,
    sampleDbName: dbName,
    namespaceAllowed: namespace?.metadata?.labels?.[LABELS.drills] === DRILLS_ALLOWED,
    ...(db ? { db: dbView(view, db) } : {}),
    operator: { leaderElection: operator.leaderElection, identity: operator.identity },
    runCount: drill.status?.runCount ?? 0,
    ...(current ? { current } : {}),
    ...(due && !current ? { due } : {}),
  };
  const busy = busyWith(view, drill);
  if (busy) o.busy = busy;
  const backup = latestCompletedBackup(view, ns, dbName);
  if (backup) o.latestBackup = backup;
  if (current) {
    const canary = jobState(view, ns, canaryJobName(name, current.run), parseCanaryResult);
    const probe = jobState(view, ns, probeJobName(name, current.run), parseProbeResult);
    if (canary) o.canaryJob = canary;
    if (probe) o.probeJob = probe;
    if (drill.spec.kind === 'fill-disk') {
      const fill = jobState(view, ns, fillJobName(name, current.run), parseFillResult);
      const release = jobState(view, ns, releaseJobName(name, current.run), parseReleaseResult);
      if (fill) o.fillJob = fill;
      if (release) o.releaseJob = release;
    }
    if (drill.spec.kind === 'isolate-primary') {
      const check = jobState(view, ns, netcheckName(name, current.run), parseNetcheckResult);
      if (check) o.netcheckJob = check;
    }
    if (drill.spec.kind === 'restore-check') {
      const throwaway = view.get(SAMPLEDBS, ns, throwawayName(dbName, current.run));
      if (throwaway) {
        const initialized = condition(throwaway, SAMPLEDB_CONDITIONS.initialized);
        o.throwaway = {
          ready: isTrue(throwaway, SAMPLEDB_CONDITIONS.ready),
          deleting: Boolean(throwaway.metadata.deletionTimestamp),
          ...(initialized?.status === 'False' &&
          /Failed|NotFound|NotCompleted|Invalid/.test(initialized.reason)
            ? { failed: initialized.message }
            : {}),
        };
      }
    }
  }
  return o;
}
