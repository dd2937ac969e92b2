// The stack's configuration: every key a Pulumi.<stack>.yaml may set, as one TypeBox schema with its defaults,
// checked by the validator that checks the CRDs (src/api/validate.ts) so that a typo is an error naming the key
// before anything is deployed, and each instance checked as the SampleDB it becomes. Pure (no Pulumi runtime), so it
// is unit-tested directly. Each key is documented in README.md ("Deploy with Pulumi").
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  API_VERSION,
  createValidator,
  type FieldError,
  IMAGE_REPOSITORY_PATTERN,
  LOG_LEVELS,
  type SampleDbSpec,
  sampleDbValidator,
  ValidationError,
} from '../api/index.ts';
import { Quantity, StringEnum, StringMap } from '../api/schema-kit.ts';
import { OPERATOR_DEFAULTS, type OperatorResources } from '../constructs/index.ts';

export const DEFAULT_PLATFORMS: readonly string[] = ['linux/amd64', 'linux/arm64'];
export const DEFAULT_REPOSITORY = 'sampledb-operator';

const DNS_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
const PLATFORM = '^[a-z0-9]+/[a-z0-9]+(/[a-z0-9]+)?$';
/** A reference that names one immutable image: anything, then `@sha256:` and 64 hex digits. */
const DIGEST_REF = /^[^\s@]+@sha256:[0-9a-f]{64}$/;

export function isDigestRef(ref: string): boolean {
  return DIGEST_REF.test(ref);
}

const dnsLabel = (what: string, options: { default?: string } = {}) =>
  Type.String({
    pattern: DNS_LABEL,
    maxLength: 63,
    description: `must be a ${what} (a DNS-1123 label)`,
    ...options,
  });
const namespaceName = (options: { default?: string } = {}) => dnsLabel('namespace name', options);
const quantity = Quantity({ description: 'must be a quantity, e.g. 500m or 256Mi' });
const resourceList = () =>
  Type.Optional(Type.Object({ cpu: Type.Optional(quantity), memory: Type.Optional(quantity) }));

/** The keys only a build uses; a prebuilt image refuses them. */
const BUILD_KEYS = ['registry', 'repository', 'tag', 'platforms', 'push', 'cache'] as const;

const ImageSchema = Type.Object({
  build: Type.Optional(Type.Boolean({ default: true })),
  registry: Type.Optional(Type.String({ minLength: 1 })),
  repository: Type.Optional(Type.String({ minLength: 1 })),
  tag: Type.Optional(Type.String({ minLength: 1 })),
  platforms: Type.Optional(
    Type.Array(Type.String({ pattern: PLATFORM, description: 'must be os/arch' }), { minItems: 1 }),
  ),
  push: Type.Optional(Type.Boolean()),
  cache: Type.Optional(Type.Boolean()),
  /** Checked below, with the message README.md promises. */
  ref: Type.Optional(Type.String()),
});

const InstanceSchema = Type.Object({
  name: Type.String({ minLength: 1 }),
  namespace: namespaceName(),
  labels: Type.Optional(StringMap()),
  // Checked as the whole SampleDB below, with the CRD's rules (and without filling in its defaults here).
  spec: Type.Unsafe<SampleDbSpec>({ type: 'object' }),
});

const d = OPERATOR_DEFAULTS;

export const StackConfigSchema = Type.Object({
  namespace: Type.Optional(namespaceName({ default: d.namespace })),
  // Optional here so that its absence gets the message saying what to set.
  image: Type.Optional(ImageSchema),
  replicas: Type.Optional(Type.Integer({ minimum: 1, default: d.replicas })),
  logLevel: Type.Optional(StringEnum(LOG_LEVELS, { default: d.logLevel })),
  postgresImageRepository: Type.Optional(
    Type.String({
      pattern: IMAGE_REPOSITORY_PATTERN,
      default: d.postgresImageRepository,
      description:
        'must be a repository without tag or digest (the tag is the SampleDB version), e.g. docker.io/library/postgres',
    }),
  ),
  watchNamespaces: Type.Optional(Type.Array(namespaceName(), { default: [] })),
  resources: Type.Optional(Type.Object({ requests: resourceList(), limits: resourceList() })),
  instances: Type.Optional(Type.Array(InstanceSchema, { default: [] })),
  /** Create the watched and instance namespaces (other than the operator's). */
  createNamespaces: Type.Optional(Type.Boolean({ default: true })),
  /** Keep the CRDs (and so every SampleDB in the cluster) when the stack is destroyed. */
  retainCrdsOnDelete: Type.Optional(Type.Boolean({ default: false })),
  imagePullSecrets: Type.Optional(Type.Array(dnsLabel('Secret name'), { default: [] })),
});

/** The raw values as Pulumi config returns them (objects already parsed from YAML/JSON, scalars as strings). */
export type RawStackConfig = { readonly [K in keyof typeof StackConfigSchema.properties]?: unknown };

/** Build the controller image from this repository's Dockerfile and push it. */
export interface BuildImageConfig {
  readonly build: true;
  readonly registry: string;
  readonly repository: string;
  readonly tag: string;
  readonly platforms: readonly string[];
  /** Always true: a digest exists only for a pushed image. */
  readonly push: boolean;
  /** Use `<registry>/<repository>:buildcache` as a registry build cache. */
  readonly cache: boolean;
}

