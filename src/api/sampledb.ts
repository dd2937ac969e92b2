// The SampleDB API (sampledb.io/v1alpha1): the one source of truth.
//
// From these TypeBox schemas come the CRD's openAPIV3Schema (descriptions for `kubectl explain`, defaults, CEL
// rules), the TypeScript types used by the constructs and the controller, and the runtime validator.
import { type Static, Type } from '@sinclair/typebox';
import type { API_VERSION, KINDS } from './identity.ts';
import type { KubeObject, ObjectMeta } from './kube-object.ts';
import { compareQuantities, parseQuantity } from './quantity.ts';
import { ConditionList, ObjectName, Quantity, StringEnum, StringMap, withRules } from './schema-kit.ts';

export { API_VERSION, GROUP, VERSION } from './identity.ts';
export type { KubeObject, ObjectMeta, OwnerReference } from './kube-object.ts';

/** PostgreSQL major versions this operator knows how to run and upgrade between. */
export const SUPPORTED_MAJOR_VERSIONS = [14, 15, 16, 17, 18] as const;
export const DEFAULT_IMAGE_REPOSITORY = 'docker.io/library/postgres';

const majorOf = (version: string) => Number.parseInt(version.split('.')[0] ?? '', 10);

export const VersionSchema = withRules(
  Type.String({
    pattern: '^[0-9]+(\\.[0-9]+)?$',
    maxLength: 16,
    description:
      'PostgreSQL version to run: a major version ("16") or major.minor ("16.4"). Supported majors: 14-18. ' +
      'Raising the major version runs an upgrade Job; lowering it is refused.',
  }),
  [
    {
      rule: "int(self.split('.')[0]) >= 14 && int(self.split('.')[0]) <= 18",
      message: 'unsupported PostgreSQL major version: use 14, 15, 16, 17 or 18',
      holds: (self: string) => majorOf(self) >= 14 && majorOf(self) <= 18,
    },
    {
      rule: "int(self.split('.')[0]) >= int(oldSelf.split('.')[0])",
      message:
        'the PostgreSQL major version may not go down (data files cannot be downgraded); restore a backup into a new SampleDB instead',
      holdsOnUpdate: (self: string, oldSelf: string) => majorOf(self) >= majorOf(oldSelf),
    },
  ],
);

export const StorageSchema = withRules(
  Type.Object(
    {
      size: Quantity({ description: 'Size of the data volume, e.g. "10Gi". May grow, never shrink.' }),
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
      rule: "quantity(self.size).isGreaterThan(quantity('0'))",
      message: 'storage size must be greater than zero, e.g. "10Gi"',
      fieldPath: '.size',
      holds: (self: { size: string }) => (parseQuantity(self.size) ?? 0) > 0,
    },
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

const ComputeResources = Type.Object(
  {
    cpu: Type.Optional(Quantity({ description: 'CPU, e.g. "500m" or "2".' })),
    memory: Type.Optional(Quantity({ description: 'Memory, e.g. "1Gi".' })),
  },
  { description: 'CPU and memory quantities.' },
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
      requests: Type.Optional(ComputeResources),
      limits: Type.Optional(ComputeResources),
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
            rule: "self.all(k, k.matches('^[A-Za-z_][A-Za-z0-9_.]*$'))",
            message:
              'postgresql.parameters names must be PostgreSQL setting names (letters, digits, "_" and ".")',
            holds: (self: Record<string, string>) =>
              Object.keys(self).every((k) => /^[A-Za-z_][A-Za-z0-9_.]*$/.test(k)),
          },
          {
            rule: "self.all(k, !self[k].matches('[\\\\x00-\\\\x1f]'))",
            message: 'postgresql.parameters values may not contain control characters such as newlines',
            // biome-ignore lint/suspicious/noControlCharactersInRegex: that is exactly what the rule refuses.
            holds: (self: Record<string, string>) => Object.values(self).every((v) => !/[\x00-\x1f]/.test(v)),
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
      StringMap({ description: 'Annotations for the client Service (e.g. for a cloud load balancer).' }),
    ),
  },
  { description: 'The client Service that publishes the database.', default: {} },
);

const IDENTIFIER = '^[a-z_][a-z0-9_]{0,62}$';

export const BootstrapSchema = withRules(
  Type.Object(
    {
      database: Type.Optional(
        Type.String({
          pattern: IDENTIFIER,
          default: 'app',
          description: 'Name of the application database to create. Default: "app".',
        }),
      ),
      owner: Type.Optional(
        Type.String({
          pattern: IDENTIFIER,
          default: 'app',
          description: 'Role that owns the database; applications log in as it. Default: "app".',
        }),
      ),
      credentialsSecret: Type.Optional(
        Type.Object(
          { name: ObjectName({ description: 'Name of a Secret in the same namespace.' }) },
          {
            description:
              'A Secret you provide with keys "username" and "password". Default: the operator generates ' +
              '<name>-credentials with a random password, once, and never rotates it by itself.',
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

/** Cron macros and five-field expressions (`minute hour day-of-month month day-of-week`). */
export const CRON_PATTERN =
  '^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|([^\\s]+\\s+){4}[^\\s]+)$';
/** Durations for retention: a number of days, hours or minutes, e.g. "30d", "12h". */
export const DURATION_PATTERN = '^[0-9]+(d|h|m)$';

export const BackupSchema = withRules(
  Type.Object(
    {
      schedule: Type.Optional(
        Type.String({
          pattern: CRON_PATTERN,
          maxLength: 128,
          description:
            'Cron schedule for backups, e.g. "0 3 * * *" or "@daily". Default: no scheduled backups.',
        }),
      ),
      timezone: Type.Optional(
        Type.String({
          pattern: '^[A-Za-z_]+(/[A-Za-z0-9_+-]+)*$',
          maxLength: 64,
          description: 'IANA time zone of the schedule, e.g. "Asia/Seoul". Default: UTC.',
        }),
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
                'Which completed backups to keep. Default: keep all. Not enforced yet: this operator version ' +
                'computes which backups the policy would remove but deletes none (a removed SampleDBBackup would ' +
                'leave its dump on the backup volume).',
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
      volume: Type.Optional(
        withRules(
          Type.Object(
            {
              claimName: Type.Optional(
                ObjectName({ description: 'An existing PVC in the same namespace to write to.' }),
              ),
              size: Type.Optional(Quantity({ description: 'Size of the backup PVC the operator creates.' })),
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

export const SampleDbSpecSchema = Type.Object(
  {
    version: VersionSchema,
    image: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 512,
        description: `Container image override. Default: ${DEFAULT_IMAGE_REPOSITORY}:<version>.`,
      }),
    ),
    storage: StorageSchema,
    resources: Type.Optional(ResourcesSchema),
    postgresql: Type.Optional(PostgresqlSchema),
    service: Type.Optional(ServiceSchema),
    bootstrap: Type.Optional(BootstrapSchema),
    backup: Type.Optional(BackupSchema),
    deletion: Type.Optional(DeletionSchema),
  },
  { description: 'Desired state of a SampleDB database.' },
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
        'Ready, Provisioned, Initialized, BackupReady, ...: detailed state with reasons and messages.',
      ),
    ),
    observedGeneration: Type.Optional(
      Type.Integer({ format: 'int64', description: 'The .metadata.generation the status was computed for.' }),
    ),
    currentVersion: Type.Optional(Type.String({ description: 'PostgreSQL version currently running.' })),
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
  ],
);
