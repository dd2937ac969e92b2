// Invalid SampleDBs shared by the unit tests (schema + TypeScript rule twins) and the integration tests (the real
// apiserver with the CRD's CEL rules), so both layers are held to the same list.

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
  { title: 'major upgrade', before: spec({ version: '15' }), after: spec({ version: '16' }) },
  {
    title: 'editing resources',
    before: spec({}),
    after: spec({ resources: { requests: { cpu: '1' }, limits: { cpu: '2' } } }),
  },
];
