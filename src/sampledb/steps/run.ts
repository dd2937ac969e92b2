// Runs an ordered table of steps and folds what they return: observations merge in step order, conditions collect,
// the shortest requeue wins, and the first halt (or an abort) ends the chain.
import type { ConditionInput } from '../../runtime/index.ts';
import type { Writer } from '../writer.ts';
import type { Step, StepBase } from './context.ts';

export interface StepsRun<O> {
  readonly observed: O;
  readonly conditions: readonly ConditionInput[];
  readonly overrides: readonly ConditionInput[];
  readonly requeueAfterMs?: number;
  /** The step that halted the chain, if one did. */
  readonly haltedAt?: string;
  /** The reconcile was aborted (lost leadership, shutdown): nothing more is written. */
  readonly aborted: boolean;
}

/** `write` is the reconcile's whole Writer; each step gets it limited to the modes it declares. */
export async function runSteps<O, S>(
  steps: readonly Step<O, S>[],
  ctx: StepBase & S & { readonly write: Writer },
  initial: O,
): Promise<StepsRun<O>> {
  let observed = initial;
  const conditions: ConditionInput[] = [];
  const overrides: ConditionInput[] = [];
  let requeueAfterMs: number | undefined;
  let haltedAt: string | undefined;
  for (const step of steps) {
    if (ctx.signal.aborted) break;
    const outcome = await step.run({ ...ctx, write: ctx.write.only(step.writes), observed });
    if (!outcome) continue;
    if (outcome.observed) observed = { ...observed, ...outcome.observed };
    conditions.push(...(outcome.conditions ?? []));
    overrides.push(...(outcome.overrides ?? []));
    if (outcome.requeueAfterMs !== undefined)
      requeueAfterMs = Math.min(requeueAfterMs ?? Number.POSITIVE_INFINITY, outcome.requeueAfterMs);
    if (outcome.halt) {
      haltedAt = step.name;
      ctx.log.debug({ step: step.name }, 'halted');
      break;
    }
  }
  return {
    observed,
    conditions,
    overrides,
    ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}),
    ...(haltedAt ? { haltedAt } : {}),
    aborted: ctx.signal.aborted,
  };
}
