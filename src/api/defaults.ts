// Defaults. Schema defaults (`default:` in the CRD) are applied by the apiserver; `resolveSampleDbSpec` applies the
// same ones in TypeScript, plus the defaults that are deliberately not stored (resources), so the controller and
// the constructs work with a fully specified spec.
import { Value } from '@sinclair/typebox/value';
import { compareQuantities } from './quantity.ts';
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
}

/** The image for a spec: the override, or the official postgres image for the version. */
export function imageFor(spec: Pick<SampleDbSpec, 'version' | 'image'>): string {
  return spec.image ?? `${DEFAULT_IMAGE_REPOSITORY}:${spec.version}`;
}

/** The major version of a version string ("16.4" → 16). */
export function majorVersion(version: string): number {
  return Number.parseInt(version.split('.')[0] ?? '', 10);
}

export function resolveSampleDbSpec(spec: SampleDbSpec): ResolvedSampleDbSpec {
  const withSchemaDefaults = Value.Default(SampleDbSpecSchema, structuredClone(spec)) as SampleDbSpec;
  const resources = withSchemaDefaults.resources;
  const requests = { ...DEFAULT_RESOURCES.requests, ...resources?.requests };
  // The default memory limit never undercuts a larger request the user asked for.
  const defaultMemoryLimit =
    compareQuantities(requests.memory, DEFAULT_RESOURCES.limits.memory) > 0
      ? requests.memory
      : DEFAULT_RESOURCES.limits.memory;
  return {
    ...(withSchemaDefaults as unknown as ResolvedSampleDbSpec),
    image: imageFor(withSchemaDefaults),
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
