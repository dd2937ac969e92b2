// What a SampleDBDrill does next, decided from what the cluster shows and the run recorded in its own status, nothing
// else. A fault is transient (a deleted pod comes back), so the run's progress is written to status.current before
// each irreversible write: the fault's target (by uid) and time are recorded before the deletion is sent, and every
// action is idempotent (a deletion with a uid precondition, Jobs and the throw-away SampleDB created once), so an
// operator killed between any two writes (including by its own kill-operator-leader drill) resumes the run.
import {
  DRILL_REASONS,
  type DrillCurrentRun,
  type DrillKind,
  type DrillRun,
  type DrillRunResult,
} from '../../api/index.ts';
import { BALLAST_FILE, type FillResult } from '../scripts/drill-fill.ts';
import type { NetcheckResult } from '../scripts/drill-netcheck.ts';
import { throwawayName } from './names.ts';

export type JobState<R> =
  /** `ready`: the Job's pod is Ready (fill-disk: the volume is full). */
  | { state: 'running'; ready?: boolean }
  | { state: 'succeeded'; result: R }
  | { state: 'failed'; message: string };

/** What the probe Job reports (src/sampledb/scripts/drill.ts). */
export interface ProbeResult {
  /** Epoch milliseconds of the first write the client Service accepted. */
  writableAtMs: number;
  failedWrites: number;
  canaryPresent: boolean;
  replicasExpected: number;
  replicasCaughtUp: number;
  /** Epoch milliseconds when every expected replica had replayed the probe write (absent: not within the bound). */
  caughtUpAtMs?: number;
  /** fill-disk: epoch milliseconds of the first write refused on the full volume (absent: none was). */
  refusedAtMs?: number;
}

export interface DrillPod {
  name: string;
  uid: string;
  ready: boolean;
  terminating: boolean;
  /** The node it runs on (fill-disk's Jobs mount its volume there). */
  node?: string;
  /** status.podIP (isolate-primary's enforcement check connects to it). */
  ip?: string;
}

/** The drilled SampleDB as the cache shows it; `status` fields are what the operator last wrote. */
export interface DrillDb {
  ready: boolean;
  instances: number;
  /** spec.replication.failoverDelaySeconds (or its default): isolate-primary holds its isolation a minute longer. */
  failoverDelaySeconds: number;
  /** The elected primary (status.replication.primary), or pod 0 with one instance. */
  primary?: string;
  pods: readonly DrillPod[];
  /** Conditions that show a fault once the operator has seen it (undefined: not set). */
  primaryAvailable?: boolean;
  primaryUnavailableSince?: string;
  /** status.replication.instances[].ready by pod name. */
  instanceReady: Readonly<Record<string, boolean>>;
  replicasReady?: boolean;
  upgrading: boolean;
  /** The Ready condition's reason and message while it is not True (what the refusal quotes). */
  notReady?: { reason: string; message: string };
  /** The Upgrading condition's reason and message while it is True. */
  upgradeStep?: { reason: string; message: string };
}

export interface DrillObservation {
  now: Date;
  kind: DrillKind;
  name: string;
  sampleDbName: string;
  /** A run is due now (first run of a drill without schedule, or a schedule slot not yet taken). */
  due?: { slot?: string };
  namespaceAllowed: boolean;
  db?: DrillDb;
  /** Something else changing this SampleDB (backup, restore, another drill), as a refusal reason and message. */
  busy?: { reason: string; message: string };
  operator: { leaderElection: boolean; identity: string };
  /** restore-check: the newest Completed backup of the SampleDB. */
  latestBackup?: string;
  /** restore-check: the throw-away SampleDB of the current run. */
  throwaway?: { ready: boolean; failed?: string; deleting: boolean };
  current?: DrillCurrentRun;
  /** Runs started (or refused) so far. */
  runCount: number;
  canaryJob?: JobState<true>;
  probeJob?: JobState<ProbeResult>;
  /** fill-disk: the Job that fills, holds and releases the primary's volume, and the one that releases it after a failure. */
  fillJob?: JobState<FillResult>;
  releaseJob?: JobState<true>;
  /** isolate-primary: the Job that checks, before the fault, that NetworkPolicy is enforced. */
  netcheckJob?: JobState<NetcheckResult>;
}

