// The stack's configuration: every key a Pulumi.<stack>.yaml may set, its default, and the checks that turn a
// typo into an error naming the key before anything is deployed. Pure (no Pulumi runtime), so it is unit-tested
// directly. Each key is documented in README.md ("Deploy with Pulumi").
import {
  type FieldError,
  imageRepositoryProblem,
  LOG_LEVELS,
  type LogLevel,
  parseQuantity,
  type SampleDbSpec,
  ValidationError,
} from '../api/index.ts';
import { OPERATOR_DEFAULTS, type OperatorResources } from '../constructs/index.ts';

export const DEFAULT_PLATFORMS: readonly string[] = ['linux/amd64', 'linux/arm64'];
export const DEFAULT_REPOSITORY = 'sampledb-operator';

/** Build the controller image from this repository's Dockerfile and push it. */
export interface BuildImageConfig {
  readonly build: true;
  /** Registry host (and path prefix), e.g. `ghcr.io/acme`. Required. */
  readonly registry: string;
  /** Repository under the registry. Default: `sampledb-operator`. */
  readonly repository: string;
  /** Tag pushed alongside the digest. Default: the package version. */
  readonly tag: string;
  /** Target platforms. Default: `linux/amd64`, `linux/arm64`. */
  readonly platforms: readonly string[];
  /** Push to the registry. Default: `true` (a digest exists only for a pushed image). */
  readonly push: boolean;
  /** Use `<registry>/<repository>:buildcache` as a registry build cache. Default: `true`. */
  readonly cache: boolean;
}

/** Deploy an image built elsewhere (CI), referenced by digest. */
export interface PrebuiltImageConfig {
  readonly build: false;
  /** `repo@sha256:<64 hex>` or `repo:tag@sha256:<64 hex>`. Required. */
  readonly ref: string;
}

export type ImageConfig = BuildImageConfig | PrebuiltImageConfig;

export interface InstanceConfig {
  readonly name: string;
  readonly namespace: string;
  readonly labels?: Record<string, string>;
  /** Checked by the SampleDb construct against the CRD schema and rules. */
  readonly spec: SampleDbSpec;
}

export interface StackConfig {
  readonly namespace: string;
  readonly image: ImageConfig;
  readonly replicas: number;
  readonly logLevel: LogLevel;
  readonly postgresImageRepository: string;
  readonly watchNamespaces: readonly string[];
  readonly resources?: OperatorResources;
  readonly instances: readonly InstanceConfig[];
  /** Create the watched and instance namespaces (other than the operator's). */
  readonly createNamespaces: boolean;
  /** Keep the CRDs (and so every SampleDB in the cluster) when the stack is destroyed. */
  readonly retainCrdsOnDelete: boolean;
  readonly imagePullSecrets: readonly string[];
}

/** The raw values as Pulumi config returns them (objects already parsed from YAML/JSON). */
export interface RawStackConfig {
  readonly namespace?: unknown;
  readonly image?: unknown;
  readonly replicas?: unknown;
  readonly logLevel?: unknown;
  readonly postgresImageRepository?: unknown;
  readonly watchNamespaces?: unknown;
  readonly resources?: unknown;
  readonly instances?: unknown;
  readonly createNamespaces?: unknown;
  readonly retainCrdsOnDelete?: unknown;
  readonly imagePullSecrets?: unknown;
}

/** The config keys, in the order the README documents them. */
export const CONFIG_KEYS = [
  'namespace',
  'image',
  'registryUsername',
  'registryPassword',
  'replicas',
  'logLevel',
  'postgresImageRepository',
  'watchNamespaces',
  'resources',
  'instances',
  'createNamespaces',
  'retainCrdsOnDelete',
  'imagePullSecrets',
] as const;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** A reference that names one immutable image: anything, then `@sha256:` and 64 hex digits. */
const DIGEST_REF = /^[^\s@]+@sha256:[0-9a-f]{64}$/;
const PLATFORM = /^[a-z0-9]+\/[a-z0-9]+(\/[a-z0-9]+)?$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isDigestRef(ref: string): boolean {
  return DIGEST_REF.test(ref);
}

