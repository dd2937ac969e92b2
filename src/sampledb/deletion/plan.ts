// What to do next while a SampleDB is being deleted, decided from what the cluster shows and nothing else: the
// operator can be killed between any two steps and the next run picks up exactly where this one stopped, never
// skipping the data-protection step and never deleting twice.
import type { BackupPhase, DeletionPolicy } from '../../api/index.ts';
import { exponentialDelay } from '../../runtime/index.ts';
import { cannotProtect, type RetainDecision, volumesToRetain } from './retain.ts';

export interface DataVolume {
  name: string;
  /** Has a deletionTimestamp already: deleting it again would be deleting twice. */
  deleting: boolean;
  /** Carries the orphaned label (policy Retain). */
  orphaned: boolean;
  /** Carries our data-protection finalizer: the claim and its volume stay until the deletion releases them. */
  held: boolean;
  /** The bound PersistentVolume; none while unbound (then it holds no data). */
  volumeName?: string;
  /** Its PersistentVolume was switched to reclaimPolicy Retain (the claim's retained-volume annotation). */
  retained: boolean;
}

/** A VolumeSnapshot taken of one data volume for this deletion. */
export interface FinalSnapshot {
  name: string;
  pvcName: string;
  readyToUse: boolean;
  error?: string;
}

/** A SampleDBBackup taken for this deletion (when snapshots are unavailable). */
export interface FinalBackup {
  name: string;
  attempt: number;
  phase?: BackupPhase;
  /** When it failed (the Failed condition's transition), for the retry backoff. */
  failedAt?: string;
  /** The Failed condition's reason (NoResult: the Job succeeded without a result; retrying would do the same). */
  reason?: string;
  message?: string;
}

export interface DeletionObservation {
  policy: DeletionPolicy;
  /** A usable VolumeSnapshotClass; undefined when the snapshot API or a class is missing. */
  snapshotClass?: string;
  dataVolumes: readonly DataVolume[];
  snapshots: readonly FinalSnapshot[];
  backups: readonly FinalBackup[];
  statefulSet: 'present' | 'deleting' | 'absent';
  databasePodExists: boolean;
  /** The backups PVC the operator created (never the user's claimName), if it exists. */
  backupVolume?: { name: string; deleting: boolean };
  /** SampleDBBackups of this SampleDB (removed under policy Delete). */
  backupObjects: readonly string[];
  /**
   * Backups of an earlier SampleDB of the same name (another uid) whose dumps are on the backup volume: the volume is
   * kept for them under policy Delete.
   */
  othersOnBackupVolume?: readonly string[];
  /** At least one database pod is Ready (what a pg_dump needs). */
  databaseReady: boolean;
  /** The SampleDB's deletionTimestamp: the final backup's wait for a Ready database is bounded from it. */
  deletionStartedAt?: string;
  /** Recorded on the SampleDB when the apiserver refused to create the protection (NamespaceTerminating). */
  protectionRefused?: string;
  now: Date;
}

export type ProtectionMethod = 'snapshot' | 'backup' | 'none';

/** A data claim and the PersistentVolume bound to it. */
export interface BoundVolume {
  pvc: string;
  pv: string;
}

export type DeletionAction =
  | { kind: 'create-snapshot'; pvcName: string; className: string }
  | { kind: 'wait-snapshot'; pending: string[]; errors: string[] }
  | { kind: 'create-backup'; attempt: number }
  /** `attempt`: set from the second attempt on, so a retry is visible and counted. */
  | {
      kind: 'wait-backup';
      name: string;
      attempt?: number;
      retryInMs?: number;
      lastError?: string;
      /** The database is not Ready: in this long the data is kept on its volumes instead (RetainCause). */
      giveUpInMs?: number;
    }
  | { kind: 'hold-data-volumes'; names: string[] }
  | { kind: 'retain-volumes'; volumes: BoundVolume[]; decision: RetainDecision }
  | { kind: 'release-data-volumes'; names: string[] }
  | { kind: 'delete-statefulset' }
  | { kind: 'wait-workload-gone' }
  | { kind: 'delete-data-volumes'; names: string[] }
  | { kind: 'orphan-data-volumes'; names: string[] }
  | { kind: 'delete-backup-objects'; names: string[] }
  | { kind: 'delete-backup-volume'; name: string }
  | { kind: 'remove-finalizer' };

export interface DeletionPlan {
  method: ProtectionMethod;
  /** True once the data is protected (or needs no protection): from then on, deleting data is allowed. */
  protected: boolean;
  /** Set when the data was kept on Retain volumes instead of the policy's protection: why, and which volumes. */
  retained?: { decision: RetainDecision; volumes: BoundVolume[] };
  next: DeletionAction;
}

const BACKUP_RETRY = { initialMs: 30_000, maxMs: 10 * 60_000, factor: 2 } as const;

/** How long to wait after the n-th failed final backup before the next attempt: 30 s, 1 min, 2 min, ... 10 min. */
export function backupRetryDelayMs(failedAttempts: number): number {
  return exponentialDelay(failedAttempts - 1, BACKUP_RETRY);
}

/**
 * Snapshot or backup? Once one has been started it is kept (a class appearing or disappearing mid-deletion must not
 * make the operator start over with the other method).
 */
export function protectionMethod(obs: DeletionObservation): ProtectionMethod {
  if (obs.policy !== 'Snapshot') return 'none';
  if (obs.dataVolumes.length === 0 && obs.snapshots.length === 0 && obs.backups.length === 0) return 'none';
  if (obs.snapshots.length > 0) return 'snapshot';
  if (obs.backups.length > 0) return 'backup';
  return obs.snapshotClass ? 'snapshot' : 'backup';
}

