// The SampleDB API (sampledb.io/v1alpha1): the one source of truth.
//
// From these TypeBox schemas come the CRD's openAPIV3Schema (descriptions for `kubectl explain`, defaults, CEL
// rules), the TypeScript types used by the constructs and the controller, and the runtime validator.

import { type Static, Type } from '@sinclair/typebox';
import { BackupVerifySchema, VERIFY_QUERY_RULE, VerifyQuerySchema } from './backup-verification.ts';
import { CronSchedule } from './cron-schema.ts';
import {
  IMAGE_REFERENCE_PATTERN,
  isQualifiedName,
  isReservedRoleName,
  isSchedulerTimeZone,
  MIN_MEMORY_LIMIT,
  MIN_STORAGE_SIZE,
  PARAMETER_NAME_PATTERN,
  PARAMETER_VALUE_FORBIDDEN,
  QUALIFIED_NAME_CEL,
  RESERVED_DATABASE_NAMES,
  RESERVED_ROLE_NAMES,
  RESERVED_ROLE_PREFIX,
  TIME_ZONE_CEL,
} from './formats.ts';
import { type API_VERSION, type KINDS, OPERATOR_SECRET_SUFFIXES } from './identity.ts';
import type { KubeObject, ObjectMeta } from './kube-object.ts';
import { MigrationsSpecSchema, MigrationsStatusSchema } from './migrations.ts';
import { MonitoringSchema } from './monitoring.ts';
import { compareQuantities } from './quantity.ts';
import {
  InstancesSchema,
  REPLICATION_SPEC_RULES,
  ReplicationSchema,
  ReplicationStatusSchema,
} from './replication.ts';
import {
  ConditionList,
  ObjectName,
  Quantity,
  StringEnum,
  StringMap,
  type ValidationRule,
  withRules,
} from './schema-kit.ts';
import { MAJOR_DOWNGRADE_RULE, UpgradeSpecSchema, UpgradeStatusSchema } from './upgrade.ts';

export { API_VERSION, GROUP, VERSION } from './identity.ts';

/** PostgreSQL major versions this operator knows how to run and upgrade between. */
export const SUPPORTED_MAJOR_VERSIONS = [14, 15, 16, 17, 18] as const;
export const DEFAULT_IMAGE_REPOSITORY = 'docker.io/library/postgres';

const majorOf = (version: string) => Number.parseInt(version.split('.')[0] ?? '', 10);

/** A rule on a quantity string: at least `min`. */
function quantityAtLeast(min: string, field: string, why: string): ValidationRule<string> {
  return {
    rule: `quantity(self).compareTo(quantity('${min}')) >= 0`,
    message: `${field} must be at least ${min}: ${why}`,
    holds: (self) => compareQuantities(self, min) >= 0,
  };
}

/** A rule on a quantity string: not negative (the pattern admits a sign; the Pod's validation refuses it). */
function nonNegative(field: string): ValidationRule<string> {
  return {
    rule: "!quantity(self).isLessThan(quantity('0'))",
    message: `${field} may not be negative`,
    holds: (self) => compareQuantities(self, '0') >= 0,
  };
}

export const VersionSchema = withRules(
  Type.String({
    pattern: '^[0-9]+(\\.[0-9]+)?$',
    maxLength: 16,
    description:
      'PostgreSQL version to run: a major version ("16") or major.minor ("16.4"). Supported majors: 14-18. ' +
      'A minor change rolls the pod onto the new image; raising the major runs an upgrade (pg_upgrade, with a ' +
      'backup first and a way back); lowering it below the running major is refused.',
  }),
  [
    {
      rule: "int(self.split('.')[0]) >= 14 && int(self.split('.')[0]) <= 18",
      message: 'unsupported PostgreSQL major version: use 14, 15, 16, 17 or 18',
      holds: (self: string) => majorOf(self) >= 14 && majorOf(self) <= 18,
    },
  ],
);

