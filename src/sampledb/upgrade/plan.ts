// What to do next in a major upgrade, decided from what the cluster shows and nothing else: the pre-upgrade backup,
// the StatefulSet, and the upgrade's Jobs (each named after the target major, each the record of its step). The
// operator can be killed between any two writes and the next run continues from the same place; a failure at any
// step ends on the old version and the old data files, with the cause and the backup's name.
//
//   backup → stop → preflight Job → upgrade Job → start new → verify (version Job) → cleanup Job → done
//                        │ fails         │ fails                      │ fails
//                        ▼               └──────────► rollback Job ◄──┘
//                  start old, Failed                      └─► start old, Failed
//
// The upgrade Job keeps the old files (pg_upgrade in copy mode, the old directory renamed aside), so the rollback
// Job only has to put them back; the cleanup Job removes them once the new server answered. See ADR 0009.

import { ANNOTATIONS } from '../../api/index.ts';

export type JobState =
  | { state: 'running' }
  | { state: 'succeeded'; completedAt?: string }
  | { state: 'failed'; message: string };

export interface UpgradeObservation {
  fromMajor: number;
  toMajor: number;
  /** The image of the old major (the StatefulSet's before the upgrade). */
  oldImage: string;
  /** The image of the new major (the spec's). */
  newImage: string;
  /**
   * How many pods the StatefulSet runs while the files are online: spec.instances, or more while the recorded
   * primary's ordinal is higher (absent: 1).
   */
  upReplicas?: number;
  /**
   * A replicated SampleDB (instances > 1). The upgrade converts pod 0's volume and runs pod 0 alone until it is
   * verified, then the replicas come back and clone the upgraded primary, so the primary must be pod 0 before the
   * files go offline: a switchover to it is asked for first. `primaryOrdinal`: the election record's primary
   * (absent: none yet, or a handover is under way); `switchoverTo`: the annotation, if set.
   */
  replication?: { primaryOrdinal?: number; switchoverTo?: string };
  /** Whether the maintenance window (if any) allows starting now, and when it opens next. */
  window: { open: boolean; opensAt?: string };
  backup?: { name: string; phase?: string; message?: string };
  statefulSet: {
    /** The replicas it has now (0 once stopped). */
    replicas: number;
    image?: string;
    /** A database pod exists (stopping is complete once it is gone). */
    podExists: boolean;
    podReady: boolean;
    podImage?: string;
  };
  preflight?: JobState;
  upgrade?: JobState;
  /** The version Job's report for the new image: the server answers, reports its version, the owner logs in. */
  verify?: JobState & { version?: string };
  rollback?: JobState & { cause?: string };
  cleanup?: JobState;
  /**
   * spec.version went back to `fromMajor` after the files went offline and before the upgrade Job existed: the
   * upgrade is abandoned. `preflightReading`: the preflight Job has not finished or a pod of it still runs (it reads
   * the files, and starts a server of its own on them for `pg_upgrade --check`).
   */
  abandoned?: { preflightReading: boolean };
  now: Date;
}

export type UpgradeStepName =
  | 'WaitingForWindow'
  | 'Backup'
  | 'Switchover'
  | 'Stopping'
  | 'Preflight'
  | 'Upgrade'
  | 'Starting'
  | 'Verify'
  | 'RollingBack'
  | 'Cleanup'
  | 'Done'
  | 'Failed';

/** What the StatefulSet must look like for this step. */
export interface WorkloadDirective {
  image: string;
  /**
   * 0 while the data files are offline (preflight, upgrade, rollback); 1 while the new server starts and is
   * verified on pod 0 alone; all of them otherwise.
   */
  replicas: number;
  /** The major of the data files as the pod will use them. */
  dataMajor: number;
  /**
   * Set from the moment the files go offline until the upgrade is Done or rolled back: the major the files are being
   * converted to. Recorded on the StatefulSet before any Job touches the files, so the reconcile keeps following this
   * upgrade whatever the spec says later, and never starts an older server on converted files.
   */
  upgradingTo?: number;
}

