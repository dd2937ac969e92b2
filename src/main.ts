// The composition root: the only place that reads the environment. Builds the Manager, registers the SampleDB
// controllers and runs until SIGTERM/SIGINT, then drains in-flight reconciles, releases the Lease and exits 0.
//
// Its environment is the contract in src/api/operator-settings.ts (the Deployment of src/constructs/operator.ts
// renders it): WATCH_NAMESPACES, LEADER_ELECTION, LOG_LEVEL, METRICS_PORT, HEALTH_PORT, POSTGRES_IMAGE_REPOSITORY,
// POD_NAME and POD_NAMESPACE from the downward API, and KUBECONFIG outside a cluster.
import packageJson from '../package.json' with { type: 'json' };
import {
  LEADER_ELECTION_LEASE,
  OPERATOR_NAME,
  type OperatorSettings,
  parseOperatorSettings,
} from './api/index.ts';
import {
  type ClusterAccess,
  createLogger,
  describeError,
  HealthServer,
  inClusterAccess,
  isStatus,
  kubeconfigFileAccess,
  type Logger,
  Manager,
} from './runtime/index.ts';
import { registerSampleDbControllers } from './sampledb/controllers.ts';
import { SNAPSHOT_GROUP } from './sampledb/resources.ts';

/** The controller's settings from its environment (the contract's parser, under the name the tests know). */
export const settingsFrom = parseOperatorSettings;

// Not client-node's KubeConfig: loading it costs the process about 100 MB of RSS (ADR 0010).
function clusterAccessFor(settings: OperatorSettings): Promise<ClusterAccess> {
  return settings.kubeconfigPath
    ? kubeconfigFileAccess(settings.kubeconfigPath)
    : Promise.resolve(inClusterAccess());
}

/** Whether the cluster serves the VolumeSnapshot API; watching a resource it does not serve would never sync. */
async function servesSnapshots(manager: Manager, log: Logger): Promise<boolean> {
  try {
    await manager.http.request('GET', `/apis/${SNAPSHOT_GROUP}/v1`);
    return true;
  } catch (err) {
    if (isStatus(err, 404)) return false;
    log.warn(
      { err: describeError(err) },
      'could not discover the snapshot API; final backups will use pg_dump',
    );
    return false;
  }
}

export async function runOperator(settings: OperatorSettings, logger: Logger): Promise<void> {
  const manager = new Manager({
    kubeConfig: await clusterAccessFor(settings),
    logger,
    // The runtime is generic; the operator names itself (its field manager must never change: server-side apply
    // ownership of every field it wrote hangs on it).
    fieldManager: OPERATOR_NAME,
    userAgent: `${OPERATOR_NAME}/${packageJson.version}`,
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
    operator: {
      leaderElection: Boolean(settings.leaderElection),
      ...(settings.leaderElection ? { namespace: settings.leaderElection.namespace } : {}),
    },
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
    logger.fatal({ err: describeError(err, { stack: true }) }, 'sampledb-operator failed');
    process.exit(1);
  }
}

if (import.meta.main) await main();
