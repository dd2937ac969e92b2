// spec.instances and spec.replication: one primary elected by the operator and streaming replicas
// (docs/adr/0008-primary-election.md); status.replication: the election record, which is the fencing token.
import { type Static, Type } from '@sinclair/typebox';
import { StringEnum, type ValidationRule } from './schema-kit.ts';

export const MAX_INSTANCES = 9;
/** Long enough to ride out a blip of one probe, short enough for a failover well under 15 s. */
export const DEFAULT_FAILOVER_DELAY_SECONDS = 5;
export const MAX_FAILOVER_DELAY_SECONDS = 600;
/**
 * A replica that answers but has not streamed for this long while the primary is available cannot follow it (its
 * WAL went past the new timeline's fork, or the WAL it needs is gone) and is re-cloned. Long enough for a standby to
 * find a new primary (the WAL receiver retries every 5 s, the Service must select the primary first).
 */
export const REJOIN_AFTER_SECONDS = 30;

export const InstancesSchema = Type.Integer({
  minimum: 1,
  maximum: MAX_INSTANCES,
  default: 1,
  description:
    `Number of PostgreSQL pods, each with its own volume: one primary the operator elects and instances-1 ` +
    'streaming replicas cloned from it with pg_basebackup. With more than one, the client Service selects the ' +
    'primary (pod label sampledb.io/role=primary) and <name>-ro the replicas; the operator fails over when the ' +
    'primary is lost and never scales the primary away (it hands over first). ' +
    `At most ${MAX_INSTANCES}. Default: 1.`,
});

export const ReplicationSchema = Type.Object(
  {
    synchronous: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_INSTANCES - 1,
        default: 0,
        description:
          'How many replicas must confirm a commit before the primary acknowledges it (synchronous_standby_names ' +
          '"ANY n" over the instances\' pod names); less than instances. 0 (default): asynchronous, a failover may ' +
          'lose the last commits. The primary starts (and bootstraps) without it; the operator sets it on every ' +
          'instance (ALTER SYSTEM) once n replicas stream, and from then on keeps it, also across failovers and ' +
          'while replicas are down: commits then wait for n replicas (condition SynchronousReplication). ' +
          "Needs PostgreSQL 15 or later (the operator's role is granted ALTER SYSTEM on this one parameter).",
      }),
    ),
    failoverDelaySeconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_FAILOVER_DELAY_SECONDS,
        default: DEFAULT_FAILOVER_DELAY_SECONDS,
        description:
          'How long the primary may be gone, not ready or not answering before the operator fences it and promotes ' +
          `a replica. Default: ${DEFAULT_FAILOVER_DELAY_SECONDS}.`,
      }),
    ),
  },
  {
    description: 'Streaming replication between the instances (instances > 1).',
    default: {},
  },
);

export type ReplicationSpec = Static<typeof ReplicationSchema>;

type SpecWithReplication = { instances?: number; replication?: { synchronous?: number } };

/** Rules on the whole spec: they relate `instances` to `replication`. */
export const REPLICATION_SPEC_RULES: ValidationRule<SpecWithReplication>[] = [
  {
    rule:
      '!has(self.replication) || !has(self.replication.synchronous) || self.replication.synchronous == 0 || ' +
      'self.replication.synchronous < (has(self.instances) ? self.instances : 1)',
    message:
      'replication.synchronous must be less than instances: the primary cannot wait for more replicas than exist ' +
      '(with instances: 3, at most 2)',
    fieldPath: '.replication.synchronous',
    holds: (self) => {
      const synchronous = self.replication?.synchronous ?? 0;
      return synchronous === 0 || synchronous < (self.instances ?? 1);
    },
  },
];

export const INSTANCE_ROLES = ['primary', 'replica', 'unknown'] as const;
export type InstanceRole = (typeof INSTANCE_ROLES)[number];

