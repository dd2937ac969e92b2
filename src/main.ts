// The composition root: the only place that reads the environment. Builds the Manager, registers the SampleDB
// controllers and runs until SIGTERM/SIGINT, then drains in-flight reconciles, releases the Lease and exits 0.
//
// Environment (set by the Deployment in src/constructs/operator.ts):
//   KUBECONFIG         a kubeconfig file; without it, the in-cluster ServiceAccount
//   WATCH_NAMESPACES   "" (all namespaces) or a comma-separated list (one watch per namespace, Role-scoped RBAC)
//   LEADER_ELECTION    "true" to elect a leader through the Lease in POD_NAMESPACE (default false)
//   POD_NAME           this replica's identity in the Lease (default: hostname + random)
//   POD_NAMESPACE      where the Lease lives
//   LOG_LEVEL          pino level (default info)
//   HEALTH_PORT        /healthz, /readyz (and /metrics) (default 8081; 0 picks a free port)
//   METRICS_PORT       /metrics (default 8080; 0 picks a free port)
//   POSTGRES_IMAGE_REPOSITORY  repository of the PostgreSQL images, tagged by version, for SampleDBs without
//                      spec.image (default docker.io/library/postgres): a mirror, or an air-gapped registry
import { HttpMethod, KubeConfig } from '@kubernetes/client-node';
import { DEFAULT_IMAGE_REPOSITORY, imageRepositoryProblem, LEADER_ELECTION_LEASE } from './api/index.ts';
import { createLogger, HealthServer, isStatus, type Logger, Manager } from './runtime/index.ts';
import { registerSampleDbControllers } from './sampledb/controllers.ts';
import { SNAPSHOT_GROUP } from './sampledb/resources.ts';

export interface OperatorSettings {
  kubeconfigPath: string | undefined;
  namespaces: string[];
  leaderElection: { namespace: string; identity: string | undefined } | undefined;
  logLevel: string;
  healthPort: number;
  metricsPort: number;
  postgresImageRepository: string;
}

function port(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 65535)
    throw new Error(`${name}="${value}" is not a port`);
  return parsed;
}

export function settingsFrom(env: Readonly<Record<string, string | undefined>>): OperatorSettings {
  const namespaces = (env.WATCH_NAMESPACES ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const invalid = namespaces.filter((n) => !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(n));
  if (invalid.length > 0) throw new Error(`WATCH_NAMESPACES: not namespace names: ${invalid.join(', ')}`);
  const leaderElection = (env.LEADER_ELECTION ?? 'false').toLowerCase() === 'true';
  if (leaderElection && !env.POD_NAMESPACE)
    throw new Error('LEADER_ELECTION=true needs POD_NAMESPACE for the Lease');
  const postgresImageRepository = env.POSTGRES_IMAGE_REPOSITORY || DEFAULT_IMAGE_REPOSITORY;
  const repositoryProblem = imageRepositoryProblem(postgresImageRepository);
  if (repositoryProblem) throw new Error(`POSTGRES_IMAGE_REPOSITORY ${repositoryProblem}`);
  return {
    kubeconfigPath: env.KUBECONFIG || undefined,
    namespaces: [...new Set(namespaces)],
    leaderElection:
      leaderElection && env.POD_NAMESPACE
        ? { namespace: env.POD_NAMESPACE, identity: env.POD_NAME || undefined }
        : undefined,
    logLevel: env.LOG_LEVEL || 'info',
    healthPort: port(env.HEALTH_PORT, 8081, 'HEALTH_PORT'),
    metricsPort: port(env.METRICS_PORT, 8080, 'METRICS_PORT'),
    postgresImageRepository,
  };
}

function kubeConfigFor(settings: OperatorSettings): KubeConfig {
  const kc = new KubeConfig();
  if (settings.kubeconfigPath) kc.loadFromFile(settings.kubeconfigPath);
  else kc.loadFromCluster();
  return kc;
}

/** Whether the cluster serves the VolumeSnapshot API; watching a resource it does not serve would never sync. */
async function servesSnapshots(manager: Manager, log: Logger): Promise<boolean> {
  try {
    await manager.http.request(HttpMethod.GET, `/apis/${SNAPSHOT_GROUP}/v1`);
    return true;
  } catch (err) {
    if (isStatus(err, 404)) return false;
    log.warn({ err: String(err) }, 'could not discover the snapshot API; final backups will use pg_dump');
    return false;
  }
}

export async function runOperator(settings: OperatorSettings, logger: Logger): Promise<void> {
  const manager = new Manager({
    kubeConfig: kubeConfigFor(settings),
    logger,
    healthPort: settings.healthPort,
    namespaces: settings.namespaces,
    ...(settings.leaderElection
      ? {
          leaderElection: {
            namespace: settings.leaderElection.namespace,
            name: LEADER_ELECTION_LEASE,
            ...(settings.leaderElection.identity ? { identity: settings.leaderElection.identity } : {}),
          },
        }
      : {}),
  });
  const snapshots = await servesSnapshots(manager, logger);
  registerSampleDbControllers(manager, {
    snapshots,
    postgresImageRepository: settings.postgresImageRepository,
  });
  const removeHandlers = manager.installSignalHandlers();
  const metrics =
    settings.metricsPort !== settings.healthPort
      ? new HealthServer({ port: settings.metricsPort, registry: manager.registry })
      : undefined;
  const metricsPort = await metrics?.start();
  logger.info(
    {
      namespaces: settings.namespaces.length > 0 ? settings.namespaces : '(all)',
      leaderElection: Boolean(settings.leaderElection),
      snapshots,
      metricsPort,
      postgresImageRepository: settings.postgresImageRepository,
    },
    'sampledb-operator starting',
  );
  try {
    await manager.start();
  } finally {
    removeHandlers();
    await metrics?.stop();
  }
}

async function main(): Promise<void> {
  let logger: Logger = createLogger();
  try {
    const settings = settingsFrom(process.env);
    logger = createLogger({ level: settings.logLevel });
    await runOperator(settings, logger);
    logger.info('sampledb-operator stopped');
    process.exit(0);
  } catch (err) {
    logger.fatal(
      { err: err instanceof Error ? (err.stack ?? err.message) : String(err) },
      'sampledb-operator failed',
    );
    process.exit(1);
  }
}

if (import.meta.main) await main();