function protectionStep(obs: DeletionObservation, method: ProtectionMethod): DeletionAction | undefined {
  if (method === 'snapshot') {
    const className = obs.snapshotClass;
    for (const volume of obs.dataVolumes) {
      if (obs.snapshots.some((s) => s.pvcName === volume.name)) continue;
      // A claim being deleted cannot be snapshotted: retain.ts keeps its volume instead (cause ClaimDeleting).
      if (volume.deleting) continue;
      if (!className) {
        return {
          kind: 'wait-snapshot',
          pending: [volume.name],
          errors: ['no VolumeSnapshotClass is available any more to snapshot the remaining volumes'],
        };
      }
      return { kind: 'create-snapshot', pvcName: volume.name, className };
    }
    const notReady = obs.snapshots.filter((s) => !s.readyToUse);
    if (notReady.length === 0) return undefined;
    return {
      kind: 'wait-snapshot',
      pending: notReady.map((s) => s.name),
      errors: notReady.flatMap((s) => (s.error ? [`${s.name}: ${s.error}`] : [])),
    };
  }
  if (method === 'backup') {
    const latest = [...obs.backups].sort((a, b) => a.attempt - b.attempt).at(-1);
    if (!latest) return { kind: 'create-backup', attempt: 1 };
    if (latest.phase === 'Completed') return undefined;
    const counted = latest.attempt > 1 ? { attempt: latest.attempt } : {};
    if (latest.phase !== 'Failed') return { kind: 'wait-backup', name: latest.name, ...counted };
    const failedAt = latest.failedAt ? Date.parse(latest.failedAt) : obs.now.getTime();
    const retryAt = failedAt + backupRetryDelayMs(latest.attempt);
    const lastError = latest.message ?? 'the final backup failed';
    if (obs.now.getTime() < retryAt) {
      return {
        kind: 'wait-backup',
        name: latest.name,
        ...counted,
        retryInMs: retryAt - obs.now.getTime(),
        lastError,
      };
    }
    return { kind: 'create-backup', attempt: latest.attempt + 1 };
  }
  return undefined;
}

const bound = (v: DataVolume): BoundVolume => ({ pvc: v.name, pv: v.volumeName ?? '' });

/** The next thing to do for a SampleDB being deleted. */
export function planDeletion(obs: DeletionObservation): DeletionPlan {
  const method = protectionMethod(obs);
  // Hold first: from here on, no one (the namespace, a cascade, kubectl) can remove a claim before we release it.
  // An orphaned claim was handed over (policy Retain) and released: it is not held again.
  const unheld = obs.dataVolumes.filter((v) => !v.held && !v.deleting && !v.orphaned).map((v) => v.name);
  if (obs.policy !== 'Delete' && unheld.length > 0)
    return { method, protected: false, next: { kind: 'hold-data-volumes', names: unheld } };

  const { decision, readyInMs } = cannotProtect(obs, method);
  if (!decision) {
    const protecting = protectionStep(obs, method);
    if (protecting) {
      const next =
        protecting.kind === 'wait-backup' && readyInMs !== undefined
          ? { ...protecting, giveUpInMs: readyInMs }
          : protecting;
      return { method, protected: false, next };
    }
  }
  // The policy cannot be satisfied (or Retain meets a deleted claim): keep the data on its volumes, first.
  const toRetain = volumesToRetain(obs, decision);
  if (toRetain)
    return {
      method,
      protected: false,
      next: { kind: 'retain-volumes', volumes: toRetain.volumes.map(bound), decision: toRetain.decision },
    };
  const retainedVolumes = obs.dataVolumes.filter((v) => v.retained && v.volumeName).map(bound);
  const plan = (next: DeletionAction): DeletionPlan => ({
    method,
    protected: true,
    // Only when a volume was kept: a decision with nothing to keep (ready snapshots, unbound claims) is reported plainly.
    ...(decision && retainedVolumes.length > 0 ? { retained: { decision, volumes: retainedVolumes } } : {}),
    next,
  });

  // The workload goes first: PostgreSQL stops writing before its volumes are released.
  if (obs.statefulSet === 'present') return plan({ kind: 'delete-statefulset' });
  if (obs.statefulSet === 'deleting' || obs.databasePodExists) return plan({ kind: 'wait-workload-gone' });

  const held = obs.dataVolumes.filter((v) => v.held).map((v) => v.name);
  if (obs.policy === 'Retain') {
    const names = obs.dataVolumes.filter((v) => !v.orphaned && !v.deleting).map((v) => v.name);
    if (names.length > 0) return plan({ kind: 'orphan-data-volumes', names });
    // Orphaned (or retained): nothing of ours may keep them; a new SampleDB of the name holds them again.
    if (held.length > 0) return plan({ kind: 'release-data-volumes', names: held });
    return plan({ kind: 'remove-finalizer' });
  }
  const undeleted = obs.dataVolumes.filter((v) => !v.deleting).map((v) => v.name);
  if (undeleted.length > 0) return plan({ kind: 'delete-data-volumes', names: undeleted });
  if (held.length > 0) return plan({ kind: 'release-data-volumes', names: held });
  if (obs.policy === 'Delete') {
    if (obs.backupObjects.length > 0)
      return plan({ kind: 'delete-backup-objects', names: [...obs.backupObjects] });
    if (obs.backupVolume && !obs.backupVolume.deleting && (obs.othersOnBackupVolume ?? []).length === 0)
      return plan({ kind: 'delete-backup-volume', name: obs.backupVolume.name });
  }
  return plan({ kind: 'remove-finalizer' });
}