export const StorageSchema = withRules(
  Type.Object(
    {
      size: withRules(
        Quantity({
          description: `Size of the data volume, e.g. "10Gi", at least ${MIN_STORAGE_SIZE}. May grow, never shrink.`,
        }),
        [quantityAtLeast(MIN_STORAGE_SIZE, 'storage.size', 'PostgreSQL cannot initialize and run on less')],
      ),
      storageClassName: Type.Optional(
        ObjectName({
          description:
            'StorageClass of the data volume. Default: the cluster default StorageClass. Immutable.',
        }),
      ),
    },
    { description: 'Persistent storage for the database files.' },
  ),
  [
    {
      rule: 'quantity(self.size).compareTo(quantity(oldSelf.size)) >= 0',
      message: 'storage size may not shrink (volumes can only grow); keep the current size or raise it',
      fieldPath: '.size',
      holdsOnUpdate: (self: { size: string }, old: { size: string }) =>
        compareQuantities(self.size, old.size) >= 0,
    },
    {
      rule: 'has(self.storageClassName) == has(oldSelf.storageClassName) && (!has(self.storageClassName) || self.storageClassName == oldSelf.storageClassName)',
      message: 'storageClassName is immutable; create a new SampleDB from a backup to change it',
      fieldPath: '.storageClassName',
      holdsOnUpdate: (self: { storageClassName?: string }, old: { storageClassName?: string }) =>
        self.storageClassName === old.storageClassName,
    },
  ],
);

const ComputeRequests = Type.Object(
  {
    cpu: Type.Optional(
      withRules(Quantity({ description: 'CPU, e.g. "500m" or "2".' }), [
        nonNegative('resources.requests.cpu'),
      ]),
    ),
    memory: Type.Optional(
      withRules(Quantity({ description: 'Memory, e.g. "1Gi".' }), [nonNegative('resources.requests.memory')]),
    ),
  },
  { description: 'CPU and memory the scheduler reserves.' },
);

const ComputeLimits = Type.Object(
  {
    cpu: Type.Optional(
      withRules(Quantity({ description: 'CPU, e.g. "500m" or "2". Omit for no CPU limit.' }), [
        {
          rule: "quantity(self).isGreaterThan(quantity('0'))",
          message: 'resources.limits.cpu must be greater than zero (omit it for no CPU limit)',
          holds: (self: string) => compareQuantities(self, '0') > 0,
        },
      ]),
    ),
    memory: Type.Optional(
      withRules(Quantity({ description: `Memory, e.g. "1Gi", at least ${MIN_MEMORY_LIMIT}.` }), [
        quantityAtLeast(MIN_MEMORY_LIMIT, 'resources.limits.memory', 'PostgreSQL is OOM-killed below it'),
      ]),
    ),
  },
  { description: 'CPU and memory the container may not exceed.' },
);

type Compute = { cpu?: string; memory?: string };
type ResourcesValue = { requests?: Compute; limits?: Compute };
const limitAtLeastRequest = (resource: 'cpu' | 'memory') => (self: ResourcesValue) => {
  const limit = self.limits?.[resource];
  const request = self.requests?.[resource];
  return limit === undefined || request === undefined || compareQuantities(limit, request) >= 0;
};

export const ResourcesSchema = withRules(
  Type.Object(
    {
      requests: Type.Optional(ComputeRequests),
      limits: Type.Optional(ComputeLimits),
    },
    {
      description:
        'CPU and memory for the PostgreSQL container. PostgreSQL settings (shared_buffers, effective_cache_size, ' +
        'work_mem, max_connections) are derived from memory. Default: requests 100m CPU / 256Mi, limit 1Gi memory.',
    },
  ),
  [
    {
      rule: '!has(self.limits) || !has(self.requests) || !has(self.limits.cpu) || !has(self.requests.cpu) || quantity(self.limits.cpu).compareTo(quantity(self.requests.cpu)) >= 0',
      message: 'resources.limits.cpu must be at least resources.requests.cpu',
      fieldPath: '.limits.cpu',
      holds: limitAtLeastRequest('cpu'),
    },
    {
      rule: '!has(self.limits) || !has(self.requests) || !has(self.limits.memory) || !has(self.requests.memory) || quantity(self.limits.memory).compareTo(quantity(self.requests.memory)) >= 0',
      message: 'resources.limits.memory must be at least resources.requests.memory',
      fieldPath: '.limits.memory',
      holds: limitAtLeastRequest('memory'),
    },
  ],
);

