// Holds every data claim with our finalizer, so no one (the namespace, a cascade, kubectl delete pvc) removes it before
// the deletion policy is applied; a claim deleted while the SampleDB lives keeps its data on a Retain volume
// (deletion/claims.ts decides, deletion/volumes.ts writes).
import { REASONS, SAMPLEDB_CONDITIONS } from '../../api/index.ts';
import { planClaims } from '../deletion/claims.ts';
import { observeDataVolumes } from '../deletion/observe.ts';
import { holdVolumes, releaseVolumes, retainVolumes, VOLUME_WRITES } from '../deletion/volumes.ts';
import type { Step } from './context.ts';

/** How soon the steps after a retain run again (the claim's own watch event usually comes first). */
const RETAINED_REQUEUE_MS = 1_000;

export const holdDataVolumes: Step = {
  name: 'data-volumes',
  writes: VOLUME_WRITES,
  async run({ instance, observed, view, write, log }) {
    const { namespace } = instance;
    const action = planClaims(
      instance.spec.deletion.policy,
      observeDataVolumes(view, namespace, instance.name),
    );
    switch (action.kind) {
      case 'none':
        return undefined;
      case 'hold':
        await holdVolumes(view, write, namespace, action.names);
        return undefined;
      case 'retain':
        await retainVolumes(
          {
            namespace,
            sampleDbName: instance.name,
            sampleDb: observed.sampleDb ?? instance.object,
            write,
            log,
          },
          action.volumes,
          action.decision,
        );
        // Said in the status too (the Events may be refused: a namespace being deleted takes no creates). The chain
        // halts here so that the status is written now: a later step's create would be refused in a Terminating
        // namespace and fail the reconcile before any status is written. The claims' watch events (the
        // retained-volume annotation) bring the release, and the rest of the steps, right after.
        return {
          halt: true,
          requeueAfterMs: RETAINED_REQUEUE_MS,
          conditions: [
            {
              type: SAMPLEDB_CONDITIONS.deletionProtected,
              status: 'False',
              reason: REASONS.dataRetained,
              message: `Kept ${action.volumes.map((v) => `PersistentVolume ${v.pv} (claim ${v.pvc})`).join(', ')} with reclaimPolicy Retain: ${action.decision.message} (${action.decision.cause}).`,
            },
          ],
        };
      case 'release':
        await releaseVolumes(view, write, namespace, action.names);
        return undefined;
    }
  },
};