export type UpgradeAction =
  | { kind: 'wait'; why: string; requeueAfterMs?: number }
  | { kind: 'create-backup'; name: string }
  /** Set the switchover annotation to `target` (pod 0), so the replication step hands the primary to it. */
  | { kind: 'request-switchover'; target: string }
  | { kind: 'create-preflight' }
  | { kind: 'create-upgrade' }
  | { kind: 'create-verify' }
  | { kind: 'create-rollback'; cause: string }
  | { kind: 'create-cleanup' }
  | { kind: 'none' };

export interface UpgradePlan {
  step: UpgradeStepName;
  workload: WorkloadDirective;
  next: UpgradeAction;
  /** Why the upgrade failed (step Failed or RollingBack). */
  failure?: string;
  backup?: string;
}

/** How long the new server may take to become ready after the upgrade Job before the upgrade is rolled back. */
export const START_TIMEOUT_MS = 15 * 60_000;

/** Attempt 1 keeps the names of before attempts existed; a later attempt has a backup of its own. */
export function preUpgradeBackupName(sampleDbName: string, toMajor: number, attempt = 1): string {
  return `${sampleDbName}-pre-upgrade-${toMajor}${attempt > 1 ? `-attempt-${attempt}` : ''}`;
}

/** What status.upgrade recorded about the last major upgrade. */
export interface UpgradeRecord {
  toMajor: number;
  step: string;
  attempt?: number;
  retryRequest?: string;
}

/**
 * Which attempt at the upgrade to `toMajor` the cluster's objects are named for, from the status alone: the
 * recorded attempt, or the next one once the recorded attempt was abandoned (spec.version set back before its
 * upgrade Job). Stable until the status changes, so a kill before the status write names the same objects again.
 */
export function currentAttempt(record: UpgradeRecord | undefined, toMajor: number): number {
  if (record?.toMajor !== toMajor) return 1;
  const attempt = record.attempt ?? 1;
  return record.step === 'Abandoned' ? attempt + 1 : attempt;
}

/**
 * A retry of a failed upgrade: only when this attempt ended Failed with the old server up on its own files (not
 * after a failed rollback, the files are in doubt), the spec still asks for it, and the annotation carries a value
 * the status has not recorded yet. Any value seen is recorded, so one value starts at most one attempt.
 */
export function retryWanted(
  plan: Pick<UpgradePlan, 'step' | 'workload'>,
  fromMajor: number,
  record: UpgradeRecord | undefined,
  request: string | undefined,
): boolean {
  return (
    plan.step === 'Failed' &&
    plan.workload.replicas > 0 &&
    plan.workload.dataMajor === fromMajor &&
    request !== undefined &&
    request !== record?.retryRequest
  );
}

/** Why the upgraded server does not pass, once that is known for good. */
function verificationFailure(obs: UpgradeObservation): string | undefined {
  const { verify } = obs;
  if (verify?.state === 'failed') return `verification failed: ${verify.message}`;
  if (verify?.state === 'succeeded' && Number.parseInt(verify.version ?? '', 10) !== obs.toMajor) {
    return `verification failed: the server reports ${verify.version ?? 'no version'}, not ${obs.toMajor}`;
  }
  const since = Date.parse(obs.upgrade?.state === 'succeeded' ? (obs.upgrade.completedAt ?? '') : '');
  if (!verify && !Number.isNaN(since) && obs.now.getTime() - since > START_TIMEOUT_MS) {
    return `PostgreSQL ${obs.toMajor} did not become ready within ${START_TIMEOUT_MS / 60_000} minutes`;
  }
  return undefined;
}