/** PostgreSQL settings the operator owns; users may not override them through `postgresql.parameters`. */
export const RESERVED_PARAMETERS = [
  'listen_addresses',
  'port',
  'data_directory',
  'hba_file',
  'ident_file',
  'unix_socket_directories',
] as const;

export const PostgresqlSchema = Type.Object(
  {
    parameters: Type.Optional(
      withRules(
        StringMap(
          {
            description:
              'postgresql.conf settings that override the derived defaults, e.g. {"max_connections": "200"}. ' +
              `Reserved (managed by the operator): ${RESERVED_PARAMETERS.join(', ')}. Changing them restarts the pod.`,
            maxProperties: 64,
          },
          256,
        ),
        [
          {
            rule: `!self.exists(k, k in [${RESERVED_PARAMETERS.map((p) => `'${p}'`).join(', ')}])`,
            message: `postgresql.parameters may not set ${RESERVED_PARAMETERS.join(', ')}: the operator manages them`,
            holds: (self: Record<string, string>) =>
              !Object.keys(self).some((k) => (RESERVED_PARAMETERS as readonly string[]).includes(k)),
          },
          {
            rule: `self.all(k, k.matches('${PARAMETER_NAME_PATTERN}'))`,
            message:
              'postgresql.parameters names must be PostgreSQL setting names: letters, digits and "_", not starting ' +
              'with a digit, or "extension.name" with one dot',
            holds: (self: Record<string, string>) =>
              Object.keys(self).every((k) => new RegExp(PARAMETER_NAME_PATTERN).test(k)),
          },
          {
            // CEL string literals need the backslashes of the pattern doubled.
            rule: `self.all(k, !self[k].matches('${PARAMETER_VALUE_FORBIDDEN.replaceAll('\\', '\\\\')}'))`,
            message:
              'postgresql.parameters values may not contain control characters such as newlines (postgresql.conf cannot hold them)',
            holds: (self: Record<string, string>) =>
              Object.values(self).every((v) => !new RegExp(PARAMETER_VALUE_FORBIDDEN).test(v)),
          },
        ],
      ),
    ),
  },
  { description: 'PostgreSQL configuration.' },
);

export const SERVICE_TYPES = ['ClusterIP', 'NodePort', 'LoadBalancer'] as const;

export const ServiceSchema = Type.Object(
  {
    type: Type.Optional(
      StringEnum(SERVICE_TYPES, { default: 'ClusterIP', description: 'Service type. Default: ClusterIP.' }),
    ),
    port: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 65535,
        default: 5432,
        description: 'Port clients connect to. Default: 5432.',
      }),
    ),
    annotations: Type.Optional(
      withRules(
        StringMap({
          description: 'Annotations for the client Service (e.g. for a cloud load balancer).',
          maxProperties: 64,
        }),
        [
          {
            rule: `self.all(k, ${QUALIFIED_NAME_CEL})`,
            message:
              'service.annotations keys must be qualified names: an optional DNS-subdomain prefix (at most 253 ' +
              'characters) and "/", then at most 63 letters, digits, "-", "_" or ".", starting and ending alphanumeric',
            holds: (self: Record<string, string>) => Object.keys(self).every(isQualifiedName),
          },
        ],
      ),
    ),
  },
  { description: 'The client Service that publishes the database.', default: {} },
);

const IDENTIFIER = '^[a-z_][a-z0-9_]{0,62}$';
const celList = (values: readonly string[]) => `[${values.map((v) => `'${v}'`).join(', ')}]`;

