// The backups PVC, when backups are configured and the user gave no claim of their own. Created once: its size is
// not reconciled (a smaller request would be refused, a larger one needs an expandable class), and it is not owned
// by the SampleDB so the garbage collector never takes the final backup with it.
import { type Client, isStatus } from '../../runtime/index.ts';
import { backupPvc } from '../backup-job.ts';
import type { SampleDbInstance } from '../instance.ts';
import { PVCS } from '../resources.ts';
import type { ClusterView, Step } from './context.ts';

/** Creates the operator's backups PVC if it is missing; used by this step, the final backup and the backup controller. */
export async function ensureBackupVolume(
  instance: SampleDbInstance,
  view: ClusterView,
  client: Client,
): Promise<void> {
  const desired = backupPvc(instance);
  if (!desired?.metadata?.name) return;
  if (view.get(PVCS, desired.metadata.namespace ?? '', desired.metadata.name)) return;
  try {
    await client.create(PVCS, desired as never);
  } catch (err) {
    if (!isStatus(err, 409)) throw err;
  }
}

export const ensureBackupPvc: Step = {
  name: 'backup-volume',
  async run(ctx) {
    if (ctx.instance.object.spec.backup) await ensureBackupVolume(ctx.instance, ctx.view, ctx.client);
    return undefined;
  },
};