class Collector {
  readonly errors: FieldError[] = [];
  add(field: string, message: string): void {
    this.errors.push({ field, message });
  }
  string(field: string, value: unknown, fallback: string): string {
    if (value === undefined) return fallback;
    if (typeof value !== 'string' || value === '') {
      this.add(field, `must be a non-empty string, got ${JSON.stringify(value)}`);
      return fallback;
    }
    return value;
  }
  boolean(field: string, value: unknown, fallback: boolean): boolean {
    if (value === undefined) return fallback;
    // `pulumi config set key true` stores the string "true".
    if (value === 'true' || value === true) return true;
    if (value === 'false' || value === false) return false;
    this.add(field, `must be true or false, got ${JSON.stringify(value)}`);
    return fallback;
  }
  names(field: string, value: unknown): string[] {
    if (value === undefined) return [];
    if (!Array.isArray(value)) {
      this.add(field, 'must be a list of namespace names');
      return [];
    }
    value.forEach((name, i) => {
      if (typeof name !== 'string' || !DNS_LABEL.test(name)) {
        this.add(`${field}[${i}]`, `${JSON.stringify(name)} is not a namespace name`);
      }
    });
    return value.filter((name): name is string => typeof name === 'string');
  }
}

function parseImage(c: Collector, raw: unknown, version: string): ImageConfig {
  if (raw === undefined) {
    c.add('image', 'is required: set image.registry (build) or image.build=false with image.ref');
    return { build: false, ref: '' };
  }
  if (!isRecord(raw)) {
    c.add('image', 'must be an object');
    return { build: false, ref: '' };
  }
  const known = new Set(['build', 'registry', 'repository', 'tag', 'platforms', 'push', 'cache', 'ref']);
  for (const key of Object.keys(raw)) if (!known.has(key)) c.add(`image.${key}`, 'is not a known key');
  const build = c.boolean('image.build', raw.build, true);
  if (!build) {
    const ref = c.string('image.ref', raw.ref, '');
    if (ref === '') c.add('image.ref', 'is required when image.build is false');
    else if (!isDigestRef(ref)) {
      c.add('image.ref', `must be pinned by digest (repo@sha256:<64 hex>), got "${ref}"`);
    }
    for (const key of ['registry', 'repository', 'tag', 'platforms', 'push', 'cache']) {
      if (raw[key] !== undefined) c.add(`image.${key}`, 'only applies when image.build is true');
    }
    return { build: false, ref };
  }
  if (raw.ref !== undefined) c.add('image.ref', 'only applies when image.build is false');
  const registry = c.string('image.registry', raw.registry, '');
  if (raw.registry === undefined) c.add('image.registry', 'is required when image.build is true');
  const platforms = raw.platforms === undefined ? [...DEFAULT_PLATFORMS] : raw.platforms;
  if (!Array.isArray(platforms) || platforms.length === 0) {
    c.add('image.platforms', 'must be a non-empty list such as [linux/amd64, linux/arm64]');
  } else {
    platforms.forEach((p, i) => {
      if (typeof p !== 'string' || !PLATFORM.test(p)) c.add(`image.platforms[${i}]`, `"${p}" is not os/arch`);
    });
  }
  const push = c.boolean('image.push', raw.push, true);
  if (!push) c.add('image.push', 'must be true: the Deployment is pinned to the pushed digest');
  return {
    build: true,
    registry: registry.replace(/\/+$/, ''),
    repository: c.string('image.repository', raw.repository, DEFAULT_REPOSITORY),
    tag: c.string('image.tag', raw.tag, version),
    platforms: Array.isArray(platforms) ? platforms.map(String) : [...DEFAULT_PLATFORMS],
    push,
    cache: c.boolean('image.cache', raw.cache, true),
  };
}

function parseResources(c: Collector, raw: unknown): OperatorResources | undefined {
  if (raw === undefined) return undefined;
  if (!isRecord(raw)) {
    c.add('resources', 'must be an object with requests and/or limits');
    return undefined;
  }
  const result: { requests?: Record<string, string>; limits?: Record<string, string> } = {};
  for (const [kind, value] of Object.entries(raw)) {
    if (kind !== 'requests' && kind !== 'limits') {
      c.add(`resources.${kind}`, 'is not requests or limits');
      continue;
    }
    if (!isRecord(value)) {
      c.add(`resources.${kind}`, 'must be an object with cpu and/or memory');
      continue;
    }
    const entries: Record<string, string> = {};
    for (const [resource, quantity] of Object.entries(value)) {
      if (resource !== 'cpu' && resource !== 'memory')
        c.add(`resources.${kind}.${resource}`, 'is not cpu or memory');
      else if (typeof quantity !== 'string' || parseQuantity(quantity) === undefined) {
        c.add(`resources.${kind}.${resource}`, `${JSON.stringify(quantity)} is not a quantity`);
      } else entries[resource] = quantity;
    }
    result[kind] = entries;
  }
  return result;
}