export type DrillAction =
  | { kind: 'idle' }
  | { kind: 'refuse'; reason: string; message: string }
  | { kind: 'start-run'; current: DrillCurrentRun }
  | { kind: 'create-canary' }
  | { kind: 'inject'; current: DrillCurrentRun; target: DrillTarget }
  | { kind: 'create-probe'; current: DrillCurrentRun }
  /** fill-disk: the fill Job failed, so the ballast may still be there: remove it before the run ends. */
  | { kind: 'create-release'; current: DrillCurrentRun }
  | { kind: 'mark-detected'; current: DrillCurrentRun }
  /** isolate-primary: the deny-all egress policy and the Job that must fail to reach the primary under it. */
  | { kind: 'create-netcheck'; current: DrillCurrentRun; primaryIp: string }
  /** isolate-primary: delete the isolation's NetworkPolicy (first), then record liftedAt. */
  | { kind: 'lift-isolation'; current: DrillCurrentRun }
  | { kind: 'create-throwaway'; backup: string }
  | { kind: 'delete-throwaway'; current: DrillCurrentRun }
  | { kind: 'wait'; message: string }
  /** `slot`: the schedule slot a run refused before it started was due for. */
  | { kind: 'finish'; run: DrillRun; slot?: string };

/**
 * What a fault hits: a database pod (deleted with its uid as precondition), the leading operator's own pod, or (fill-disk)
 * the data volume of a database pod, filled by a Job on its node.
 */
export type DrillTarget =
  | { kind: 'pod'; name: string; uid: string }
  | { kind: 'operator'; identity: string }
  | { kind: 'volume'; name: string; uid: string }
  | { kind: 'isolation'; name: string; uid: string };

/** How long a run may take from the fault to recovery before it is recorded as Failed (NotRecovered). */
export const RECOVERY_TIMEOUT_MS = 10 * 60_000;
/** restore-check: how long the throw-away SampleDB may take to become Ready. */
export const RESTORE_TIMEOUT_MS = 20 * 60_000;

const R = DRILL_REASONS;
const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
const secondsBetween = (from: string | number, to: number) =>
  Math.max(0, Math.round((to - (typeof from === 'number' ? from : Date.parse(from))) / 10) / 100);

/** The guard rails, in order: the first that holds refuses the run, and nothing is injected. */
export function guardRail(o: DrillObservation): { reason: string; message: string } | undefined {
  if (!o.namespaceAllowed)
    return {
      reason: R.namespaceNotAllowed,
      message:
        'Drills run only in namespaces labelled sampledb.io/drills=allowed; label the namespace to allow them.',
    };
  if (!o.db) return { reason: R.sampleDbNotFound, message: `SampleDB ${o.sampleDbName} was not found.` };
  // Before Ready: an upgrade restarts the pods, so the SampleDB is often not Ready during one, and the upgrade is
  // what the user needs to hear.
  if (o.db.upgrading) {
    const step = o.db.upgradeStep;
    return {
      reason: R.upgradeInProgress,
      message: `SampleDB ${o.sampleDbName} is being upgraded${step ? ` (Upgrading: ${step.reason}: ${step.message})` : ''}; drills wait for it.`,
    };
  }
  if (!o.db.ready) {
    const why = o.db.notReady;
    return {
      reason: R.sampleDbNotReady,
      message: `SampleDB ${o.sampleDbName} is not Ready${why ? ` (${why.reason}: ${why.message})` : ''}; a drill runs only against a healthy database.`,
    };
  }
  if (o.busy) return o.busy;
  const readyPods = o.db.pods.filter((p) => p.ready && !p.terminating);
  // fill-disk and isolate-primary stop the primary writing: the replicas are what stays healthy meanwhile.
  if (
    o.kind === 'kill-primary' ||
    o.kind === 'kill-replica' ||
    o.kind === 'fill-disk' ||
    o.kind === 'isolate-primary'
  ) {
    if (o.db.instances < 2 || readyPods.length < 2)
      return {
        reason: R.wouldLeaveNoHealthyInstance,
        message: `${o.kind} needs at least 2 Ready instances (spec.instances ${o.db.instances}, ${readyPods.length} Ready): with fewer the fault would leave no healthy instance.`,
      };
  }
  if (o.kind === 'kill-operator-leader' && !o.operator.leaderElection)
    return {
      reason: R.leaderElectionDisabled,
      message:
        'kill-operator-leader needs the operator to run with leader election (LEADER_ELECTION=true, 2 replicas): without it nothing takes over.',
    };
  if (o.kind === 'restore-check' && !o.latestBackup)
    return {
      reason: R.noCompletedBackup,
      message: `SampleDB ${o.sampleDbName} has no Completed SampleDBBackup to restore.`,
    };
  return undefined;
}

