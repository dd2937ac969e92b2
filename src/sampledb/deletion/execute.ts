// Does the one action the plan chose. Every write is idempotent (create-once, delete of what may be gone, patches
// that set what is already set), so an action repeated after a crash between it and the next observation is harmless.
import { ANNOTATIONS, EVENT_REASONS, FINALIZER, LABELS, type SampleDbObject } from '../../api/index.ts';
import { isNamespaceTerminating, type Logger, type Stored } from '../../runtime/index.ts';
import type { SampleDbInstance } from '../instance.ts';
import { PVCS, SAMPLEDB_BACKUPS, SAMPLEDBS, SECRETS, STATEFULSETS, VOLUME_SNAPSHOTS } from '../resources.ts';
import { ensureBackupVolume } from '../steps/backup-volume.ts';
import type { ClusterView } from '../view.ts';
import type { WriteMode, Writer } from '../writer.ts';
import { finalBackup, finalSnapshot } from './objects.ts';
import type { DeletionAction } from './plan.ts';
import { holdVolumes, releaseVolumes, retainVolumes } from './volumes.ts';

/** The ways the deletion writes. */
export const DELETION_WRITES: readonly WriteMode[] = [
  'create-once',
  'patch',
  'delete',
  'guarded-patch',
  'event',
];

export interface DeletionTarget {
  readonly instance: SampleDbInstance;
  /** The SampleDB as last read or written: the finalizer is removed under its resourceVersion. */
  readonly sampleDb: Stored<SampleDbObject>;
  readonly view: ClusterView;
  readonly write: Writer;
  readonly log: Logger;
}

/** `again`: observe and plan the next action now; `wait`: something else has to happen first; `finished`: gone. */
export type ExecuteResult =
  | { kind: 'again' }
  | { kind: 'wait' }
  | { kind: 'finished'; sampleDb: Stored<SampleDbObject> };

const AGAIN = { kind: 'again' } as const;
const WAIT = { kind: 'wait' } as const;

/**
 * Runs a create of the policy's protection; when the namespace is being deleted (every create refused from now on),
 * records that on the SampleDB instead, where the plan reads it (an update is still allowed there).
 */
async function creatingProtection(
  target: DeletionTarget,
  create: () => Promise<void>,
): Promise<ExecuteResult> {
  try {
    await create();
    return AGAIN;
  } catch (err) {
    if (!isNamespaceTerminating(err)) throw err;
    const { instance, write, log } = target;
    await write.patch(
      SAMPLEDBS,
      { namespace: instance.namespace, name: instance.name },
      { metadata: { annotations: { [ANNOTATIONS.protectionRefused]: 'NamespaceTerminating' } } },
    );
    log.warn(
      {},
      'the namespace is being deleted: no snapshot or backup can be created, the data is retained',
    );
    // The SampleDB's watch event (the annotation) brings the next reconcile.
    return WAIT;
  }
}

export async function executeDeletion(
  target: DeletionTarget,
  action: DeletionAction,
): Promise<ExecuteResult> {
  const { instance, write, log } = target;
  const ref = (name: string) => ({ namespace: instance.namespace, name });
  switch (action.kind) {
    case 'hold-data-volumes':
      await holdVolumes(target.view, write, instance.namespace, action.names);
      return AGAIN;
    case 'create-snapshot':
      return creatingProtection(target, async () => {
        await write.createOnce(VOLUME_SNAPSHOTS, finalSnapshot(instance, action.pvcName, action.className));
        log.info({ pvc: action.pvcName }, 'final VolumeSnapshot requested');
      });
    case 'create-backup':
      return creatingProtection(target, async () => {
        // The backup is written to the backup volume; make sure there is one even if backups were never configured.
        await ensureBackupVolume(instance, target.view, write);
        // A retry is an Event, not a silent second Job: one deletion takes one final backup unless one failed.
        if (
          (await write.createOnce(SAMPLEDB_BACKUPS, finalBackup(instance, action.attempt))) &&
          action.attempt > 1
        ) {
          await write.event({
            regarding: target.sampleDb,
            type: 'Warning',
            reason: EVENT_REASONS.finalBackupRetry,
            action: 'Delete',
            note: `The final backup failed; attempt ${action.attempt} started. Nothing was deleted.`,
          });
        }
        log.info({ attempt: action.attempt }, 'final backup requested');
      });
    case 'retain-volumes':
      await retainVolumes(
        { namespace: instance.namespace, sampleDbName: instance.name, sampleDb: target.sampleDb, write, log },
        action.volumes,
        action.decision,
      );
      // Stop here so the status says it (DataRetained, naming the volumes) even when the rest takes no wait at all;
      // the claims' watch events (the retained-volume annotation) bring the next reconcile.
      return WAIT;
    case 'release-data-volumes':
      await releaseVolumes(target.view, write, instance.namespace, action.names);
      log.info({ pvcs: action.names }, 'data volumes released');
      return AGAIN;
    case 'delete-statefulset':
      await write.delete(STATEFULSETS, ref(instance.names.statefulSet), { propagationPolicy: 'Background' });
      return AGAIN;
    case 'delete-data-volumes':
      for (const name of action.names) await write.delete(PVCS, ref(name));
      log.info({ pvcs: action.names }, 'data volumes deleted');
      return AGAIN;
    case 'orphan-data-volumes':
      // The generated passwords are the only ones the retained data accepts: keep their Secrets too (no owner, so
      // the garbage collector leaves them), and a new SampleDB of the same name opens the volume with them. First,
      // so the plan's observation (volumes orphaned) implies it.
      for (const secret of [
        instance.names.superuserSecret,
        ...(instance.credentials.generated ? [instance.credentials.secretName] : []),
      ]) {
        await write.patch(
          SECRETS,
          ref(secret),
          { metadata: { ownerReferences: null, labels: { [LABELS.orphaned]: 'true' } } },
          { ifMissing: 'skip' },
        );
      }
      for (const name of action.names)
        await write.patch(PVCS, ref(name), { metadata: { labels: { [LABELS.orphaned]: 'true' } } });
      return AGAIN;
    case 'delete-backup-objects':
      for (const name of action.names) await write.delete(SAMPLEDB_BACKUPS, ref(name));
      return AGAIN;
    case 'delete-backup-volume':
      await write.delete(PVCS, ref(action.name));
      return AGAIN;
    case 'remove-finalizer':
      return {
        kind: 'finished',
        sampleDb: await write.removeFinalizer(SAMPLEDBS, target.sampleDb, FINALIZER),
      };
    case 'wait-snapshot':
    case 'wait-backup':
    case 'wait-workload-gone':
      return WAIT;
  }
}