/** The next thing to do in the major upgrade from `fromMajor` to `toMajor`. */
export function planUpgrade(obs: UpgradeObservation, sampleDbName: string, attempt = 1): UpgradePlan {
  const upReplicas = obs.upReplicas ?? 1;
  const oldUp: WorkloadDirective = { image: obs.oldImage, replicas: upReplicas, dataMajor: obs.fromMajor };
  const oldDown: WorkloadDirective = { ...oldUp, replicas: 0 };
  const newUp: WorkloadDirective = { image: obs.newImage, replicas: 1, dataMajor: obs.toMajor };
  const newAll: WorkloadDirective = { ...newUp, replicas: upReplicas };
  const backup = obs.backup?.name;
  const plan = (
    step: UpgradeStepName,
    workload: WorkloadDirective,
    next: UpgradeAction,
    failure?: string,
  ) => ({
    step,
    // Settled: Done (new files, new server), or Failed with the old server up (old files). Before the files go
    // offline (window, backup, a preflight that failed) nothing has touched them.
    workload:
      step === 'Done' || (workload.replicas > 0 && workload.dataMajor === obs.fromMajor)
        ? workload
        : { ...workload, upgradingTo: obs.toMajor },
    next,
    ...(failure ? { failure } : {}),
    ...(backup ? { backup } : {}),
  });
  const stsAt = (w: WorkloadDirective) =>
    obs.statefulSet.replicas === w.replicas && obs.statefulSet.image === w.image;
  const stopped = stsAt(oldDown) && !obs.statefulSet.podExists;
  // The files go offline only with the primary on pod 0 (the volume the Jobs convert, the pod that runs alone).
  // From then on the StatefulSet records the upgrade and the elections are paused (the replication step reads it),
  // so the primary cannot move away from pod 0 any more.
  const stop = (): UpgradePlan => {
    const pod0 = `${sampleDbName}-0`;
    const replication = obs.replication;
    if (replication && obs.statefulSet.replicas > 0 && replication.primaryOrdinal !== 0) {
      if (replication.primaryOrdinal === undefined) {
        return plan('Switchover', oldUp, {
          kind: 'wait',
          why: 'no primary is elected, or a handover is under way; the upgrade stops the instances after it',
        });
      }
      const primary = `${sampleDbName}-${replication.primaryOrdinal}`;
      if (replication.switchoverTo === undefined) {
        return plan('Switchover', oldUp, { kind: 'request-switchover', target: pod0 });
      }
      return plan('Switchover', oldUp, {
        kind: 'wait',
        why:
          replication.switchoverTo === pod0
            ? `handing the primary over from ${primary} to ${pod0} (the upgrade converts ${pod0}'s volume and runs it alone)`
            : `a switchover to ${replication.switchoverTo} is asked for (annotation ${ANNOTATIONS.switchoverTo}); the upgrade needs the primary on ${pod0} and waits until that switchover ends`,
      });
    }
    return plan('Stopping', oldDown, { kind: 'wait', why: `stopping PostgreSQL ${obs.fromMajor}` });
  };

  // A rollback, once started, is carried through whatever else the cluster shows.
  if (obs.rollback) {
    const cause = obs.rollback.cause ?? 'the upgrade failed';
    if (obs.rollback.state === 'succeeded') return plan('Failed', oldUp, { kind: 'none' }, cause);
    if (obs.rollback.state === 'failed') {
      return plan(
        'Failed',
        oldDown,
        {
          kind: 'wait',
          why: `the rollback Job failed (${obs.rollback.message}); the database stays stopped`,
        },
        `${cause}; then the rollback failed: ${obs.rollback.message}`,
      );
    }
    if (!stopped)
      return plan('RollingBack', oldDown, { kind: 'wait', why: 'stopping the new server' }, cause);
    return plan(
      'RollingBack',
      oldDown,
      { kind: 'wait', why: 'the rollback Job puts the old files back' },
      cause,
    );
  }
  // Abandoned before the upgrade Job: nothing was converted, but the old server must not start on files the
  // preflight Job still reads (two servers on one data directory from two pods: their lock files do not see each
  // other). Once the preflight's pods are gone the old server starts, as for a preflight that failed.
  if (obs.abandoned && !obs.upgrade) {
    const why = `spec.version is ${obs.fromMajor} again; PostgreSQL ${obs.fromMajor} starts once the preflight Job has stopped reading the files`;
    if (obs.abandoned.preflightReading) return plan('Preflight', oldDown, { kind: 'wait', why });
    return plan('Failed', oldUp, { kind: 'none' }, `the upgrade was abandoned: ${why}`);
  }

  const rollBack = (cause: string): UpgradePlan =>
    stopped
      ? plan('RollingBack', oldDown, { kind: 'create-rollback', cause }, cause)
      : plan('RollingBack', oldDown, { kind: 'wait', why: 'stopping the new server' }, cause);

  if (obs.cleanup?.state === 'succeeded') return plan('Done', newAll, { kind: 'none' });
  if (obs.cleanup) {
    // The new server has been verified: a failed cleanup only leaves the old files behind, it is no reason to go back.
    const why =
      obs.cleanup.state === 'failed'
        ? `the old data files could not be removed (${obs.cleanup.message}); delete the cleanup Job to retry`
        : 'removing the old data files';
    return plan('Cleanup', newUp, { kind: 'wait', why });
  }

  if (obs.upgrade?.state === 'succeeded') {
    // Every cause below is stable (a failed Job stays failed, time only grows), so the decision to go back holds
    // while the new server is being stopped.
    const cause = verificationFailure(obs);
    if (cause) return rollBack(cause);
    if (!stsAt(newUp) || obs.statefulSet.podImage !== obs.newImage || !obs.statefulSet.podReady) {
      return plan('Starting', newUp, {
        kind: 'wait',
        why: `PostgreSQL ${obs.toMajor} starts on the upgraded files`,
      });
    }
    if (!obs.verify) return plan('Verify', newUp, { kind: 'create-verify' });
    if (obs.verify.state === 'running')
      return plan('Verify', newUp, { kind: 'wait', why: 'verifying the server' });
    return plan('Cleanup', newUp, { kind: 'create-cleanup' });
  }
  if (obs.upgrade?.state === 'failed') return rollBack(`the upgrade Job failed: ${obs.upgrade.message}`);
  if (obs.upgrade) return plan('Upgrade', oldDown, { kind: 'wait', why: 'pg_upgrade runs' });

  if (obs.preflight?.state === 'failed') {
    // The preflight only reads: the old files are untouched, the old server simply starts again.
    return plan('Failed', oldUp, { kind: 'none' }, `the preflight failed: ${obs.preflight.message}`);
  }
  if (obs.preflight?.state === 'succeeded') {
    // Normally stopped since before the preflight; not when the old server started again in between (an upgrade
    // abandoned after its preflight, then asked for again): pg_upgrade never runs beside a server.
    if (!stopped) return stop();
    return plan('Upgrade', oldDown, { kind: 'create-upgrade' });
  }
  if (obs.preflight) return plan('Preflight', oldDown, { kind: 'wait', why: 'pg_upgrade --check runs' });

  if (obs.backup?.phase === 'Completed') {
    if (!stopped) return stop();
    return plan('Preflight', oldDown, { kind: 'create-preflight' });
  }
  if (obs.backup?.phase === 'Failed') {
    return plan(
      'Failed',
      oldUp,
      { kind: 'none' },
      `the pre-upgrade backup ${obs.backup.name} failed${obs.backup.message ? `: ${obs.backup.message}` : ''}`,
    );
  }
  if (obs.backup) return plan('Backup', oldUp, { kind: 'wait', why: `backup ${obs.backup.name} runs` });
  if (!obs.window.open) {
    return plan('WaitingForWindow', oldUp, {
      kind: 'wait',
      why: `the maintenance window opens${obs.window.opensAt ? ` at ${obs.window.opensAt}` : ' later'}`,
    });
  }
  return plan('Backup', oldUp, {
    kind: 'create-backup',
    name: preUpgradeBackupName(sampleDbName, obs.toMajor, attempt),
  });
}