/** The pod (or operator) the fault hits, chosen from what is there now. */
export function chooseTarget(o: DrillObservation): DrillTarget | undefined {
  if (o.kind === 'kill-operator-leader') return { kind: 'operator', identity: o.operator.identity };
  const pods = (o.db?.pods ?? []).filter((p) => p.ready && !p.terminating);
  const pick =
    o.kind === 'kill-primary' || o.kind === 'fill-disk' || o.kind === 'isolate-primary'
      ? pods.find((p) => p.name === o.db?.primary)
      : pods.filter((p) => p.name !== o.db?.primary).sort((a, b) => b.name.localeCompare(a.name))[0];
  if (!pick) return undefined;
  const kind = o.kind === 'fill-disk' ? 'volume' : o.kind === 'isolate-primary' ? 'isolation' : 'pod';
  return { kind, name: pick.name, uid: pick.uid };
}

/** Whether the operator's own record of the SampleDB (its status), or a new leader, shows the fault. */
export function faultSeen(o: DrillObservation, current: DrillCurrentRun): boolean {
  const db = o.db;
  if (o.kind === 'kill-operator-leader') return o.operator.identity !== current.target;
  if (!db) return true;
  if (!db.ready) return true;
  if (o.kind === 'fill-disk')
    return db.primaryAvailable === false || (db.primary !== undefined && db.primary !== current.target);
  if (o.kind === 'kill-primary' || o.kind === 'isolate-primary')
    return (
      db.primaryAvailable === false ||
      db.primaryUnavailableSince !== undefined ||
      (db.primary !== undefined && db.primary !== current.target)
    );
  return (current.target ? db.instanceReady[current.target] === false : false) || db.replicasReady === false;
}

/** The database serves again: Ready, a primary the operator reports available, every instance's pod Ready. */
export function recovered(o: DrillObservation, current: DrillCurrentRun): boolean {
  const db = o.db;
  if (!db?.ready || db.primaryAvailable === false) return false;
  const pods = db.pods.filter((p) => p.ready && !p.terminating);
  // The killed pod itself (same uid) being Ready means the deletion did not happen yet (fill-disk kills nothing,
  // isolate-primary's old primary may come back as a standby in the same pod). Once reachable again, that old
  // primary still runs as one, Ready by kubelet's probes, until the operator fences it: only the operator's word
  // that every replica streams says it has rejoined.
  if (o.kind === 'isolate-primary' && (!current.liftedAt || (db.instances > 1 && db.replicasReady !== true)))
    return false;
  if (
    o.kind !== 'fill-disk' &&
    o.kind !== 'isolate-primary' &&
    current.targetUid &&
    pods.some((p) => p.uid === current.targetUid)
  )
    return false;
  return pods.length >= db.instances;
}

function runRecord(
  o: DrillObservation,
  current: DrillCurrentRun,
  result: DrillRunResult,
  reason: string,
  message: string,
  extra: Partial<DrillRun> = {},
): DrillAction {
  return {
    kind: 'finish',
    run: {
      run: current.run,
      result,
      reason,
      message,
      startedAt: current.startedAt,
      finishedAt: iso(o.now),
      ...(current.target ? { target: current.target } : {}),
      ...extra,
    },
  };
}

