// Invalid SampleDBs shared by the unit tests (schema + TypeScript rule twins) and the integration tests (the real
// apiserver with the CRD's CEL rules), so both layers are held to the same list.
import { OPERATOR_SECRET_SUFFIXES } from '../../src/api/index.ts';

export const VALID_SPEC = { version: '16', storage: { size: '1Gi' } } as const;

export interface InvalidCreate {
  readonly title: string;
  /** metadata.name to use; default a generated valid one. */
  readonly name?: string;
  readonly spec: Record<string, unknown>;
  /** The field the error must name, as the apiserver prints it (`spec.storage.size`). */
  readonly field: string;
  /** `schema`: plain OpenAPI validation refuses it; `cel`: only an x-kubernetes-validations rule does. */
  readonly layer: 'schema' | 'cel';
}

const spec = (patch: Record<string, unknown>) => ({ ...VALID_SPEC, ...patch });

/**
 * One field's values that must be accepted and refused, held against the TypeScript validator (unit tests) and the
 * CRD on a real apiserver (integration tests): one table, so a CEL rule and its twin cannot drift apart unseen.
 */
export interface FieldCases {
  readonly label: string;
  /** The field the error must name, as the apiserver prints it. */
  readonly field: string;
  readonly spec: (value: string) => Record<string, unknown>;
  readonly accept: readonly string[];
  /** Value → the layer that refuses it. */
  readonly refuse: Readonly<Record<string, 'schema' | 'cel'>>;
}

const HEX64 = 'a'.repeat(64);

