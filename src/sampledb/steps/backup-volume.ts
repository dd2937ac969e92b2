// The backups PVC, when backups are configured and the user gave no claim of their own. Created once: its size is
// not reconciled (a smaller request would be refused, a larger one needs an expandable class), and it is not owned
// by the SampleDB so the garbage collector never takes the final backup with it.
import { backupPvc } from '../backup-job.ts';
import type { SampleDbInstance } from '../instance.ts';
import { PVCS } from '../resources.ts';
import type { ClusterView } from '../view.ts';
import type { Writer } from '../writer.ts';
import type { Step } from './context.ts';

/** Creates the operator's backups PVC if it is missing; used by this step, the final backup and the backup controller. */
export async function ensureBackupVolume(
  instance: SampleDbInstance,
  view: ClusterView,
  write: Writer,
): Promise<void> {
  const desired = backupPvc(instance);
  if (!desired?.metadata?.name) return;
  if (view.get(PVCS, instance.namespace, desired.metadata.name)) return;
  await write.createOnce(PVCS, desired);
}

export const ensureBackupPvc: Step = {
  name: 'backup-volume',
  writes: ['create-once'],
  async run({ instance, view, write }) {
    if (instance.object.spec.backup) await ensureBackupVolume(instance, view, write);
    return undefined;
  },
};