export const InstanceStatusSchema = Type.Object(
  {
    name: Type.String({ description: 'The pod.' }),
    role: StringEnum(INSTANCE_ROLES, {
      description: 'primary, replica, or unknown (the operator could not ask it).',
    }),
    ready: Type.Boolean({ description: 'The pod is Ready and answers the operator.' }),
    streaming: Type.Optional(
      Type.Boolean({ description: 'Replicas: its WAL receiver is streaming from the primary.' }),
    ),
    notStreamingSince: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'Replicas: when the operator first saw it answer without streaming. One that does not stream for ' +
          `${REJOIN_AFTER_SECONDS} s while the primary is available is re-cloned from it.`,
      }),
    ),
    lagBytes: Type.Optional(
      Type.Integer({
        minimum: 0,
        format: 'int64',
        description: 'Replicas: bytes of WAL the primary has written that this replica has not replayed.',
      }),
    ),
  },
  { description: 'One PostgreSQL instance.' },
);

export const ReplicationStatusSchema = Type.Object(
  {
    primary: Type.Optional(Type.String({ description: 'The elected primary (a pod name).' })),
    term: Type.Optional(
      Type.Integer({
        minimum: 0,
        format: 'int64',
        description:
          'Election term: grows by one with every election. The fencing token every failover step checks.',
      }),
    ),
    primaryUnavailableSince: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'When the operator first saw the elected primary unavailable (cleared when it recovers).',
      }),
    ),
    handover: Type.Optional(
      Type.Object(
        {
          from: Type.String({ description: 'The primary being replaced.' }),
          reason: StringEnum(['Failover', 'Switchover'] as const, { description: 'Why.' }),
          lsn: Type.Optional(
            Type.String({ description: 'Switchover: the old primary’s WAL position the target must reach.' }),
          ),
        },
        {
          description:
            'An election in progress: set with the new term, cleared once the primary is promoted.',
        },
      ),
    ),
    instances: Type.Optional(
      Type.Array(InstanceStatusSchema, {
        maxItems: MAX_INSTANCES * 2,
        description: 'Every PostgreSQL pod.',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
      }),
    ),
  },
  { description: 'The elected primary and the instances.' },
);

export type ReplicationStatus = Static<typeof ReplicationStatusSchema>;
export type InstanceStatus = Static<typeof InstanceStatusSchema>;

/** Conditions of a SampleDB with replication. */
export const REPLICATION_CONDITIONS = {
  primaryAvailable: 'PrimaryAvailable',
  replicasReady: 'ReplicasReady',
  /** The primary's synchronous_standby_names is in force and enough standbys confirm commits. */
  synchronousReplication: 'SynchronousReplication',
} as const;

export const REPLICATION_REASONS = {
  // PrimaryAvailable
  primaryReady: 'PrimaryReady',
  primaryUnavailable: 'PrimaryUnavailable',
  failingOver: 'FailingOver',
  switchingOver: 'SwitchingOver',
  noPrimary: 'NoPrimary',
  // ReplicasReady
  replicasStreaming: 'ReplicasStreaming',
  replicasNotReady: 'ReplicasNotReady',
  noReplicas: 'NoReplicas',
  // SynchronousReplication
  standbysConfirming: 'StandbysConfirming',
  waitingForStandbys: 'WaitingForStandbys',
  waitingForPrimary: 'WaitingForPrimary',
  asynchronous: 'Asynchronous',
  synchronousUnsupported: 'RequiresPostgres15',
} as const;

/** Reasons of the Events of elections and failovers. */
export const REPLICATION_EVENT_REASONS = {
  primaryElected: 'PrimaryElected',
  primaryFenced: 'PrimaryFenced',
  primaryPromoted: 'PrimaryPromoted',
  switchoverRefused: 'SwitchoverRefused',
  switchoverAborted: 'SwitchoverAborted',
  instanceRejoined: 'InstanceRejoined',
  /** The operator set synchronous_standby_names on the primary (turned on, changed or off). */
  synchronousStandbysSet: 'SynchronousStandbysSet',
} as const;