export const FIELD_CASES: readonly FieldCases[] = [
  {
    // Refused values depend on metadata.name: see INVALID_CREATES. These are accepted under any test name.
    label: 'credentials Secret',
    field: 'spec.bootstrap.credentialsSecret.name',
    spec: (name) => spec({ bootstrap: { credentialsSecret: { name } } }),
    accept: ['app-credentials', 'db-credentials', 'superuser', 'other-superuser', 'db-superuser-app'],
    refuse: {},
  },
  {
    label: 'backup schedule',
    field: 'spec.backup.schedule',
    spec: (schedule) => spec({ backup: { schedule } }),
    accept: [
      '0 3 * * *',
      '@daily',
      '@hourly',
      '*/15 * * * *',
      '0 0 1-31/2 * *',
      '0 3 * JAN-MAR MON-FRI',
      '0 3 * jan,Jul sun',
      '5 4 * * SAT-SUN',
      '0 0 * * 0-7',
      '0 0 * * 7',
      '05 03 * * *',
      '1,2,3-5,*/10 * * * *',
      '0 */23 * * *',
      '0-0 * * * *',
      '0 0 29 2 *',
      '0 0 31 1,2 *',
      '0 0 31 feb mon',
    ],
    refuse: {
      '60 * * * *': 'cel',
      '* 24 * * *': 'cel',
      '* * 0 * *': 'cel',
      '* * 32 * *': 'cel',
      '* * * 13 *': 'cel',
      '* * * 0 *': 'cel',
      '* * * * 8': 'cel',
      '5-1 * * * *': 'cel',
      '*/0 * * * *': 'cel',
      '0/15 * * * *': 'cel',
      '* * * DEC-JAN *': 'cel',
      '* * * * SAT-0': 'cel',
      '* * ? * *': 'cel',
      '* * L * *': 'cel',
      '* * * * 5#2': 'cel',
      '*/60 * * * *': 'cel',
      '1,,2 * * * *': 'cel',
      '* * * JANUARY *': 'cel',
      '0 0 31 2 *': 'cel',
      '0 0 30,31 FEB *': 'cel',
      '0 0 31 4,6,09,11 *': 'cel',
      'every day': 'schema',
      '0 3 * *': 'schema',
      '0 3 * * * *': 'schema',
      '0  3 * * *': 'schema',
      '@reboot': 'schema',
      '@DAILY': 'schema',
    },
  },
  {
    label: 'backup timezone',
    field: 'spec.backup.timezone',
    spec: (timezone) => spec({ backup: { schedule: '@daily', timezone } }),
    accept: [
      'Asia/Seoul',
      'UTC',
      'Etc/UTC',
      'America/Argentina/Buenos_Aires',
      'Etc/GMT+5',
      'US/Pacific',
      'EST5EDT',
    ],
    refuse: {
      'Asia/Seul': 'cel',
      'asia/seoul': 'cel',
      utc: 'cel',
      Local: 'cel',
      Factory: 'cel',
      'posix/Asia/Seoul': 'cel',
      'Mars/Olympus_Mons': 'cel',
      '+05:00': 'schema',
      'Asia/Seoul ': 'schema',
    },
  },
  {
    label: 'image',
    field: 'spec.image',
    spec: (image) => spec({ image }),
    accept: [
      'postgres:16',
      'docker.io/library/postgres:16.4',
      'registry.example.com:5000/mirror/postgres:16-alpine',
      `postgres@sha256:${HEX64}`,
      `ghcr.io/org/pg:16@sha256:${HEX64}`,
      'localhost/postgres',
    ],
    refuse: {
      'Postgres:16': 'schema',
      'postgres:': 'schema',
      'postgres:16 ': 'schema',
      'https://docker.io/postgres': 'schema',
      'postgres@sha256:abc': 'schema',
      'postgres::16': 'schema',
      '-postgres': 'schema',
    },
  },
  {
    label: 'storage size',
    field: 'spec.storage.size',
    spec: (size) => spec({ storage: { size } }),
    accept: ['128Mi', '1Gi', '0.5Gi', '134217728'],
    refuse: { '0': 'cel', '-1Gi': 'cel', '127Mi': 'cel', '100M': 'cel', 'ten gigs': 'schema' },
  },
  {
    label: 'memory limit',
    field: 'spec.resources.limits.memory',
    spec: (memory) => spec({ resources: { limits: { memory } } }),
    accept: ['64Mi', '2Gi'],
    refuse: { '63Mi': 'cel', '0': 'cel', '-1Gi': 'cel' },
  },
  {
    label: 'cpu limit',
    field: 'spec.resources.limits.cpu',
    spec: (cpu) => spec({ resources: { limits: { cpu } } }),
    accept: ['50m', '2'],
    refuse: { '0': 'cel', '-1': 'cel' },
  },
  {
    label: 'cpu request',
    field: 'spec.resources.requests.cpu',
    spec: (cpu) => spec({ resources: { requests: { cpu } } }),
    accept: ['0', '250m'],
    refuse: { '-100m': 'cel' },
  },
  {
    label: 'memory request',
    field: 'spec.resources.requests.memory',
    spec: (memory) => spec({ resources: { requests: { memory } } }),
    accept: ['0', '32Mi'],
    refuse: { '-1Mi': 'cel' },
  },
  {
    label: 'backup volume size',
    field: 'spec.backup.volume.size',
    spec: (size) => spec({ backup: { volume: { size } } }),
    accept: ['1Gi'],
    refuse: { '0': 'cel', '-5Gi': 'cel' },
  },
  {
    label: 'postgresql parameter name',
    field: 'spec.postgresql.parameters',
    spec: (name) => spec({ postgresql: { parameters: { [name]: '1' } } }),
    accept: ['work_mem', 'pg_stat_statements.max', '_private', 'auto_explain.log_min_duration'],
    refuse: {
      'work mem': 'cel',
      'a..b': 'cel',
      'a.b.c': 'cel',
      'a.': 'cel',
      '.a': 'cel',
      '1abc': 'cel',
      'a-b': 'cel',
      port: 'cel',
    },
  },
  {
    label: 'postgresql parameter value',
    field: 'spec.postgresql.parameters',
    spec: (value) => spec({ postgresql: { parameters: { work_mem: value } } }),
    accept: ['4MB', "it's", 'a\\b', 'ünïcode'],
    refuse: { "4MB'\nlisten_addresses = '*": 'cel', 'tab\there': 'cel', 'del\x7f': 'cel' },
  },
  {
    label: 'service annotation key',
    field: 'spec.service.annotations',
    spec: (key) => spec({ service: { annotations: { [key]: 'x' } } }),
    accept: [
      'example.com/key',
      'service.beta.kubernetes.io/aws-load-balancer-type',
      'simple',
      'a_b.c-d',
      'x'.repeat(63),
      `${'a'.repeat(253)}/b`,
    ],
    refuse: {
      'has space': 'cel',
      '-start': 'cel',
      'end-': 'cel',
      'a/b/c': 'cel',
      'Example.com/key': 'cel',
      '/name': 'cel',
      'prefix/': 'cel',
      [`${'x'.repeat(64)}`]: 'cel',
      [`${'a'.repeat(254)}/b`]: 'cel',
    },
  },
  {
    label: 'database owner',
    field: 'spec.bootstrap.owner',
    spec: (owner) => spec({ bootstrap: { owner } }),
    accept: ['app', 'orders_owner', '_x'],
    refuse: {
      pg_app: 'cel',
      public: 'cel',
      none: 'cel',
      postgres: 'cel',
      App: 'schema',
      'drop table': 'schema',
    },
  },
  {
    label: 'database name',
    field: 'spec.bootstrap.database',
    spec: (database) => spec({ bootstrap: { database } }),
    accept: ['app', 'pg_app', 'orders'],
    refuse: { postgres: 'cel', template0: 'cel', template1: 'cel' },
  },
  {
    label: 'instances',
    field: 'spec.instances',
    spec: (instances) => spec({ instances: Number(instances) }),
    accept: ['1', '2', '3', '9'],
    refuse: { '0': 'schema', '10': 'schema', '-1': 'schema', '1.5': 'schema' },
  },
  {
    // "instances/synchronous"
    label: 'synchronous replicas',
    field: 'spec.replication.synchronous',
    spec: (value) => {
      const [instances, synchronous] = value.split('/').map(Number);
      return spec({ ...(instances ? { instances } : {}), replication: { synchronous } });
    },
    accept: ['3/0', '3/1', '3/2', '2/1', '/0', '9/8', '1/0'],
    refuse: { '3/3': 'cel', '2/5': 'cel', '/1': 'cel', '1/1': 'cel', '3/-1': 'schema', '9/9': 'schema' },
  },
  {
    label: 'failover delay',
    field: 'spec.replication.failoverDelaySeconds',
    spec: (delay) => spec({ instances: 3, replication: { failoverDelaySeconds: Number(delay) } }),
    accept: ['1', '5', '600'],
    refuse: { '0': 'schema', '601': 'schema' },
  },
  {
    label: 'migration names (comma-separated; "N*" is N distinct names)',
    field: 'spec.migrations',
    spec: (value) => {
      const names = value.endsWith('*')
        ? Array.from({ length: Number(value.slice(0, -1)) }, (_, i) => `m${i}`)
        : value.split(',');
      return spec({
        migrations: names.map((name) => ({ name, configMap: { name: 'sql', key: `${name}.sql` } })),
      });
    },
    accept: ['0001', '0001,0002', '0002,0001,0003', '64*'],
    refuse: { '0001,0001': 'cel', '0001,0002,0001': 'cel', '65*': 'schema' },
  },
];