function parseInstances(c: Collector, raw: unknown, watchNamespaces: readonly string[]): InstanceConfig[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) {
    c.add('instances', 'must be a list of { name, namespace, spec }');
    return [];
  }
  const seen = new Set<string>();
  const instances: InstanceConfig[] = [];
  raw.forEach((item, i) => {
    const field = `instances[${i}]`;
    if (!isRecord(item)) {
      c.add(field, 'must be an object with name, namespace and spec');
      return;
    }
    const name = c.string(`${field}.name`, item.name, '');
    const namespace = c.string(`${field}.namespace`, item.namespace, '');
    if (item.name === undefined) c.add(`${field}.name`, 'is required');
    if (item.namespace === undefined) c.add(`${field}.namespace`, 'is required');
    if (namespace && !DNS_LABEL.test(namespace))
      c.add(`${field}.namespace`, `"${namespace}" is not a namespace name`);
    if (!isRecord(item.spec)) c.add(`${field}.spec`, 'is required (at least version and storage.size)');
    if (item.labels !== undefined && !isRecord(item.labels)) c.add(`${field}.labels`, 'must be a map');
    if (watchNamespaces.length > 0 && namespace && !watchNamespaces.includes(namespace)) {
      c.add(
        `${field}.namespace`,
        `"${namespace}" is not in watchNamespaces, so no operator would reconcile it`,
      );
    }
    const key = `${namespace}/${name}`;
    if (seen.has(key)) c.add(field, `duplicates the instance ${key}`);
    seen.add(key);
    instances.push({
      name,
      namespace,
      ...(isRecord(item.labels) ? { labels: item.labels as Record<string, string> } : {}),
      spec: (isRecord(item.spec) ? item.spec : {}) as SampleDbSpec,
    });
  });
  return instances;
}

/**
 * Checks the raw config and fills in the defaults. Throws a {@link ValidationError} listing every bad key.
 * `version` is the package version, the default image tag.
 */
export function parseStackConfig(raw: RawStackConfig, version: string): StackConfig {
  const c = new Collector();
  const namespace = c.string('namespace', raw.namespace, OPERATOR_DEFAULTS.namespace);
  if (!DNS_LABEL.test(namespace)) c.add('namespace', `"${namespace}" is not a namespace name`);
  const image = parseImage(c, raw.image, version);

  let replicas: number = OPERATOR_DEFAULTS.replicas;
  if (raw.replicas !== undefined) {
    const value = typeof raw.replicas === 'string' ? Number(raw.replicas) : raw.replicas;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
      c.add('replicas', `must be a whole number >= 1, got ${JSON.stringify(raw.replicas)}`);
    } else replicas = value;
  }

  const logLevel = c.string('logLevel', raw.logLevel, OPERATOR_DEFAULTS.logLevel) as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) c.add('logLevel', `must be one of ${LOG_LEVELS.join(', ')}`);

  const postgresImageRepository = c.string(
    'postgresImageRepository',
    raw.postgresImageRepository,
    OPERATOR_DEFAULTS.postgresImageRepository,
  );
  const repositoryProblem = imageRepositoryProblem(postgresImageRepository);
  if (repositoryProblem) c.add('postgresImageRepository', repositoryProblem);

  const watchNamespaces = c.names('watchNamespaces', raw.watchNamespaces);
  const imagePullSecrets = c.names('imagePullSecrets', raw.imagePullSecrets);
  const resources = parseResources(c, raw.resources);
  const instances = parseInstances(c, raw.instances, watchNamespaces);
  const createNamespaces = c.boolean('createNamespaces', raw.createNamespaces, true);
  const retainCrdsOnDelete = c.boolean('retainCrdsOnDelete', raw.retainCrdsOnDelete, false);

  if (c.errors.length > 0) throw new ValidationError('sampledb-operator stack config', c.errors);
  return {
    namespace,
    image,
    replicas,
    logLevel,
    postgresImageRepository,
    watchNamespaces,
    ...(resources ? { resources } : {}),
    instances,
    createNamespaces,
    retainCrdsOnDelete,
    imagePullSecrets,
  };
}

/** Namespaces the stack creates when `createNamespaces` is on: watched and instance namespaces but the operator's. */
export function namespacesToCreate(config: StackConfig): string[] {
  if (!config.createNamespaces) return [];
  const names = new Set([...config.watchNamespaces, ...config.instances.map((i) => i.namespace)]);
  names.delete(config.namespace);
  return [...names].sort();
}