/** The record of a run refused before anything was injected. */
function refusedRun(o: DrillObservation, run: number, reason: string, message: string): DrillAction {
  const action = runRecord(o, { run, step: 'canary', startedAt: iso(o.now) }, 'Refused', reason, message);
  return o.due?.slot && action.kind === 'finish' ? { ...action, slot: o.due.slot } : action;
}

function measured(
  o: DrillObservation,
  current: DrillCurrentRun,
  probe: ProbeResult,
  fill?: { filledBytes: number; releasedAtMs: number },
): DrillAction {
  const isolated =
    o.kind === 'isolate-primary' && current.liftedAt && current.injectedAt
      ? secondsBetween(current.injectedAt, Date.parse(current.liftedAt))
      : undefined;
  const injectedAt = current.injectedAt ?? current.startedAt;
  const detectedAt = current.detectedAt ?? (faultSeen(o, current) ? iso(o.now) : undefined);
  // fill-disk: nothing can write until the ballast is gone, so recovery counts from its removal.
  const faultEnd = fill ? fill.releasedAtMs : injectedAt;
  const extra: Partial<DrillRun> = {
    writableSeconds: probe.failedWrites === 0 ? 0 : secondsBetween(faultEnd, probe.writableAtMs),
    ...(fill ? { filledBytes: fill.filledBytes } : {}),
    ...(isolated !== undefined ? { isolatedSeconds: isolated } : {}),
    failedWrites: probe.failedWrites,
    canaryPresent: probe.canaryPresent,
    replicationCaughtUp: probe.replicasCaughtUp >= probe.replicasExpected,
    ...(detectedAt ? { detectSeconds: secondsBetween(injectedAt, Date.parse(detectedAt)) } : {}),
    ...(probe.caughtUpAtMs !== undefined && probe.replicasExpected > 0
      ? { replicationSeconds: secondsBetween(probe.writableAtMs, probe.caughtUpAtMs) }
      : {}),
  };
  const seen = detectedAt ? '' : ' The operator’s status never showed the fault.';
  if (isolated !== undefined && probe.failedWrites === 0)
    return runRecord(
      o,
      current,
      'Failed',
      R.isolationNotEffective,
      `Every write through the client Service was accepted while ${current.target} was isolated: the isolation's NetworkPolicy did not stop new connections to the primary.${seen}`,
      extra,
    );
  if (!probe.canaryPresent)
    return runRecord(
      o,
      current,
      'Failed',
      R.canaryLost,
      `The row written before the fault is gone after it: acknowledged data was lost.${seen}`,
      extra,
    );
  if (probe.replicasCaughtUp < probe.replicasExpected)
    return runRecord(
      o,
      current,
      'Failed',
      R.replicationBehind,
      `Writes are accepted again, but only ${probe.replicasCaughtUp} of ${probe.replicasExpected} replicas replayed the probe write in time.${seen}`,
      extra,
    );
  const after = fill
    ? `the data volume was filled (${Math.round(fill.filledBytes / 2 ** 20)} MiB of ballast) and ${
        probe.refusedAtMs === undefined
          ? 'no write was refused while it was full'
          : `writes were refused ${secondsBetween(injectedAt, probe.refusedAtMs)}s after the fault`
      }; writes accepted ${extra.writableSeconds}s after the ballast was removed`
    : isolated !== undefined
      ? `${current.target} was isolated for ${isolated}s (${o.db?.primary && o.db.primary !== current.target ? `${o.db.primary} was elected primary` : 'no other primary was elected'}); writes accepted ${extra.writableSeconds}s after the fault`
      : probe.failedWrites === 0
        ? // The probe starts after the fault: an interruption that ended before its first write (a fast failover)
          // is not seen, and "writes accepted 0s after the fault" would claim there was none.
          `no write the probe tried was refused: its first, ${secondsBetween(injectedAt, probe.writableAtMs)}s after the fault, was accepted (an interruption that ended before then is not observed)`
        : `writes accepted ${extra.writableSeconds}s after the fault`;
  return runRecord(
    o,
    current,
    'Succeeded',
    R.recovered,
    `Recovered: ${after}, the canary row is there, ${probe.replicasCaughtUp} of ${probe.replicasExpected} replicas caught up.${seen}`,
    extra,
  );
}