/** Deploy an image built elsewhere (CI), referenced by digest. */
export interface PrebuiltImageConfig {
  readonly build: false;
  readonly ref: string;
}

export type ImageConfig = BuildImageConfig | PrebuiltImageConfig;

export type InstanceConfig = Static<typeof InstanceSchema>;

type Defaulted = Required<Omit<Static<typeof StackConfigSchema>, 'resources' | 'image'>>;
export interface StackConfig extends Readonly<Defaulted> {
  readonly image: ImageConfig;
  readonly resources?: OperatorResources;
}

type SchemaNode = TSchema & { type?: string; properties?: Record<string, SchemaNode>; items?: SchemaNode };

/** `pulumi config set key true` stores the string "true" (and "3" for 3): read those as the schema's type says. */
function coerceScalars(node: SchemaNode, value: unknown): unknown {
  if (typeof value === 'string') {
    if (node.type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
    if (node.type === 'integer' && /^-?\d+$/.test(value)) return Number(value);
    return value;
  }
  if (Array.isArray(value)) return node.items ? value.map((v) => coerceScalars(node.items!, v)) : value;
  if (typeof value === 'object' && value !== null && node.properties) {
    const props = node.properties;
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => [k, props[k] ? coerceScalars(props[k], v) : v]),
    );
  }
  return value;
}

const stackConfigValidator = createValidator(StackConfigSchema);
type Loose = Partial<Record<string, unknown>>;
const isRecord = (v: unknown): v is Loose => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What the schema cannot say: which image keys go together, and how instances relate to the rest. */
function crossFieldErrors(config: Loose): FieldError[] {
  const errors: FieldError[] = [];
  const add = (field: string, message: string) => errors.push({ field, message });
  const image = config.image;
  if (image === undefined) {
    add('image', 'is required: set image.registry (build) or image.build=false with image.ref');
  } else if (isRecord(image) && image.build === false) {
    if (image.ref === undefined) add('image.ref', 'is required when image.build is false');
    else if (typeof image.ref === 'string' && !isDigestRef(image.ref))
      add('image.ref', `must be pinned by digest (repo@sha256:<64 hex>), got "${image.ref}"`);
    for (const key of BUILD_KEYS)
      if (image[key] !== undefined) add(`image.${key}`, 'only applies when image.build is true');
  } else if (isRecord(image)) {
    if (image.registry === undefined) add('image.registry', 'is required when image.build is true');
    if (image.ref !== undefined) add('image.ref', 'only applies when image.build is false');
    if (image.push === false)
      add('image.push', 'must be true: the Deployment is pinned to the pushed digest');
  }
  const watched = Array.isArray(config.watchNamespaces) ? config.watchNamespaces : [];
  const seen = new Set<string>();
  (Array.isArray(config.instances) ? config.instances : []).forEach((instance: unknown, i) => {
    if (!isRecord(instance)) return;
    const field = `instances[${i}]`;
    const { name, namespace } = instance;
    if (watched.length > 0 && typeof namespace === 'string' && !watched.includes(namespace)) {
      add(
        `${field}.namespace`,
        `"${namespace}" is not in watchNamespaces, so no operator would reconcile it`,
      );
    }
    const key = `${namespace}/${name}`;
    if (seen.has(key)) add(field, `duplicates the instance ${key}`);
    seen.add(key);
    if (isRecord(instance.spec) && typeof name === 'string') {
      const object = {
        apiVersion: API_VERSION,
        kind: 'SampleDB',
        metadata: { name, namespace, ...(instance.labels ? { labels: instance.labels } : {}) },
        spec: instance.spec,
      };
      for (const e of sampleDbValidator.validate(object)) {
        if (e.field === 'metadata.name') add(`${field}.name`, e.message);
        else if (e.field === '(root)') add(field, e.message);
        // The rest of metadata (namespace, labels) is the instance's own keys, which the schema has checked.
        else if (!e.field.startsWith('metadata')) add(`${field}.${e.field}`, e.message);
      }
    }
  });
  return errors;
}

/**
 * Checks the raw config and fills in the defaults. Throws a {@link ValidationError} listing every bad key.
 * `version` is the package version, the default image tag.
 */
export function parseStackConfig(raw: RawStackConfig, version: string): StackConfig {
  const value = coerceScalars(StackConfigSchema, raw) as Loose;
  const errors = [...stackConfigValidator.validate(value), ...crossFieldErrors(value)];
  if (errors.length > 0) throw new ValidationError('sampledb-operator stack config', errors);
  const config = Value.Default(StackConfigSchema, value) as Defaulted & Static<typeof StackConfigSchema>;
  const image = config.image ?? {};
  return {
    ...config,
    image:
      image.build === false
        ? { build: false, ref: image.ref ?? '' }
        : {
            build: true,
            registry: (image.registry ?? '').replace(/\/+$/, ''),
            repository: image.repository ?? DEFAULT_REPOSITORY,
            tag: image.tag ?? version,
            platforms: image.platforms ?? [...DEFAULT_PLATFORMS],
            push: true,
            cache: image.cache ?? true,
          },
  };
}

/** Namespaces the stack creates when `createNamespaces` is on: watched and instance namespaces but the operator's. */
export function namespacesToCreate(config: StackConfig): string[] {
  if (!config.createNamespaces) return [];
  const names = new Set([...config.watchNamespaces, ...config.instances.map((i) => i.namespace)]);
  names.delete(config.namespace);
  return [...names].sort();
}
