// What status.replication.instances and the PrimaryAvailable/ReplicasReady conditions say, from the election record
// and the instances as observed (pure: the replication step writes them).
import { type InstanceStatus, REASONS, REPLICATION_CONDITIONS } from '../../api/index.ts';
import type { ConditionInput } from '../../runtime/index.ts';
import {
  type ElectionRecord,
  lagBytes,
  type MemberObservation,
  type ReplicationAction,
} from '../failover/plan.ts';

/** RFC 3339 without fractions, as the other timestamps of the status. */
export const isoSeconds = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

export function instancesStatus(
  record: ElectionRecord,
  members: readonly MemberObservation[],
  now: Date,
): InstanceStatus[] {
  const primary = members.find((m) => m.name === record.primary);
  return members
    .filter((m) => m.pod !== 'absent')
    .map((m) => {
      const lag = lagBytes(primary, m);
      const standby = m.sql?.inRecovery === true;
      const notStreaming = standby && !m.sql?.streaming;
      return {
        name: m.name,
        role: !m.sql ? 'unknown' : m.sql.inRecovery ? 'replica' : 'primary',
        ready: m.ready && m.sql !== undefined,
        ...(standby ? { streaming: m.sql?.streaming === true } : {}),
        ...(notStreaming ? { notStreamingSince: isoSeconds(m.notStreamingSince ?? now) } : {}),
        ...(lag !== undefined ? { lagBytes: lag } : {}),
      };
    });
}

export function replicationConditions(
  record: ElectionRecord,
  members: readonly MemberObservation[],
  action: ReplicationAction,
): ConditionInput[] {
  const primary = members.find((m) => m.name === record.primary);
  const available = primary?.ready && primary.sql && !primary.sql.inRecovery;
  const primaryCondition: ConditionInput = record.handover
    ? {
        type: REPLICATION_CONDITIONS.primaryAvailable,
        status: 'False',
        reason: record.handover.reason === 'Failover' ? REASONS.failingOver : REASONS.switchingOver,
        message: `Handing the primary over from ${record.handover.from} to ${record.primary} (term ${record.term}).`,
      }
    : available
      ? {
          type: REPLICATION_CONDITIONS.primaryAvailable,
          status: 'True',
          reason: REASONS.primaryReady,
          message: `${record.primary} is the primary (term ${record.term}).`,
        }
      : {
          type: REPLICATION_CONDITIONS.primaryAvailable,
          status: 'False',
          reason: record.primary ? REASONS.primaryUnavailable : REASONS.noPrimary,
          message: record.primary
            ? `Primary ${record.primary} is unavailable: ${action.kind === 'wait' ? action.why : 'failing over'}.`
            : 'No primary elected yet.',
        };
  const replicas = members.filter((m) => m.name !== record.primary);
  const lagging = replicas.filter((m) => !(m.ready && m.sql?.inRecovery && m.sql.streaming));
  const replicasCondition: ConditionInput =
    replicas.length === 0
      ? {
          type: REPLICATION_CONDITIONS.replicasReady,
          status: 'True',
          reason: REASONS.noReplicas,
          message: 'No replicas.',
        }
      : lagging.length === 0
        ? {
            type: REPLICATION_CONDITIONS.replicasReady,
            status: 'True',
            reason: REASONS.replicasStreaming,
            message: `${replicas.length} replicas are ready and streaming from ${record.primary}.`,
          }
        : {
            type: REPLICATION_CONDITIONS.replicasReady,
            status: 'False',
            reason: REASONS.replicasNotReady,
            message: `Not ready or not streaming: ${lagging.map((m) => m.name).join(', ')}.`,
          };
  return [primaryCondition, replicasCondition];
}