function planRestoreCheck(o: DrillObservation, current: DrillCurrentRun): DrillAction {
  const started = Date.parse(current.restoreStartedAt ?? current.startedAt);
  if (current.step === 'restore') {
    if (!o.throwaway) {
      if (!o.latestBackup)
        return runRecord(o, current, 'Refused', R.noCompletedBackup, 'No Completed backup to restore.');
      return { kind: 'create-throwaway', backup: o.latestBackup ?? '' };
    }
    if (o.throwaway.ready)
      return {
        kind: 'delete-throwaway',
        current: { ...current, step: 'cleanup', restoreReadyAt: iso(o.now) },
      };
    if (o.throwaway.failed || o.now.getTime() - started > RESTORE_TIMEOUT_MS)
      return { kind: 'delete-throwaway', current: { ...current, step: 'cleanup' } };
    return { kind: 'wait', message: `Restoring the latest backup into ${current.target}.` };
  }
  // cleanup: the result was decided when the step changed (restoreReadyAt set or not).
  if (o.throwaway) {
    if (!o.throwaway.deleting) return { kind: 'delete-throwaway', current };
    return { kind: 'wait', message: `Deleting the throw-away SampleDB ${current.target}.` };
  }
  const readyAt = current.restoreReadyAt;
  if (readyAt)
    return runRecord(
      o,
      current,
      'Succeeded',
      R.restoreChecked,
      `The latest backup restored into ${current.target}, which became Ready in ${secondsBetween(started, Date.parse(readyAt))}s; it was deleted.`,
      { restoreSeconds: secondsBetween(started, Date.parse(readyAt)) },
    );
  return runRecord(
    o,
    current,
    'Failed',
    R.restoreCheckFailed,
    `The latest backup did not restore into a Ready SampleDB ${current.target} within ${RESTORE_TIMEOUT_MS / 60_000} min or its restore failed; it was deleted.`,
  );
}

/**
 * fill-disk after the canary: the fill Job fills the primary's volume (inject) and, once its pod is Ready (full),
 * the probe starts (recover); the Job removes the ballast itself after its hold, and recovery counts from then. A
 * fill Job that failed may have left its ballast: the release Job removes it (cleanup) before the run ends.
 */
