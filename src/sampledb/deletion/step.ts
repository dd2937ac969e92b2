// Deleting a SampleDB: observe, plan one action (plan.ts), do it, observe again; stop at the first thing to wait for.
// Progress lives in the cluster (the final snapshot/backup objects, the StatefulSet, the PVCs' deletionTimestamps),
// so a restarted operator continues from there. The DeletionProtected condition reports it to the user.
import { REASONS, SAMPLEDB_CONDITIONS, type SampleDbObject } from '../../api/index.ts';
import { findCondition, type Stored } from '../../runtime/index.ts';
import type { StepContext, StepOutcome } from '../steps/context.ts';
import { executeDeletion } from './execute.ts';
import { observeDeletion } from './observe.ts';
import { planDeletion } from './plan.ts';
import { deletionCondition } from './report.ts';

export { DELETION_WRITES } from './execute.ts';
export { finalBackupName, finalSnapshotName } from './objects.ts';
export { observeDeletion } from './observe.ts';

const MAX_ACTIONS_PER_RECONCILE = 16;
/** Waiting on the final backup/snapshot is watch-driven; this only bounds how stale a missed event can leave us. */
const WAIT_RECHECK_MS = 30_000;

const saysRetained = (db: SampleDbObject): boolean =>
  findCondition(db.status?.conditions, SAMPLEDB_CONDITIONS.deletionProtected)?.reason ===
  REASONS.dataRetained;

const minDefined = (...values: (number | undefined)[]): number | undefined => {
  const defined = values.filter((v) => v !== undefined);
  return defined.length > 0 ? Math.min(...defined) : undefined;
};

export type DeletionRun =
  | { removed: true; sampleDb: Stored<SampleDbObject> }
  | { removed: false; outcome: StepOutcome };

/** Runs the deletion to completion or to the first wait. `removed`: the finalizer is gone, nothing more to write. */
export async function runDeletion(ctx: StepContext): Promise<DeletionRun> {
  const { instance, view, write, log } = ctx;
  const sampleDb = ctx.observed.sampleDb ?? instance.object;
  for (let i = 0; i < MAX_ACTIONS_PER_RECONCILE; i++) {
    // Lost leadership (or shutdown): the next leader carries on from what the cluster shows; no further write here.
    if (ctx.signal.aborted) return { removed: false, outcome: { halt: true } };
    const plan = planDeletion(observeDeletion(instance, view, ctx.now()));
    const condition = deletionCondition(instance, plan);
    // Kept on Retain volumes instead: say so in the status (naming them) before going on, even when nothing else
    // would wait; the status write's own watch event brings the next reconcile.
    if (plan.retained && !saysRetained(sampleDb))
      return { removed: false, outcome: { conditions: [condition], halt: true, requeueAfterMs: 1000 } };
    log.debug({ action: plan.next.kind }, 'deletion step');
    const result = await executeDeletion({ instance, sampleDb, view, write, log }, plan.next);
    if (result.kind === 'finished') return { removed: true, sampleDb: result.sampleDb };
    if (result.kind === 'wait') {
      // A failed backup's retry, or the moment the wait for a Ready database gives up: whichever is sooner.
      const retry =
        plan.next.kind === 'wait-backup' ? minDefined(plan.next.retryInMs, plan.next.giveUpInMs) : undefined;
      return {
        removed: false,
        outcome: { conditions: [condition], halt: true, requeueAfterMs: retry ?? WAIT_RECHECK_MS },
      };
    }
  }
  return { removed: false, outcome: { halt: true, requeueAfterMs: 1000 } };
}
