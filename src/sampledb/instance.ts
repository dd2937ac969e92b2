// One SampleDB, resolved once per reconcile: the spec with every default applied, the names of its children, their
// labels, where clients and the Jobs reach it, and which Secret and backup claim it uses. Every builder, the status
// and the Pulumi component take this instead of working it out again from the raw object.
import {
  APP_NAME,
  LABELS,
  OPERATOR_NAME,
  type OperatorDefaults,
  type ResolvedSampleDbSpec,
  resolveSampleDbSpec,
  type SampleDbObject,
  serviceHost,
} from '../api/index.ts';
import { namesFor, type SampleDbNames } from './names.ts';

export const COMPONENTS = [
  'database',
  'init',
  'backup',
  'restore',
  'credentials',
  'connection',
  'binding',
  'config',
  'upgrade',
  'drill',
] as const;
export type Component = (typeof COMPONENTS)[number];

export type Labels = Readonly<Record<string, string>>;

/** Where clients connect: the client Service. */
export interface Endpoint {
  host: string;
  port: number;
  database: string;
  username: string;
}

export interface SampleDbInstance {
  /** The SampleDB as read from the cache at the start of the reconcile. */
  readonly object: SampleDbObject;
  readonly name: string;
  readonly namespace: string;
  /** The spec with the schema's and the operator's defaults applied. */
  readonly spec: ResolvedSampleDbSpec;
  readonly names: SampleDbNames;
  /** Selects every child of this SampleDB, whatever its component (for list/watch). */
  readonly selector: Labels;
  /** The labels of the children of each component; `labels.database` also selects the database pod. */
  readonly labels: Readonly<Record<Component, Labels>>;
  /** The client Service's cluster DNS name (without the cluster domain, which varies) and what to log in to. */
  readonly endpoint: Readonly<Endpoint>;
  /**
   * The pod the Jobs and the Ready condition follow: the elected primary (`status.replication.primary`) with
   * replicas, otherwise (one instance, or before the first election) pod 0, and its data claim.
   */
  readonly primary: { readonly pod: string; readonly dataPvc: string };
  /** The primary pod's stable address through the headless Service: reachable before it is Ready. */
  readonly podHost: string;
  readonly credentials: {
    /** The Secret the pod and the Jobs read `username`/`password` from: the user's, or the generated one. */
    readonly secretName: string;
    /** Whether the operator generates that Secret (no `bootstrap.credentialsSecret`). */
    readonly generated: boolean;
  };
  readonly backupClaim: {
    /** The PVC backups are written to: the user's `backup.volume.claimName`, or the operator's own. */
    readonly name: string;
    /** Whether the operator creates (and under policy Delete removes) it. */
    readonly operatorOwned: boolean;
  };
}

/** The Secret a SampleDB reads its credentials from: the user's `bootstrap.credentialsSecret`, or the generated one. */
export function credentialsSecretOf(db: SampleDbObject): string {
  return db.spec.bootstrap?.credentialsSecret?.name ?? namesFor(required(db)).generatedCredentialsSecret;
}

function required(db: SampleDbObject): string {
  const name = db.metadata.name;
  if (!name) throw new Error('SampleDB has no metadata.name');
  return name;
}

export function resolveInstance(db: SampleDbObject, defaults: OperatorDefaults = {}): SampleDbInstance {
  const name = required(db);
  const namespace = db.metadata.namespace ?? 'default';
  const spec = resolveSampleDbSpec(db.spec, defaults);
  const names = namesFor(name);
  const selector = { [LABELS.name]: APP_NAME, [LABELS.instance]: name, [LABELS.managedBy]: OPERATOR_NAME };
  const labelsOf = (component: Component): Labels => ({
    [LABELS.name]: APP_NAME,
    [LABELS.instance]: name,
    [LABELS.component]: component,
    [LABELS.managedBy]: OPERATOR_NAME,
  });
  const userClaim = db.spec.backup?.volume?.claimName;
  const primary = primaryOf(db, names);
  return {
    object: db,
    name,
    namespace,
    spec,
    names,
    selector,
    labels: Object.fromEntries(COMPONENTS.map((c) => [c, labelsOf(c)])) as Record<Component, Labels>,
    endpoint: {
      host: serviceHost(names.clientService, namespace),
      port: spec.service.port,
      database: spec.bootstrap.database,
      username: spec.bootstrap.owner,
    },
    primary,
    podHost: serviceHost(`${primary.pod}.${names.headlessService}`, namespace),
    credentials: {
      secretName: credentialsSecretOf(db),
      generated: db.spec.bootstrap?.credentialsSecret === undefined,
    },
    backupClaim: { name: userClaim ?? names.backupPvc, operatorOwned: !userClaim },
  };
}

/**
 * The elected primary, when the record names one of this StatefulSet's pods; pod 0 otherwise (one instance that was
 * never replicated, or before the first election).
 */
export function primaryOf(db: SampleDbObject, names: SampleDbNames): { pod: string; dataPvc: string } {
  const elected = db.status?.replication?.primary;
  const ordinal = elected?.startsWith(`${names.statefulSet}-`)
    ? Number(elected.slice(names.statefulSet.length + 1))
    : Number.NaN;
  if (!Number.isInteger(ordinal) || ordinal < 0) return { pod: names.pod, dataPvc: names.dataPvc };
  return {
    pod: `${names.statefulSet}-${ordinal}`,
    dataPvc: `${names.dataVolumeClaimTemplate}-${names.statefulSet}-${ordinal}`,
  };
}

/** `host:port` for `status.endpoint`. */
export function endpointString(instance: SampleDbInstance): string {
  return `${instance.endpoint.host}:${instance.endpoint.port}`;
}