function planFillDisk(o: DrillObservation, current: DrillCurrentRun): DrillAction {
  const fill = o.fillJob;
  const volume = `the data volume of ${current.target}`;
  if (current.step === 'cleanup') {
    const why = fill?.state === 'failed' ? fill.message : 'the fill Job is gone';
    if (!o.releaseJob) return { kind: 'create-release', current };
    if (o.releaseJob.state === 'running')
      return { kind: 'wait', message: `The fill Job failed: removing any ballast from ${volume}.` };
    if (o.releaseJob.state === 'failed')
      return runRecord(
        o,
        current,
        'Failed',
        R.fillFailed,
        `The fill Job failed (${why}) and so did the release Job (${o.releaseJob.message}): a ballast file ${BALLAST_FILE} may still fill ${volume}; delete it.`,
      );
    return runRecord(
      o,
      current,
      'Failed',
      R.fillFailed,
      `The fill Job failed: ${why}. The release Job removed any ballast from ${volume}.`,
    );
  }
  if (fill?.state === 'succeeded' && 'unsafe' in fill.result)
    return runRecord(o, current, 'Refused', R.fillDiskUnsafe, `fill-disk is refused: ${fill.result.unsafe}`);
  if (!fill) {
    if (current.step === 'inject')
      return {
        kind: 'inject',
        target: { kind: 'volume', name: current.target ?? '', uid: current.targetUid ?? '' },
        current,
      };
    return { kind: 'create-release', current: { ...current, step: 'cleanup' } };
  }
  if (fill.state === 'failed') return { kind: 'create-release', current: { ...current, step: 'cleanup' } };
  if (current.step === 'inject') {
    if (fill.state === 'running' && !fill.ready) return { kind: 'wait', message: `Filling ${volume}.` };
    return { kind: 'create-probe', current: { ...current, step: 'recover' } };
  }
  // recover
  if (!o.probeJob) return { kind: 'create-probe', current };
  if (!current.detectedAt && faultSeen(o, current))
    return { kind: 'mark-detected', current: { ...current, detectedAt: iso(o.now) } };
  if (fill.state === 'running')
    return {
      kind: 'wait',
      message: `${volume[0]?.toUpperCase()}${volume.slice(1)} is full: the probe writes until one is refused; the ballast is removed after its hold.`,
    };
  const released = fill.result as { filledBytes: number; releasedAtMs: number };
  const detected = current.detectedAt
    ? {
        detectSeconds: secondsBetween(
          current.injectedAt ?? current.startedAt,
          Date.parse(current.detectedAt),
        ),
      }
    : {};
  if (o.probeJob.state === 'failed')
    return runRecord(o, current, 'Failed', R.probeFailed, `The write probe failed: ${o.probeJob.message}`, {
      ...detected,
      filledBytes: released.filledBytes,
    });
  if (o.probeJob.state === 'succeeded' && recovered(o, current))
    return measured(o, current, o.probeJob.result, released);
  if (o.now.getTime() - released.releasedAtMs > RECOVERY_TIMEOUT_MS)
    return runRecord(
      o,
      current,
      'Failed',
      R.notRecovered,
      `SampleDB ${o.sampleDbName} did not recover (Ready, primary available, every instance Ready, the write probe done) within ${RECOVERY_TIMEOUT_MS / 60_000} min of the ballast's removal.`,
      { filledBytes: released.filledBytes },
    );
  return {
    kind: 'wait',
    message:
      o.probeJob.state === 'running'
        ? 'The ballast was removed: waiting for writes to be accepted again.'
        : 'Writes accepted again: waiting for every instance to be Ready.',
  };
}

/** isolate-primary: the isolation is lifted this long after it began at the latest, failover or not. */
export const isolationHoldMs = (o: DrillObservation) => ((o.db?.failoverDelaySeconds ?? 5) + 60) * 1000;

const podIp = (o: DrillObservation, name: string | undefined) => o.db?.pods.find((p) => p.name === name)?.ip;

/**
 * isolate-primary after the canary. netcheck: a pod under a deny-all egress policy asks the primary's port; only if
 * it goes unanswered does the run go on (a network that does not enforce NetworkPolicy would make the drill a no-op
 * that reports a healthy database). inject: the isolation policy over the primary pod. recover: the probe writes
 * through the client Service; the isolation is lifted (deleted first, recorded after, so a restarted operator deletes
 * it again) once the operator elected another primary or the hold is over, and the run ends when the database is
 * whole again, the old primary back as a standby.
 */
const probeFailed = (
  o: DrillObservation,
  current: DrillCurrentRun,
  message: string,
  measured: Partial<DrillRun>,
): DrillAction =>
  runRecord(o, current, 'Failed', R.probeFailed, `The write probe failed: ${message}`, measured);