/** The accepted values of {@link FIELD_CASES} as whole SampleDB specs. */
export const VALID_CREATES: ReadonlyArray<{ title: string; spec: Record<string, unknown> }> =
  FIELD_CASES.flatMap((cases) =>
    cases.accept.map((value) => ({
      title: `${cases.label} ${JSON.stringify(value)}`,
      spec: cases.spec(value),
    })),
  );

const refusedCreates: InvalidCreate[] = FIELD_CASES.flatMap((cases) =>
  Object.entries(cases.refuse).map(([value, layer]) => ({
    title: `${cases.label} ${JSON.stringify(value)}`,
    spec: cases.spec(value),
    field: cases.field,
    layer,
  })),
);

export const INVALID_CREATES: readonly InvalidCreate[] = [
  { title: 'missing version', spec: { storage: { size: '1Gi' } }, field: 'spec.version', layer: 'schema' },
  { title: 'missing storage', spec: { version: '16' }, field: 'spec.storage', layer: 'schema' },
  {
    title: 'version not a number',
    spec: spec({ version: 'latest' }),
    field: 'spec.version',
    layer: 'schema',
  },
  { title: 'unsupported major version', spec: spec({ version: '12' }), field: 'spec.version', layer: 'cel' },
  {
    title: 'maintenance window of zero length',
    spec: spec({ upgrade: { maintenanceWindow: { schedule: '0 2 * * SUN', duration: '0h' } } }),
    field: 'spec.upgrade.maintenanceWindow.duration',
    layer: 'cel',
  },
  {
    title: 'maintenance window schedule out of range',
    spec: spec({ upgrade: { maintenanceWindow: { schedule: '0 25 * * *', duration: '2h' } } }),
    field: 'spec.upgrade.maintenanceWindow.schedule',
    layer: 'cel',
  },
  {
    title: 'storage size not a quantity',
    spec: spec({ storage: { size: 'ten gigs' } }),
    field: 'spec.storage.size',
    layer: 'schema',
  },
  {
    title: 'storage size zero',
    spec: spec({ storage: { size: '0' } }),
    field: 'spec.storage.size',
    layer: 'cel',
  },
  {
    title: 'storageClassName not a name',
    spec: spec({ storage: { size: '1Gi', storageClassName: 'Fast SSD' } }),
    field: 'spec.storage.storageClassName',
    layer: 'schema',
  },
  {
    title: 'service type unknown',
    spec: spec({ service: { type: 'Ingress' } }),
    field: 'spec.service.type',
    layer: 'schema',
  },
  {
    title: 'service port out of range',
    spec: spec({ service: { port: 70000 } }),
    field: 'spec.service.port',
    layer: 'schema',
  },
  {
    title: 'cpu limit below request',
    spec: spec({ resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } }),
    field: 'spec.resources.limits.cpu',
    layer: 'cel',
  },
  {
    title: 'memory limit below request',
    spec: spec({ resources: { requests: { memory: '2Gi' }, limits: { memory: '1Gi' } } }),
    field: 'spec.resources.limits.memory',
    layer: 'cel',
  },
  {
    title: 'reserved postgresql parameter',
    spec: spec({ postgresql: { parameters: { port: '6543' } } }),
    field: 'spec.postgresql.parameters',
    layer: 'cel',
  },
  {
    title: 'database name not an identifier',
    spec: spec({ bootstrap: { database: 'drop table' } }),
    field: 'spec.bootstrap.database',
    layer: 'schema',
  },
  {
    title: 'initSQL together with fromBackup',
    spec: spec({ bootstrap: { initSQL: { name: 'sql' }, fromBackup: { name: 'nightly' } } }),
    field: 'spec.bootstrap.fromBackup',
    layer: 'cel',
  },
  {
    title: 'postgresql parameter name not a setting name',
    spec: spec({ postgresql: { parameters: { 'work mem': '4MB' } } }),
    field: 'spec.postgresql.parameters',
    layer: 'cel',
  },
  {
    title: 'postgresql parameter value with a newline',
    spec: spec({ postgresql: { parameters: { work_mem: "4MB'\nlisten_addresses = '*" } } }),
    field: 'spec.postgresql.parameters',
    layer: 'cel',
  },
  {
    title: 'schedule not cron',
    spec: spec({ backup: { schedule: 'every day' } }),
    field: 'spec.backup.schedule',
    layer: 'schema',
  },
  {
    title: 'timezone without schedule',
    spec: spec({ backup: { timezone: 'Asia/Seoul' } }),
    field: 'spec.backup.timezone',
    layer: 'cel',
  },
  {
    title: 'empty retention',
    spec: spec({ backup: { schedule: '@daily', retention: {} } }),
    field: 'spec.backup.retention',
    layer: 'cel',
  },
  {
    title: 'retention count zero',
    spec: spec({ backup: { schedule: '@daily', retention: { count: 0 } } }),
    field: 'spec.backup.retention.count',
    layer: 'schema',
  },
  {
    title: 'retention maxAge not a duration',
    spec: spec({ backup: { schedule: '@daily', retention: { maxAge: 'a month' } } }),
    field: 'spec.backup.retention.maxAge',
    layer: 'schema',
  },
  {
    title: 'backup volume claimName with size',
    spec: spec({ backup: { volume: { claimName: 'mine', size: '5Gi' } } }),
    field: 'spec.backup.volume.claimName',
    layer: 'cel',
  },
  {
    title: 'backup verifyQuery without verify',
    spec: spec({ backup: { verifyQuery: { name: 'checks', key: 'verify.sql' } } }),
    field: 'spec.backup.verifyQuery',
    layer: 'cel',
  },
  {
    title: 'backup verify not a boolean',
    spec: spec({ backup: { verify: 'yes' } }),
    field: 'spec.backup.verify',
    layer: 'schema',
  },
  {
    title: 'deletion policy unknown',
    spec: spec({ deletion: { policy: 'Archive' } }),
    field: 'spec.deletion.policy',
    layer: 'schema',
  },
  {
    title: 'deletion protection not a boolean',
    spec: spec({ deletion: { protection: 'yes' } }),
    field: 'spec.deletion.protection',
    layer: 'schema',
  },
  {
    title: 'name too long for the StatefulSet',
    name: `db-${'x'.repeat(55)}`,
    spec: spec({}),
    field: 'metadata.name',
    layer: 'cel',
  },
  // The Secrets the operator writes itself; the rule depends on metadata.name, so these are not FIELD_CASES.
  ...OPERATOR_SECRET_SUFFIXES.map(
    (suffix): InvalidCreate => ({
      title: `credentials Secret named as the operator's ${suffix} Secret`,
      name: 'creds',
      spec: spec({ bootstrap: { credentialsSecret: { name: `creds-${suffix}` } } }),
      field: 'spec.bootstrap.credentialsSecret.name',
      layer: 'cel',
    }),
  ),
  ...refusedCreates,
];

