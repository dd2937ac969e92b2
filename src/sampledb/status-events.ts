// Pure: the Events a status change deserves, so a user watching `kubectl get events` sees a SampleDB become Ready
// or Failed, or its backups turn unhealthy, without reading its status. Only transitions count (a status written
// again the same way says nothing new); a refused child has its own Event (ChildRejected, reconciler.ts), so it is
// not announced twice.
import { EVENT_REASONS, REASONS, SAMPLEDB_CONDITIONS, type SampleDbStatus } from '../api/index.ts';

export interface StatusEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  note: string;
}

type Conditions = ReadonlyArray<{ type: string; status: string; reason?: string; message?: string }>;
const conditionOf = (status: SampleDbStatus | undefined, type: string) =>
  (status?.conditions as Conditions | undefined)?.find((c) => c.type === type);
const readyOf = (status: SampleDbStatus | undefined) => conditionOf(status, SAMPLEDB_CONDITIONS.ready);

export function statusEvents(before: SampleDbStatus | undefined, after: SampleDbStatus): StatusEvent[] {
  return [...readyEvents(before, after), ...backupHealthEvents(before, after)];
}

/**
 * BackupHealthy turning False is what an on-call person must hear about even when nobody reads the status: a scheduled
 * backup failed, or none completed in time (the condition flips at the overdue deadline with nothing else happening).
 * Announced on the transition and when the reason changes while False; once more when it is True again.
 */
function backupHealthEvents(before: SampleDbStatus | undefined, after: SampleDbStatus): StatusEvent[] {
  const was = conditionOf(before, SAMPLEDB_CONDITIONS.backupHealthy);
  const now = conditionOf(after, SAMPLEDB_CONDITIONS.backupHealthy);
  if (now?.status === 'False' && (was?.status !== 'False' || was.reason !== now.reason))
    return [
      {
        type: 'Warning',
        reason: EVENT_REASONS.backupsUnhealthy,
        note: `${now.reason ?? 'BackupUnhealthy'}: ${now.message ?? ''}`.trim(),
      },
    ];
  if (now?.status === 'True' && was?.status === 'False')
    return [
      {
        type: 'Normal',
        reason: EVENT_REASONS.backupsHealthyAgain,
        note: `${now.message ?? 'Backups are healthy again.'}`,
      },
    ];
  return [];
}

function readyEvents(before: SampleDbStatus | undefined, after: SampleDbStatus): StatusEvent[] {
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
