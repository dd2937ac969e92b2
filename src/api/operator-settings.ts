// The environment-variable contract between the operator's Deployment (rendered by the SampleDbOperator construct)
// and the controller process (parsed by src/main.ts). Each setting is declared once: its variable, its default,
// how a value is written into the Deployment and how the controller reads it back. A default here is what the
// controller does when the variable is absent; the construct's props default to the same values (except
// leaderElection, which a two-replica Deployment turns on).
import { imageRepositoryProblem } from './defaults.ts';
import { DEFAULT_IMAGE_REPOSITORY } from './sampledb.ts';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** One variable: `parse` gets a set, non-empty value (unset and empty both mean the default) and throws on junk. */
export interface OperatorSetting<T> {
  readonly env: string;
  readonly default: T;
  readonly render: (value: T) => string;
  readonly parse: (raw: string) => T;
}

const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function namespaceList(raw: string): readonly string[] {
  const names = raw
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const invalid = names.filter((n) => !NAMESPACE_NAME.test(n));
  if (invalid.length > 0) throw new Error(`not namespace names: ${invalid.join(', ')}`);
  return [...new Set(names)];
}

function port(raw: string): number {
  const parsed = Number(raw);
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 65535) throw new Error(`"${raw}" is not a port`);
  return parsed;
}

function logLevel(raw: string): LogLevel {
  const level = LOG_LEVELS.find((l) => l === raw);
  if (!level) throw new Error(`"${raw}" is not one of ${LOG_LEVELS.join(', ')}`);
  return level;
}

function imageRepository(raw: string): string {
  const problem = imageRepositoryProblem(raw);
  if (problem) throw new Error(problem);
  return raw;
}

const setting = <T>(s: OperatorSetting<T>): OperatorSetting<T> => s;

/** The settings the Deployment writes from values, in the order its container lists them. */
export const OPERATOR_SETTINGS = {
  /** "" (all namespaces: one cluster-wide watch, a ClusterRole) or a comma-separated list (Role-scoped RBAC). */
  watchNamespaces: setting<readonly string[]>({
    env: 'WATCH_NAMESPACES',
    default: [],
    render: (v) => v.join(','),
    parse: namespaceList,
  }),
  /** "true": elect a leader through the Lease in POD_NAMESPACE before reconciling. */
  leaderElection: setting<boolean>({
    env: 'LEADER_ELECTION',
    default: false,
    render: String,
    parse: (raw) => raw.toLowerCase() === 'true',
  }),
  logLevel: setting<LogLevel>({ env: 'LOG_LEVEL', default: 'info', render: String, parse: logLevel }),
  /** /metrics; 0 picks a free port. */
  metricsPort: setting<number>({ env: 'METRICS_PORT', default: 8080, render: String, parse: port }),
  /** /healthz, /readyz (and /metrics); 0 picks a free port. */
  healthPort: setting<number>({ env: 'HEALTH_PORT', default: 8081, render: String, parse: port }),
  /** Repository of the PostgreSQL images, tagged by version, for SampleDBs without spec.image. */
  postgresImageRepository: setting<string>({
    env: 'POSTGRES_IMAGE_REPOSITORY',
    default: DEFAULT_IMAGE_REPOSITORY,
    render: String,
    parse: imageRepository,
  }),
} as const;

type Settings = typeof OPERATOR_SETTINGS;
/** The values the Deployment renders, one per entry of {@link OPERATOR_SETTINGS}. */
export type RenderedOperatorSettings = {
  readonly [K in keyof Settings]: Settings[K] extends OperatorSetting<infer T> ? T : never;
};

/** Variables the Deployment fills from the downward API rather than from a value. */
export const POD_IDENTITY_ENV = {
  /** This replica's identity in the Lease (without it: hostname + random). */
  podName: { env: 'POD_NAME', fieldPath: 'metadata.name' },
  /** Where the Lease lives. */
  podNamespace: { env: 'POD_NAMESPACE', fieldPath: 'metadata.namespace' },
} as const;

/** A kubeconfig file; without it the controller uses its in-cluster ServiceAccount. Never set by the Deployment. */
export const KUBECONFIG_ENV = 'KUBECONFIG';

export interface OperatorSettings {
  kubeconfigPath: string | undefined;
  namespaces: string[];
  leaderElection: { namespace: string; identity: string | undefined } | undefined;
  logLevel: LogLevel;
  healthPort: number;
  metricsPort: number;
  postgresImageRepository: string;
}

/** The `name=value` pairs for the values, in {@link OPERATOR_SETTINGS} order. */
export function renderOperatorSettings(values: RenderedOperatorSettings): { name: string; value: string }[] {
  return (Object.keys(OPERATOR_SETTINGS) as (keyof Settings)[]).map((key) => {
    const s = OPERATOR_SETTINGS[key] as OperatorSetting<unknown>;
    return { name: s.env, value: s.render(values[key]) };
  });
}

type Env = Readonly<Record<string, string | undefined>>;

function read<T>(env: Env, s: OperatorSetting<T>): T {
  const raw = env[s.env];
  if (raw === undefined || raw === '') return s.default;
  try {
    return s.parse(raw);
  } catch (err) {
    throw new Error(`${s.env}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The controller's settings from its environment; throws naming the variable that is wrong. */
export function parseOperatorSettings(env: Env): OperatorSettings {
  const s = OPERATOR_SETTINGS;
  const leaderElection = read(env, s.leaderElection);
  const podName = env[POD_IDENTITY_ENV.podName.env] || undefined;
  const podNamespace = env[POD_IDENTITY_ENV.podNamespace.env] || undefined;
  if (leaderElection && !podNamespace) {
    throw new Error(`${s.leaderElection.env}=true needs ${POD_IDENTITY_ENV.podNamespace.env} for the Lease`);
  }
  return {
    kubeconfigPath: env[KUBECONFIG_ENV] || undefined,
    namespaces: [...read(env, s.watchNamespaces)],
    leaderElection:
      leaderElection && podNamespace ? { namespace: podNamespace, identity: podName } : undefined,
    logLevel: read(env, s.logLevel),
    healthPort: read(env, s.healthPort),
    metricsPort: read(env, s.metricsPort),
    postgresImageRepository: read(env, s.postgresImageRepository),
  };
}