export interface InvalidUpdate {
  readonly title: string;
  readonly before: Record<string, unknown>;
  readonly after: Record<string, unknown>;
  readonly field: string;
}

export const INVALID_UPDATES: readonly InvalidUpdate[] = [
  {
    title: 'shrinking storage',
    before: spec({ storage: { size: '2Gi' } }),
    after: spec({ storage: { size: '1Gi' } }),
    field: 'spec.storage.size',
  },
  {
    title: 'downgrading the major version',
    before: spec({ version: '16.4' }),
    after: spec({ version: '15' }),
    field: 'spec.version',
  },
  {
    title: 'downgrading the major version by two',
    before: spec({ version: '17' }),
    after: spec({ version: '15.8' }),
    field: 'spec.version',
  },
  {
    title: 'changing the storage class',
    before: spec({ storage: { size: '1Gi', storageClassName: 'standard' } }),
    after: spec({ storage: { size: '1Gi', storageClassName: 'fast' } }),
    field: 'spec.storage.storageClassName',
  },
  {
    title: 'changing bootstrap after creation',
    before: spec({ bootstrap: { database: 'app' } }),
    after: spec({ bootstrap: { database: 'other' } }),
    field: 'spec.bootstrap',
  },
  {
    title: 'adding a storage class after creation',
    before: spec({ storage: { size: '1Gi' } }),
    after: spec({ storage: { size: '1Gi', storageClassName: 'fast' } }),
    field: 'spec.storage.storageClassName',
  },
];

