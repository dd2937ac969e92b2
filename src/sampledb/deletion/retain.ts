// When the protection a deletion policy promises cannot be had, the data is kept instead: the bound PersistentVolume of
// each data claim is switched to reclaimPolicy Retain before the claim is released. Pure: which cause (if any) applies,
// and which volumes it concerns, from the observation alone.
import type { DataVolume, DeletionObservation, ProtectionMethod } from './plan.ts';

/** Why the data was kept on its volumes rather than protected as the policy says. */
export type RetainCause =
  /** The namespace is being deleted: the apiserver refuses new snapshots, backups and pods there. */
  | 'NamespaceTerminating'
  /** The StatefulSet went (deleted by someone else, a cascade) before the final backup completed. */
  | 'WorkloadGone'
  /** The database was not Ready within the bound since the deletion started: no pg_dump can run. */
  | 'DatabaseNotReady'
  /** The final backup Job succeeded without reporting a result: another attempt would do the same. */
  | 'FinalBackupNoResult'
  /** A data claim is being deleted (kubectl delete pvc, the namespace): a claim being deleted cannot be snapshotted. */
  | 'ClaimDeleting'
  /** deletion.policy Retain, and the claim is being deleted anyway: its volume is what Retain keeps. */
  | 'RetainPolicy'
  /** A claim of a SampleDB that no longer exists is being deleted: no policy applies, the data is kept. */
  | 'SampleDbGone';

export interface RetainDecision {
  cause: RetainCause;
  message: string;
}

/** How long a final backup waits for a Ready database before the data is kept on its volumes instead. */
export const FINAL_BACKUP_READY_BOUND_MS = 5 * 60_000;

const NO_RESULT = 'NoResult';

/**
 * Whether the policy's protection cannot be taken, and why. `undefined`: it can (or is already taken), go on.
 * `readyInMs` on the second result: the database may still become Ready; look again after that long.
 */
export function cannotProtect(
  obs: DeletionObservation,
  method: ProtectionMethod,
): { decision?: RetainDecision; readyInMs?: number } {
  if (method === 'none') return {};
  const latest = [...obs.backups].sort((a, b) => a.attempt - b.attempt).at(-1);
  // A completed final backup protects, whatever happened after it.
  if (method === 'backup' && latest?.phase === 'Completed') return {};
  if (obs.protectionRefused === 'NamespaceTerminating')
    return {
      decision: {
        cause: 'NamespaceTerminating',
        message:
          'the namespace is being deleted, and the apiserver refuses new snapshots, backups and pods in it',
      },
    };
  if (method === 'snapshot') {
    const unsnapshotted = obs.dataVolumes.filter(
      (v) => v.deleting && !obs.snapshots.some((s) => s.pvcName === v.name),
    );
    if (unsnapshotted.length === 0) return {};
    return {
      decision: {
        cause: 'ClaimDeleting',
        message: `PersistentVolumeClaim ${unsnapshotted.map((v) => v.name).join(', ')} was deleted before it was snapshotted, and a claim being deleted cannot be snapshotted`,
      },
    };
  }
  // method === 'backup', not completed
  if (latest?.phase === 'Failed' && latest.reason === NO_RESULT)
    return {
      decision: {
        cause: 'FinalBackupNoResult',
        message: `the final backup ${latest.name} ran but its container reported no result (${latest.message ?? 'no message'}); another attempt would do the same`,
      },
    };
  if (obs.statefulSet !== 'present')
    return {
      decision: {
        cause: 'WorkloadGone',
        message:
          'the StatefulSet was deleted before the final backup completed, so there is no database to back up',
      },
    };
  if (obs.databaseReady) return {};
  const started = obs.deletionStartedAt ? Date.parse(obs.deletionStartedAt) : obs.now.getTime();
  const left = started + FINAL_BACKUP_READY_BOUND_MS - obs.now.getTime();
  if (left > 0) return { readyInMs: left };
  return {
    decision: {
      cause: 'DatabaseNotReady',
      message: `the database did not become Ready within ${FINAL_BACKUP_READY_BOUND_MS / 60_000} min of the deletion, so no pg_dump could run`,
    },
  };
}

/**
 * Volumes whose PersistentVolume is still to be switched to Retain (bound, not switched yet, not covered by a ready
 * snapshot), with the cause to report; none when nothing needs it.
 */
export function volumesToRetain(
  obs: DeletionObservation,
  decision: RetainDecision | undefined,
): { volumes: DataVolume[]; decision: RetainDecision } | undefined {
  const bound = obs.dataVolumes.filter((v) => v.volumeName && !v.retained);
  if (decision) {
    // A ready snapshot protects its own volume whatever happens to the others.
    const volumes = bound.filter((v) => !obs.snapshots.some((s) => s.pvcName === v.name && s.readyToUse));
    return volumes.length > 0 ? { volumes, decision } : undefined;
  }
  // Policy Retain keeps the claim; a claim deleted anyway (the namespace, kubectl) is kept through its volume.
  const deleted = obs.policy === 'Retain' ? bound.filter((v) => v.deleting) : [];
  if (deleted.length === 0) return undefined;
  return {
    volumes: deleted,
    decision: {
      cause: 'RetainPolicy',
      message: `deletion.policy is Retain and PersistentVolumeClaim ${deleted.map((v) => v.name).join(', ')} is being deleted`,
    },
  };
}