function planIsolatePrimary(o: DrillObservation, current: DrillCurrentRun): DrillAction {
  const target = current.target ?? '';
  const nothing = 'Nothing was injected.';
  if (current.step === 'netcheck') {
    const check = o.netcheckJob;
    if (!check) {
      const ip = podIp(o, target);
      if (!ip)
        return runRecord(
          o,
          current,
          'Refused',
          R.wouldLeaveNoHealthyInstance,
          `The primary ${target} has no pod IP to check. ${nothing}`,
        );
      return { kind: 'create-netcheck', current, primaryIp: ip };
    }
    if (check.state === 'running')
      return {
        kind: 'wait',
        message: `Checking that NetworkPolicy is enforced: a pod under a deny-all egress policy must fail to reach ${target}.`,
      };
    if (check.state === 'failed')
      return runRecord(
        o,
        current,
        'Refused',
        R.networkPolicyNotEnforced,
        `Whether this cluster enforces NetworkPolicy could not be checked (the check Job failed: ${check.message}). ${nothing}`,
      );
    if (!check.result.enforced)
      return runRecord(
        o,
        current,
        'Refused',
        R.networkPolicyNotEnforced,
        `A pod under a deny-all egress NetworkPolicy reached ${target}'s PostgreSQL port (${check.result.answered} answers, ${check.result.unanswered} unanswered): this cluster's network does not enforce NetworkPolicy, so isolating the primary would do nothing. ${nothing}`,
      );
    // The database may have changed during the check: the guard rails hold at the moment of the fault.
    const refused = guardRail(o);
    if (refused) return runRecord(o, current, 'Refused', refused.reason, `${refused.message} ${nothing}`);
    const now = chooseTarget(o);
    if (now?.kind !== 'isolation' || now.name !== target || now.uid !== current.targetUid)
      return runRecord(
        o,
        current,
        'Refused',
        R.wouldLeaveNoHealthyInstance,
        `The primary changed during the enforcement check (was ${target}, now ${o.db?.primary ?? 'none'}). ${nothing}`,
      );
    return { kind: 'inject', target: now, current: { ...current, step: 'inject', injectedAt: iso(o.now) } };
  }
  // inject: the policy was created after the status write; the probe's creation sends it once more (a no-op when
  // it exists), so an operator killed between the two still isolates.
  if (current.step === 'inject') return { kind: 'create-probe', current: { ...current, step: 'recover' } };

  // recover
  if (!o.probeJob) return { kind: 'create-probe', current };
  if (!current.detectedAt && faultSeen(o, current))
    return { kind: 'mark-detected', current: { ...current, detectedAt: iso(o.now) } };
  const injected = Date.parse(current.injectedAt ?? current.startedAt);
  if (!current.liftedAt) {
    const failedOver = o.db?.primary !== undefined && o.db.primary !== target;
    if (failedOver || o.now.getTime() - injected >= isolationHoldMs(o))
      return { kind: 'lift-isolation', current: { ...current, liftedAt: iso(o.now) } };
    return {
      kind: 'wait',
      message: `${target} is isolated: waiting for the operator to elect another primary (the isolation is lifted within ${isolationHoldMs(o) / 1000}s).`,
    };
  }
  const detected = current.detectedAt
    ? { detectSeconds: secondsBetween(injected, Date.parse(current.detectedAt)) }
    : {};
  if (o.probeJob.state === 'failed') return probeFailed(o, current, o.probeJob.message, detected);
  if (o.probeJob.state === 'succeeded' && recovered(o, current))
    return measured(o, current, o.probeJob.result);
  if (o.now.getTime() - Date.parse(current.liftedAt) > RECOVERY_TIMEOUT_MS)
    return runRecord(
      o,
      current,
      'Failed',
      R.notRecovered,
      `SampleDB ${o.sampleDbName} did not recover (Ready, primary available, every instance Ready, the write probe done) within ${RECOVERY_TIMEOUT_MS / 60_000} min of the isolation's end.`,
      detected,
    );
  return {
    kind: 'wait',
    message:
      o.probeJob.state === 'running'
        ? 'The isolation was lifted: waiting for writes to be accepted and the replicas to catch up.'
        : 'Writes accepted again: waiting for every instance to be Ready.',
  };
}

