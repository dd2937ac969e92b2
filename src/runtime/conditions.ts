import { metaTime } from './time.ts';

/** metav1.Condition. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export type ConditionInput = Omit<Condition, 'lastTransitionTime'> & { lastTransitionTime?: string };

/**
 * Sets a condition the way apimachinery's meta.SetStatusCondition does: lastTransitionTime moves only when the
 * status changes; reason, message and observedGeneration are updated in place. Returns a new array.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  input: ConditionInput,
  now: Date = new Date(),
): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === input.type);
  const existing = i >= 0 ? list[i] : undefined;
  const transition =
    existing && existing.status === input.status
      ? existing.lastTransitionTime
      : (input.lastTransitionTime ?? metaTime(now));
  const next: Condition = {
    type: input.type,
    status: input.status,
    reason: input.reason,
    message: input.message,
    lastTransitionTime: transition,
    ...(input.observedGeneration !== undefined ? { observedGeneration: input.observedGeneration } : {}),
  };
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list;
}

/** Merges several inputs in order. */
export function mergeConditions(
  conditions: readonly Condition[] | undefined,
  inputs: readonly ConditionInput[],
  now: Date = new Date(),
): Condition[] {
  let out = [...(conditions ?? [])];
  for (const input of inputs) out = setCondition(out, input, now);
  return out;
}

export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === 'True';
}

/** Equal as far as the apiserver would store them; lets a reconciler skip a no-op status write. */
export function conditionsEqual(
  a: readonly Condition[] | undefined,
  b: readonly Condition[] | undefined,
): boolean {
  const x = a ?? [];
  const y = b ?? [];
  if (x.length !== y.length) return false;
  return x.every((c) => {
    const d = y.find((e) => e.type === c.type);
    return (
      d !== undefined &&
      d.status === c.status &&
      d.reason === c.reason &&
      d.message === c.message &&
      d.lastTransitionTime === c.lastTransitionTime &&
      d.observedGeneration === c.observedGeneration
    );
  });
}