/** Updates that must be accepted (so the rules are not simply refusing everything). */
export const VALID_UPDATES: ReadonlyArray<{
  title: string;
  before: Record<string, unknown>;
  after: Record<string, unknown>;
}> = [
  {
    title: 'growing storage',
    before: spec({ storage: { size: '1Gi' } }),
    after: spec({ storage: { size: '2Gi' } }),
  },
  { title: 'minor upgrade', before: spec({ version: '16' }), after: spec({ version: '16.4' }) },
  { title: 'minor downgrade', before: spec({ version: '16.4' }), after: spec({ version: '16.2' }) },
  {
    title: 'raising the major version (an upgrade)',
    before: spec({ version: '15' }),
    after: spec({ version: '17' }),
  },
  {
    title: 'raising the major version with replicas (every instance is upgraded)',
    before: spec({ version: '15', instances: 3 }),
    after: spec({ version: '17', instances: 3 }),
  },
  {
    title: 'raising the major version while scaling out',
    before: spec({ version: '15' }),
    after: spec({ version: '17', instances: 2 }),
  },
  {
    title: 'raising the major version of a replicated SampleDB scaled to one instance first',
    before: spec({ version: '15', instances: 1 }),
    after: spec({ version: '17', instances: 1 }),
  },
  {
    title: 'scaling a replicated SampleDB without a major change',
    before: spec({ version: '15', instances: 3 }),
    after: spec({ version: '15.8', instances: 2 }),
  },
  {
    title: 'editing resources',
    before: spec({}),
    after: spec({ resources: { requests: { cpu: '1' }, limits: { cpu: '2' } } }),
  },
];
