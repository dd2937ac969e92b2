// The DeletionProtected condition for a plan: how the data is protected, or what the deletion waits for. Pure.
import { DATA_FINALIZER, REASONS, SAMPLEDB_CONDITIONS } from '../../api/index.ts';
import type { ConditionInput } from '../../runtime/index.ts';
import type { SampleDbInstance } from '../instance.ts';
import type { DeletionPlan } from './plan.ts';

export function deletionCondition(instance: SampleDbInstance, plan: DeletionPlan): ConditionInput {
  const { next } = plan;
  const set = (status: 'True' | 'False', reason: string, message: string): ConditionInput => ({
    type: SAMPLEDB_CONDITIONS.deletionProtected,
    status,
    reason,
    message,
  });
  const policy = instance.spec.deletion.policy;
  const kept = (volumes: readonly { pvc: string; pv: string }[]) =>
    volumes.map((v) => `PersistentVolume ${v.pv} (claim ${v.pvc})`).join(', ');
  if (next.kind === 'retain-volumes')
    return set(
      'False',
      REASONS.dataRetained,
      `Keeping the data instead: switching ${kept(next.volumes)} to reclaimPolicy Retain, because ${next.decision.message} (${next.decision.cause}).`,
    );
  if (plan.protected && plan.retained) {
    return set(
      'True',
      REASONS.dataRetained,
      `The data is kept on ${kept(plan.retained.volumes)}, reclaimPolicy Retain: ${plan.retained.decision.message} (${plan.retained.decision.cause}). Recover it by binding a new claim to the volume (docs/deletion.md).`,
    );
  }
  if (plan.protected) {
    const how =
      plan.method === 'snapshot'
        ? 'the final VolumeSnapshots are ready'
        : plan.method === 'backup'
          ? `the final backup completed on PersistentVolumeClaim ${instance.backupClaim.name}`
          : policy === 'Snapshot'
            ? 'there was no data volume to protect'
            : `deletion.policy is ${policy}`;
    return set('True', REASONS.protected, `Data may be removed: ${how}.`);
  }
  if (next.kind === 'wait-backup' && next.lastError) {
    return set(
      'False',
      REASONS.finalBackupFailed,
      `The final backup ${next.name}${next.attempt ? ` (attempt ${next.attempt})` : ''} failed: ${next.lastError}. Nothing was deleted; retrying in ${Math.ceil((next.retryInMs ?? 0) / 1000)}s. To delete without a backup, set spec.deletion.policy to Delete or Retain.`,
    );
  }
  const attempt =
    next.kind === 'wait-backup' ? next.attempt : next.kind === 'create-backup' ? next.attempt : 1;
  if ((next.kind === 'wait-backup' || next.kind === 'create-backup') && attempt !== undefined && attempt > 1)
    return set(
      'False',
      REASONS.finalBackupRunning,
      `Taking a final pg_dump backup before the volumes are removed: attempt ${attempt}, after ${attempt - 1} failed.`,
    );
  if (next.kind === 'wait-backup' && next.giveUpInMs !== undefined)
    return set(
      'False',
      REASONS.finalBackupRunning,
      `The final pg_dump backup waits for a Ready database; if it is not Ready in ${Math.ceil(next.giveUpInMs / 1000)}s, the data is kept on its volumes (reclaimPolicy Retain) instead.`,
    );
  if (next.kind === 'wait-backup' || next.kind === 'create-backup')
    return set(
      'False',
      REASONS.finalBackupRunning,
      'Taking a final pg_dump backup before the volumes are removed.',
    );
  if (next.kind === 'hold-data-volumes')
    return set(
      'False',
      REASONS.holdingVolumes,
      `Holding ${next.names.join(', ')} (finalizer ${DATA_FINALIZER}) before the data is protected.`,
    );
  if (next.kind === 'wait-snapshot' && next.errors.length > 0) {
    return set(
      'False',
      REASONS.snapshotFailed,
      `Nothing was deleted; the final VolumeSnapshots report: ${next.errors.join('; ')}.`,
    );
  }
  return set(
    'False',
    REASONS.snapshotInProgress,
    'Waiting for the final VolumeSnapshots to become readyToUse.',
  );
}