export const BootstrapSchema = withRules(
  Type.Object(
    {
      database: Type.Optional(
        withRules(
          Type.String({
            pattern: IDENTIFIER,
            default: 'app',
            description: `Name of the application database to create, not ${RESERVED_DATABASE_NAMES.join(', ')}. Default: "app".`,
          }),
          [
            {
              rule: `!(self in ${celList(RESERVED_DATABASE_NAMES)})`,
              message: `bootstrap.database may not be ${RESERVED_DATABASE_NAMES.join(', ')}: every cluster has them (template1 is copied into each new database, postgres is the maintenance database)`,
              holds: (self: string) => !(RESERVED_DATABASE_NAMES as readonly string[]).includes(self),
            },
          ],
        ),
      ),
      owner: Type.Optional(
        withRules(
          Type.String({
            pattern: IDENTIFIER,
            default: 'app',
            description: `Role that owns the database; applications log in as it. Not ${RESERVED_ROLE_PREFIX}*, ${RESERVED_ROLE_NAMES.join(', ')}. Default: "app".`,
          }),
          [
            {
              rule: `!self.startsWith('${RESERVED_ROLE_PREFIX}') && !(self in ${celList(RESERVED_ROLE_NAMES)})`,
              message: `bootstrap.owner may not be ${RESERVED_ROLE_PREFIX}*, public or none (PostgreSQL reserves them) nor postgres (the superuser, which the application's role must not be)`,
              holds: (self: string) => !isReservedRoleName(self),
            },
          ],
        ),
      ),
      credentialsSecret: Type.Optional(
        Type.Object(
          { name: ObjectName({ description: 'Name of a Secret in the same namespace.' }) },
          {
            description:
              'The owner\'s credentials: a Secret you provide with keys "username" (bootstrap.owner) and ' +
              '"password". Default: the operator generates <name>-credentials with a random password, once, and ' +
              "never rotates it by itself. Changing the password in this Secret changes the role's password in " +
              'PostgreSQL (a Job), then the binding Secret. The superuser is a separate role whose password is ' +
              'in <name>-superuser, which is never handed to applications. Not a name the operator gives its own ' +
              'Secrets (<name>-superuser, -monitoring, -binding, -replication, -failover).',
          },
        ),
      ),
      initSQL: Type.Optional(
        Type.Object(
          {
            name: ObjectName({ description: 'ConfigMap in the same namespace.' }),
            key: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 253,
                default: 'init.sql',
                description: 'Key holding the SQL. Default: "init.sql".',
              }),
            ),
          },
          {
            description:
              'SQL run once, as the database owner, after the database is created (by the init Job), in one ' +
              'transaction together with the record that it ran: a failure leaves nothing behind, and statements ' +
              'that cannot run in a transaction (CREATE INDEX CONCURRENTLY, VACUUM) are not allowed.',
          },
        ),
      ),
      fromBackup: Type.Optional(
        Type.Object(
          { name: ObjectName({ description: 'A Completed SampleDBBackup in the same namespace.' }) },
          { description: 'Restore the new database from this backup instead of starting empty.' },
        ),
      ),
    },
    {
      description: 'How the database is created. Applies only at creation, so it is immutable.',
      default: {},
    },
  ),
  [
    {
      rule: '!(has(self.initSQL) && has(self.fromBackup))',
      message:
        'bootstrap.initSQL and bootstrap.fromBackup are mutually exclusive: a restored database keeps its own schema',
      fieldPath: '.fromBackup',
      holds: (self: { initSQL?: unknown; fromBackup?: unknown }) => !(self.initSQL && self.fromBackup),
    },
    {
      rule: 'self == oldSelf',
      message: 'bootstrap is immutable: it only applies when the database is created',
      holdsOnUpdate: (self: unknown, old: unknown) => JSON.stringify(self) === JSON.stringify(old),
    },
  ],
);

