// Defaults. Schema defaults (`default:` in the CRD) are applied by the apiserver; `resolveSampleDbSpec` applies the
// same ones in TypeScript, plus the defaults that are deliberately not stored (resources), so the controller and
// the constructs work with a fully specified spec.
import { Value } from '@sinclair/typebox/value';
import { IMAGE_REPOSITORY_PATTERN } from './formats.ts';
import { compareQuantities, parseQuantity } from './quantity.ts';
import { DEFAULT_IMAGE_REPOSITORY, type SampleDbSpec, SampleDbSpecSchema } from './sampledb.ts';

/** Resources used when the spec gives none. Not stored in the object, so changing them is an operator upgrade. */
export const DEFAULT_RESOURCES = {
  requests: { cpu: '100m', memory: '256Mi' },
  limits: { memory: '1Gi' },
} as const;

type Spec = SampleDbSpec;
type NonNull<T> = Exclude<T, undefined>;

/** A SampleDB spec with every default filled in. */
export interface ResolvedSampleDbSpec {
  version: string;
  image: string;
  storage: Spec['storage'];
  resources: { requests: { cpu?: string; memory?: string }; limits: { cpu?: string; memory?: string } };
  postgresql: { parameters: Record<string, string> };
  service: Required<Pick<NonNull<Spec['service']>, 'type' | 'port'>> & {
    annotations: Record<string, string>;
  };
  bootstrap: Required<Pick<NonNull<Spec['bootstrap']>, 'database' | 'owner'>> &
    Omit<NonNull<Spec['bootstrap']>, 'database' | 'owner' | 'initSQL'> & {
      initSQL?: { name: string; key: string };
    };
  backup?: NonNull<Spec['backup']> & { suspend: boolean };
  deletion: Required<NonNull<Spec['deletion']>>;
  instances: number;
  replication: Required<NonNull<Spec['replication']>>;
}

/**
 * The image for a spec: the override, or `<repository>:<version>` where the repository is the operator's PostgreSQL
 * image repository setting (default: the official postgres image), so mirrors and air-gapped registries work.
 */
export function imageFor(
  spec: Pick<SampleDbSpec, 'version' | 'image'>,
  repository: string = DEFAULT_IMAGE_REPOSITORY,
): string {
  return spec.image ?? `${repository}:${spec.version}`;
}

const IMAGE_REPOSITORY = new RegExp(IMAGE_REPOSITORY_PATTERN);

/** Why `value` is not a PostgreSQL image repository (e.g. "registry.example.com:5000/mirror/postgres"), if it is not. */
export function imageRepositoryProblem(value: string): string | undefined {
  if (value.includes('@'))
    return `must be a repository without a digest (the tag is the SampleDB's version), got "${value}"`;
  if (value.slice(value.lastIndexOf('/') + 1).includes(':'))
    return `must be a repository without a tag (the tag is the SampleDB's version), got "${value}"`;
  if (!IMAGE_REPOSITORY.test(value))
    return `is not an image repository (e.g. docker.io/library/postgres), got "${value}"`;
  return undefined;
}

/** The major version of a version string ("16.4" → 16). */
export function majorVersion(version: string): number {
  return Number.parseInt(version.split('.')[0] ?? '', 10);
}

export interface OperatorDefaults {
  /** Repository of the PostgreSQL images when `spec.image` is not set. Default: docker.io/library/postgres. */
  readonly imageRepository?: string;
}

/** `value`, or `cap` when that is a smaller quantity. */
function atMost(value: string, cap: string | undefined): string {
  const capValue = cap === undefined ? undefined : parseQuantity(cap);
  return capValue !== undefined && capValue < (parseQuantity(value) ?? 0) ? (cap as string) : value;
}

export function resolveSampleDbSpec(
  spec: SampleDbSpec,
  defaults: OperatorDefaults = {},
): ResolvedSampleDbSpec {
  const withSchemaDefaults = Value.Default(SampleDbSpecSchema, structuredClone(spec)) as SampleDbSpec;
  const resources = withSchemaDefaults.resources;
  // A default request never exceeds a limit the user set (the Pod's validation refuses requests above limits).
  const requests = {
    cpu: atMost(DEFAULT_RESOURCES.requests.cpu, resources?.limits?.cpu),
    memory: atMost(DEFAULT_RESOURCES.requests.memory, resources?.limits?.memory),
    ...resources?.requests,
  };
  // The default memory limit never undercuts a larger request the user asked for.
  const defaultMemoryLimit =
    compareQuantities(requests.memory, DEFAULT_RESOURCES.limits.memory) > 0
      ? requests.memory
      : DEFAULT_RESOURCES.limits.memory;
  return {
    ...(withSchemaDefaults as unknown as ResolvedSampleDbSpec),
    image: imageFor(withSchemaDefaults, defaults.imageRepository),
    resources: {
      requests,
      limits: { memory: defaultMemoryLimit, ...resources?.limits },
    },
    postgresql: { parameters: { ...withSchemaDefaults.postgresql?.parameters } },
    service: {
      ...(withSchemaDefaults.service as ResolvedSampleDbSpec['service']),
      annotations: { ...withSchemaDefaults.service?.annotations },
    },
  };
}
