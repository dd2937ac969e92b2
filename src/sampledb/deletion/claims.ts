// The data claims outside a SampleDB's own deletion: while it lives (a claim deleted by hand or by a cascade) and
// after it is gone (our finalizer must not keep a claim forever). Pure: the next action from the observed claims.
//
// - Live: every claim is held (our finalizer). A claim someone deletes is released, since a SampleDB cannot keep a
//   claim its owner deleted, but under Snapshot or Retain its PersistentVolume is first switched to Retain (a claim
//   being deleted cannot be snapshotted, and the database pod may already be gone): the data stays on the volume.
// - Gone (no SampleDB of that name): nothing will apply a policy any more. A claim being deleted keeps its volume
//   (Retain: the policy is unknown, so the safe one); every claim is then released, never left Terminating forever.
import type { DeletionPolicy } from '../../api/index.ts';
import type { BoundVolume, DataVolume } from './plan.ts';
import type { RetainDecision } from './retain.ts';

export type ClaimAction =
  | { kind: 'none' }
  | { kind: 'hold'; names: string[] }
  | { kind: 'retain'; volumes: BoundVolume[]; decision: RetainDecision }
  | { kind: 'release'; names: string[] };

/** `policy`: the live SampleDB's deletion policy; undefined when no SampleDB of that name exists. */
export function planClaims(policy: DeletionPolicy | undefined, volumes: readonly DataVolume[]): ClaimAction {
  const live = policy !== undefined;
  if (live) {
    const unheld = volumes.filter((v) => !v.held && !v.deleting).map((v) => v.name);
    if (unheld.length > 0) return { kind: 'hold', names: unheld };
  }
  const deleting = volumes.filter((v) => v.held && v.deleting);
  const toRetain = policy === 'Delete' ? [] : deleting.filter((v) => v.volumeName && !v.retained);
  if (toRetain.length > 0) {
    const claims = toRetain.map((v) => v.name).join(', ');
    return {
      kind: 'retain',
      volumes: toRetain.map((v) => ({ pvc: v.name, pv: v.volumeName ?? '' })),
      decision: live
        ? {
            cause: 'ClaimDeleting',
            message: `PersistentVolumeClaim ${claims} was deleted while its SampleDB exists; a claim being deleted cannot be snapshotted or backed up`,
          }
        : {
            cause: 'SampleDbGone',
            message: `PersistentVolumeClaim ${claims} is being deleted and its SampleDB is gone, so no deletion policy applies any more`,
          },
    };
  }
  const release = (live ? deleting : volumes.filter((v) => v.held)).map((v) => v.name);
  return release.length > 0 ? { kind: 'release', names: release } : { kind: 'none' };
}