/** Durations for retention: a number of days, hours or minutes, e.g. "30d", "12h". */
export const DURATION_PATTERN = '^[0-9]+(d|h|m)$';

export const BackupSchema = withRules(
  Type.Object(
    {
      schedule: Type.Optional(
        CronSchedule('Cron schedule for backups', 'e.g. "0 3 * * *". Default: no scheduled backups.'),
      ),
      timezone: Type.Optional(
        withRules(
          Type.String({
            pattern: '^[A-Za-z_][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$',
            maxLength: 64,
            description:
              'IANA time zone of the schedule, spelled as in the time zone database, e.g. "Asia/Seoul". Default: UTC.',
          }),
          [
            {
              rule: TIME_ZONE_CEL,
              message:
                'backup.timezone must be an IANA time zone spelled as in the time zone database, e.g. "Asia/Seoul" or "UTC"',
              holds: isSchedulerTimeZone,
            },
          ],
        ),
      ),
      suspend: Type.Optional(
        Type.Boolean({ default: false, description: 'Pause scheduled backups. Default: false.' }),
      ),
      retention: Type.Optional(
        withRules(
          Type.Object(
            {
              count: Type.Optional(
                Type.Integer({
                  minimum: 1,
                  maximum: 1000,
                  description: 'Keep at most this many completed backups.',
                }),
              ),
              maxAge: Type.Optional(
                Type.String({
                  pattern: DURATION_PATTERN,
                  maxLength: 16,
                  description: 'Delete completed backups older than this, e.g. "30d", "72h".',
                }),
              ),
            },
            {
              description:
                'Which completed backups to keep. Default: keep all. Enforced after each backup: the dump files ' +
                'and then the SampleDBBackup objects of the others are removed (an Event each). Never removed: ' +
                "the newest Completed backup, one a SampleDB's bootstrap.fromBackup names, final backups of a " +
                "deletion, and backups whose dump is not on this SampleDB's backup volume.",
            },
          ),
          [
            {
              rule: 'has(self.count) || has(self.maxAge)',
              message: 'backup.retention needs count, maxAge or both',
              holds: (self: { count?: number; maxAge?: string }) =>
                self.count !== undefined || self.maxAge !== undefined,
            },
          ],
        ),
      ),
      verify: Type.Optional(BackupVerifySchema),
      verifyQuery: Type.Optional(VerifyQuerySchema),
      volume: Type.Optional(
        withRules(
          Type.Object(
            {
              claimName: Type.Optional(
                ObjectName({ description: 'An existing PVC in the same namespace to write to.' }),
              ),
              size: Type.Optional(
                withRules(Quantity({ description: 'Size of the backup PVC the operator creates.' }), [
                  {
                    rule: "quantity(self).isGreaterThan(quantity('0'))",
                    message: 'backup.volume.size must be greater than zero, e.g. "20Gi"',
                    holds: (self: string) => compareQuantities(self, '0') > 0,
                  },
                ]),
              ),
              storageClassName: Type.Optional(ObjectName({ description: 'StorageClass of that PVC.' })),
            },
            {
              description:
                'Where backups are written. Either an existing PVC (claimName) or a PVC the operator creates ' +
                '(<name>-backups, size/storageClassName). Default: an operator-created PVC twice the data size.',
            },
          ),
          [
            {
              rule: '!has(self.claimName) || (!has(self.size) && !has(self.storageClassName))',
              message:
                'backup.volume: give either claimName (an existing PVC) or size/storageClassName, not both',
              fieldPath: '.claimName',
              holds: (self: { claimName?: string; size?: string; storageClassName?: string }) =>
                self.claimName === undefined ||
                (self.size === undefined && self.storageClassName === undefined),
            },
          ],
        ),
      ),
    },
    { description: 'Logical backups (pg_dump) on a schedule and on demand (SampleDBBackup).' },
  ),
  [
    VERIFY_QUERY_RULE,
    {
      rule: '!has(self.timezone) || has(self.schedule)',
      message: 'backup.timezone only applies to a backup.schedule; set a schedule or remove the timezone',
      fieldPath: '.timezone',
      holds: (self: { timezone?: string; schedule?: string }) =>
        self.timezone === undefined || self.schedule !== undefined,
    },
  ],
);

