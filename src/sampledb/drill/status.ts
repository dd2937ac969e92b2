// The drill's status for an action taken on an observation: pure. The run in progress is status.current (what a
// restarted operator resumes from); a finished run moves to the front of status.runs, cut to spec.historyLimit.
import {
  DEFAULT_DRILL_HISTORY_LIMIT,
  DRILL_CONDITIONS,
  DRILL_REASONS,
  type DrillPhase,
  type SampleDbDrillObject,
  type SampleDbDrillStatus,
} from '../../api/index.ts';
import { type Condition, mergeConditions, metaTime } from '../../runtime/index.ts';
import type { DrillAction } from './plan.ts';

export function drillStatus(
  drill: SampleDbDrillObject,
  action: DrillAction,
  now: Date,
  next: Date | undefined,
): SampleDbDrillStatus {
  const previous = drill.status ?? {};
  const scheduled = Boolean(drill.spec.schedule);
  const limit = drill.spec.historyLimit ?? DEFAULT_DRILL_HISTORY_LIMIT;
  let current = previous.current;
  let runs = previous.runs ?? [];
  let runCount = previous.runCount ?? 0;
  let lastSlot = previous.lastSlot;
  let phase: DrillPhase = previous.phase ?? (scheduled ? 'Scheduled' : 'Pending');
  let message = previous.message;
  const conditions = (previous.conditions ?? []) as Condition[];
  let condition = conditions.find((c) => c.type === DRILL_CONDITIONS.lastRunSucceeded);
  switch (action.kind) {
    case 'start-run':
    case 'inject':
    case 'create-probe':
    case 'create-release':
    case 'mark-detected':
    case 'create-netcheck':
    case 'lift-isolation':
    case 'delete-throwaway':
      current = action.current;
      runCount = Math.max(runCount, current.run);
      if (current.slot) lastSlot = current.slot;
      phase = 'Running';
      message = `Run ${current.run}: ${current.step}.`;
      break;
    case 'wait':
      phase = 'Running';
      message = action.message;
      break;
    case 'finish': {
      const run = action.run;
      const slot = current?.slot ?? action.slot;
      if (slot) lastSlot = slot;
      current = undefined;
      runs = [run, ...runs.filter((r) => r.run !== run.run)].slice(0, limit);
      runCount = Math.max(runCount, run.run);
      phase = scheduled ? 'Scheduled' : run.result;
      message = `Run ${run.run} ${run.result}: ${run.message}`;
      condition = {
        type: DRILL_CONDITIONS.lastRunSucceeded,
        status: run.result === 'Succeeded' ? 'True' : 'False',
        reason: run.reason,
        message: run.message,
        lastTransitionTime: metaTime(now),
      };
      break;
    }
    default:
      if (scheduled && !current) phase = 'Scheduled';
      break;
  }
  const merged = condition
    ? mergeConditions(conditions, [condition], now)
    : mergeConditions(
        conditions,
        [
          {
            type: DRILL_CONDITIONS.lastRunSucceeded,
            status: 'Unknown',
            reason: scheduled ? DRILL_REASONS.scheduled : DRILL_REASONS.running,
            message: 'No run has finished yet.',
          },
        ],
        now,
      );
  return {
    phase,
    ...(message ? { message } : {}),
    ...(current ? { current } : {}),
    ...(runs.length > 0 ? { runs } : {}),
    runCount,
    ...(lastSlot ? { lastSlot } : {}),
    ...(scheduled && next ? { nextRunAt: metaTime(next) } : {}),
    conditions: merged,
    ...(drill.metadata.generation !== undefined ? { observedGeneration: drill.metadata.generation } : {}),
  };
}
