// Pure: the Events a status change deserves, so a user watching `kubectl get events` sees a SampleDB become Ready or
// Failed without reading its status. Only transitions count (a status written again the same way says nothing new);
// a refused child has its own Event (ChildRejected, reconciler.ts), so it is not announced twice.
import { EVENT_REASONS, REASONS, type SampleDbStatus } from '../api/index.ts';

export interface StatusEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  note: string;
}

type Conditions = ReadonlyArray<{ type: string; status: string; reason?: string; message?: string }>;
const readyOf = (status: SampleDbStatus | undefined) =>
  (status?.conditions as Conditions | undefined)?.find((c) => c.type === 'Ready');

export function statusEvents(before: SampleDbStatus | undefined, after: SampleDbStatus): StatusEvent[] {
  const was = readyOf(before);
  const now = readyOf(after);
  if (now?.status === 'True' && was?.status !== 'True')
    return [
      { type: 'Normal', reason: EVENT_REASONS.ready, note: `Ready at ${after.endpoint ?? 'its Service'}.` },
    ];
  const failedNow = after.phase === 'Failed' && now?.reason !== REASONS.childRejected;
  const sameFailure = before?.phase === 'Failed' && was?.reason === now?.reason;
  if (failedNow && !sameFailure)
    return [
      {
        type: 'Warning',
        reason: EVENT_REASONS.failed,
        note: `${now?.reason ?? 'Failed'}: ${now?.message ?? ''}`.trim(),
      },
    ];
  return [];
}