export const DELETION_POLICIES = ['Snapshot', 'Delete', 'Retain'] as const;

export const DeletionSchema = Type.Object(
  {
    policy: Type.Optional(
      StringEnum(DELETION_POLICIES, {
        default: 'Snapshot',
        description:
          'What happens to the data when the SampleDB is deleted. Snapshot (default): a VolumeSnapshot (or a final ' +
          'pg_dump backup when snapshots are unavailable) completes before the StatefulSet and volumes are removed. ' +
          'Delete: remove everything. Retain: remove the workload, keep the volumes.',
      }),
    ),
    protection: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'When true, the API refuses to delete this SampleDB. Set it to false first to delete. Default: false.',
      }),
    ),
  },
  { description: 'Deletion policy and protection.', default: {} },
);

export const SampleDbSpecSchema = withRules(
  Type.Object(
    {
      version: VersionSchema,
      image: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 512,
          pattern: IMAGE_REFERENCE_PATTERN,
          description:
            'Container image override: repository[:tag][@digest], lower-case, e.g. ' +
            `"registry.example.com/postgres:16.4". Default: ${DEFAULT_IMAGE_REPOSITORY}:<version>.`,
        }),
      ),
      storage: StorageSchema,
      resources: Type.Optional(ResourcesSchema),
      postgresql: Type.Optional(PostgresqlSchema),
      service: Type.Optional(ServiceSchema),
      bootstrap: Type.Optional(BootstrapSchema),
      backup: Type.Optional(BackupSchema),
      deletion: Type.Optional(DeletionSchema),
      monitoring: Type.Optional(MonitoringSchema),
      upgrade: Type.Optional(UpgradeSpecSchema),
      migrations: Type.Optional(MigrationsSpecSchema),
      instances: Type.Optional(InstancesSchema),
      replication: Type.Optional(ReplicationSchema),
    },
    { description: 'Desired state of a SampleDB database.' },
  ),
  REPLICATION_SPEC_RULES,
);

export const PHASES = [
  'Pending',
  'Provisioning',
  'Ready',
  'Updating',
  'Upgrading',
  'Deleting',
  'Failed',
] as const;

export const SampleDbStatusSchema = Type.Object(
  {
    phase: Type.Optional(
      StringEnum(PHASES, { description: 'Summary of where the database is in its lifecycle.' }),
    ),
    conditions: Type.Optional(
      ConditionList(
        'Ready, Provisioned, Initialized, Configured, BackupScheduled, ...: detailed state with reasons and messages.',
      ),
    ),
    observedGeneration: Type.Optional(
      Type.Integer({ format: 'int64', description: 'The .metadata.generation the status was computed for.' }),
    ),
    currentVersion: Type.Optional(
      Type.String({
        maxLength: 64,
        description: 'The PostgreSQL version the running server reports (SHOW server_version).',
      }),
    ),
    upgrade: Type.Optional(UpgradeStatusSchema),
    migrations: Type.Optional(MigrationsStatusSchema),
    endpoint: Type.Optional(Type.String({ description: 'host:port of the client Service.' })),
    lastBackup: Type.Optional(
      Type.Object(
        {
          name: Type.String({ description: 'The SampleDBBackup.' }),
          completionTime: Type.Optional(
            Type.String({ format: 'date-time', description: 'When it completed.' }),
          ),
        },
        { description: 'The most recent completed backup.' },
      ),
    ),
    replication: Type.Optional(ReplicationStatusSchema),
    binding: Type.Optional(
      Type.Object(
        {
          name: Type.String({
            description: 'Secret with type, host, port, database, username, password, uri.',
          }),
        },
        { description: 'Service Binding (servicebinding.io) provisioned-service Secret.' },
      ),
    ),
  },
  { description: 'Observed state of a SampleDB. Written only by the operator.' },
);