export function planDrill(o: DrillObservation): DrillAction {
  const current = o.current;
  if (!current) {
    if (!o.due) return { kind: 'idle' };
    const refused = guardRail(o);
    const run = o.runCount + 1;
    if (refused) return refusedRun(o, run, refused.reason, refused.message);
    const startedAt = iso(o.now);
    const slot = o.due.slot ? { slot: o.due.slot } : {};
    if (o.kind === 'restore-check')
      return {
        kind: 'start-run',
        current: {
          run,
          step: 'restore',
          startedAt,
          restoreStartedAt: startedAt,
          target: throwawayName(o.sampleDbName, run),
          ...slot,
        },
      };
    return { kind: 'start-run', current: { run, step: 'canary', startedAt, ...slot } };
  }
  if (o.kind === 'restore-check') return planRestoreCheck(o, current);

  if (current.step === 'canary') {
    if (!o.canaryJob) return { kind: 'create-canary' };
    if (o.canaryJob.state === 'running')
      return { kind: 'wait', message: 'Writing the canary row before the fault.' };
    if (o.canaryJob.state === 'failed')
      return runRecord(
        o,
        current,
        'Failed',
        R.canaryFailed,
        `The canary row could not be written, so no fault was injected: ${o.canaryJob.message}`,
      );
    // The database may have changed while the canary was written: the guard rails hold at the moment of the fault.
    const refused = guardRail(o);
    if (refused) return runRecord(o, current, 'Refused', refused.reason, refused.message);
    const target = chooseTarget(o);
    if (!target)
      return runRecord(
        o,
        current,
        'Refused',
        R.wouldLeaveNoHealthyInstance,
        `No Ready pod to hit for ${o.kind}.`,
      );
    if (target.kind === 'isolation')
      return planIsolatePrimary(o, {
        ...current,
        step: 'netcheck',
        target: target.name,
        targetUid: target.uid,
      });
    return {
      kind: 'inject',
      target,
      current: {
        ...current,
        step: 'inject',
        injectedAt: iso(o.now),
        target: target.kind === 'operator' ? target.identity : target.name,
        ...(target.kind !== 'operator' ? { targetUid: target.uid } : {}),
      },
    };
  }

  if (o.kind === 'fill-disk') return planFillDisk(o, current);
  if (o.kind === 'isolate-primary') return planIsolatePrimary(o, current);

  if (current.step === 'inject') {
    // Resumed after the fault was recorded: send it again (a no-op once it happened), then start the probe.
    if (o.kind === 'kill-operator-leader' && o.operator.identity === current.target)
      return { kind: 'inject', target: { kind: 'operator', identity: o.operator.identity }, current };
    if (
      o.kind !== 'kill-operator-leader' &&
      current.target &&
      current.targetUid &&
      o.db?.pods.some((p) => p.uid === current.targetUid && !p.terminating)
    )
      return {
        kind: 'inject',
        target: { kind: 'pod', name: current.target, uid: current.targetUid },
        current,
      };
    return { kind: 'create-probe', current: { ...current, step: 'recover' } };
  }

  // recover
  if (!o.probeJob) return { kind: 'create-probe', current };
  if (!current.detectedAt && faultSeen(o, current))
    return { kind: 'mark-detected', current: { ...current, detectedAt: iso(o.now) } };
  const since = Date.parse(current.injectedAt ?? current.startedAt);
  const late = o.now.getTime() - since > RECOVERY_TIMEOUT_MS;
  if (o.probeJob.state === 'failed')
    return probeFailed(
      o,
      current,
      o.probeJob.message,
      current.detectedAt ? { detectSeconds: secondsBetween(since, Date.parse(current.detectedAt)) } : {},
    );
  if (o.probeJob.state === 'succeeded' && recovered(o, current))
    return measured(o, current, o.probeJob.result);
  if (late)
    return runRecord(
      o,
      current,
      'Failed',
      R.notRecovered,
      `SampleDB ${o.sampleDbName} did not recover (Ready, primary available, every instance Ready, the write probe done) within ${RECOVERY_TIMEOUT_MS / 60_000} min of the fault.`,
    );
  return {
    kind: 'wait',
    message:
      o.probeJob.state === 'running'
        ? 'Fault injected: waiting for writes to be accepted again.'
        : 'Writes accepted again: waiting for every instance to be Ready.',
  };
}