/** What users write (defaulted fields optional). */
export type SampleDbSpec = Static<typeof SampleDbSpecSchema>;
export type SampleDbStatus = Static<typeof SampleDbStatusSchema>;
export type Phase = (typeof PHASES)[number];
export type DeletionPolicy = (typeof DELETION_POLICIES)[number];
export type ServiceType = (typeof SERVICE_TYPES)[number];

export interface SampleDbObject extends KubeObject {
  apiVersion: typeof API_VERSION;
  kind: typeof KINDS.sampleDb;
  spec: SampleDbSpec;
  status?: SampleDbStatus;
}

/**
 * Longest SampleDB name: the StatefulSet is named after it and its pods get a `controller-revision-hash` label of
 * `<name>-<10 chars>`, which must fit in 63 characters.
 */
export const MAX_NAME_LENGTH = 52;
export const NAME_PATTERN = '^[a-z]([-a-z0-9]*[a-z0-9])?$';

const CEL_SECRET_SUFFIXES = `[${OPERATOR_SECRET_SUFFIXES.map((x) => `'-${x}'`).join(', ')}]`;

/** At the root: the names it refuses depend on metadata.name. */
const CREDENTIALS_SECRET_RULE: ValidationRule<{
  metadata?: ObjectMeta;
  spec?: { bootstrap?: { credentialsSecret?: { name?: string } } };
}> = {
  rule:
    '!has(self.spec.bootstrap) || !has(self.spec.bootstrap.credentialsSecret) || ' +
    `!${CEL_SECRET_SUFFIXES}.exists(s, self.spec.bootstrap.credentialsSecret.name == self.metadata.name + s)`,
  message: `bootstrap.credentialsSecret.name may not be <metadata.name>-${OPERATOR_SECRET_SUFFIXES.join(', -')}: the operator writes those Secrets itself (it would overwrite yours, or hand the superuser's password to applications as the owner's); name your Secret otherwise, e.g. <metadata.name>-app-credentials`,
  fieldPath: '.spec.bootstrap.credentialsSecret.name',
  reportAt: 'spec.bootstrap.credentialsSecret.name',
  reason: 'FieldValueForbidden',
  holds: (self) => {
    const secret = self.spec?.bootstrap?.credentialsSecret?.name;
    const name = self.metadata?.name ?? '';
    return secret === undefined || !OPERATOR_SECRET_SUFFIXES.some((suffix) => secret === `${name}-${suffix}`);
  },
};

/** The whole SampleDB object as stored, with the rules that need `metadata`. */
export const SampleDbSchema = withRules(
  Type.Object({
    apiVersion: Type.Optional(Type.String({ description: 'sampledb.io/v1alpha1' })),
    kind: Type.Optional(Type.String({ description: 'SampleDB' })),
    metadata: Type.Optional(Type.Unsafe<ObjectMeta>({ type: 'object' })),
    spec: SampleDbSpecSchema,
    status: Type.Optional(SampleDbStatusSchema),
  }),
  [
    {
      rule: `self.metadata.name.matches('${NAME_PATTERN}') && size(self.metadata.name) <= ${MAX_NAME_LENGTH}`,
      message: `metadata.name must be a DNS-1035 label of at most ${MAX_NAME_LENGTH} characters (lowercase letters, digits, '-'; starting with a letter), because Services and StatefulSet pods are named after it`,
      reason: 'FieldValueInvalid',
      reportAt: 'metadata.name',
      holds: (self: { metadata?: ObjectMeta }) => {
        const name = self.metadata?.name ?? '';
        return new RegExp(NAME_PATTERN).test(name) && name.length <= MAX_NAME_LENGTH;
      },
    },
    CREDENTIALS_SECRET_RULE as ValidationRule<never>,
    MAJOR_DOWNGRADE_RULE as ValidationRule<never>,
  ],
);
