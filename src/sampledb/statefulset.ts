// The StatefulSet that runs PostgreSQL: one replica, data on a PVC from spec.storage, settings from the config
// ConfigMap, PodSecurity "restricted".
import type {
  V1Container,
  V1PodSpec,
  V1Probe,
  V1ResourceRequirements,
  V1StatefulSet,
} from '@kubernetes/client-node';
import {
  ANNOTATIONS,
  CONTAINERS,
  POSTGRES_PORT,
  POSTGRES_PORT_NAME,
  type ResolvedSampleDbSpec,
} from '../api/index.ts';
import { PASSWORD_KEY, USERNAME_KEY } from './credentials.ts';
import { exporterContainers } from './exporter.ts';
import type { SampleDbInstance } from './instance.ts';
import { childMeta } from './meta.ts';
import { POSTGRESQL_CONF_KEY } from './names.ts';
import { literalEnv, scratchVolume, secretEnv, TMP_MOUNT, TMP_VOLUME } from './pod.ts';
import {
  CONFIG_FILE,
  CONFIG_MOUNT_PATH,
  DATA_MOUNT_PATH,
  PGDATA,
  postgresConfig,
  SOCKET_DIRECTORY,
} from './postgres-config.ts';
import { replicated, replicatedPodSpec, statefulSetReplicas } from './replication/objects.ts';
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from './security.ts';
import { databaseSelector } from './services.ts';

/** Replicated SampleDBs (instances > 1) get the start script and the election record; others run as before. */
const withReplication = (instance: SampleDbInstance, spec: V1PodSpec): V1PodSpec =>
  replicated(instance) ? replicatedPodSpec(instance, spec, CONTAINERS.postgres) : spec;

/** Enough for a fast shutdown (checkpoint) of a busy server; the preStop hook asks for one. */
export const TERMINATION_GRACE_PERIOD_SECONDS = 120;
const FAST_SHUTDOWN_TIMEOUT_SECONDS = TERMINATION_GRACE_PERIOD_SECONDS - 10;

// Over TCP on loopback: during first initialisation the image's entrypoint runs a temporary server on the socket
// only, so "ready" means the real server is up. -U keeps the server log free of unknown-role noise.
const PG_ISREADY = `pg_isready -q -h 127.0.0.1 -p ${POSTGRES_PORT} -U "$POSTGRES_USER"`;

function execProbe(script: string, periodSeconds: number, failureThreshold: number): V1Probe {
  return { exec: { command: ['sh', '-c', script] }, periodSeconds, failureThreshold, timeoutSeconds: 5 };
}

/** Ready: accepting connections. */
export const readinessProbe = (): V1Probe => execProbe(`exec ${PG_ISREADY}`, 10, 3);
/**
 * Alive: the postmaster answers, even if only to say it is starting or shutting down (exit 1): a long crash
 * recovery must not get the pod killed. Only no answer at all (exit 2) counts as dead.
 */
export const livenessProbe = (): V1Probe => execProbe(`${PG_ISREADY}; [ $? -ne 2 ]`, 10, 6);
/**
 * Up to 30 minutes for initdb, crash recovery or a restore before liveness takes over. Every second: the pod is
 * Ready (and so the init Job's record, the client Service's endpoints and the Ready phase) within a second of the
 * server accepting connections, not up to ten seconds later; the probe runs only until it first succeeds.
 */
export const startupProbe = (): V1Probe => execProbe(`exec ${PG_ISREADY}`, 1, 1800);

function resourcesOf(spec: ResolvedSampleDbSpec): V1ResourceRequirements {
  const defined = (values: { cpu?: string; memory?: string }) =>
    Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as Record<string, string>;
  return { requests: defined(spec.resources.requests), limits: defined(spec.resources.limits) };
}

function postgresContainer(instance: SampleDbInstance): V1Container {
  const { spec } = instance;
  // The entrypoint creates the superuser from these at initdb; the owner role is the init Job's, from the
  // credentials Secret, and has no superuser rights.
  const secret = instance.names.superuserSecret;
  return {
    name: CONTAINERS.postgres,
    image: spec.image,
    imagePullPolicy: 'IfNotPresent',
    // The image's entrypoint prepends `postgres` to arguments starting with "-".
    args: ['-c', `config_file=${CONFIG_FILE}`],
    ports: [{ name: POSTGRES_PORT_NAME, containerPort: POSTGRES_PORT, protocol: 'TCP' }],
    env: [
      ...literalEnv({ PGDATA }),
      secretEnv('POSTGRES_USER', secret, USERNAME_KEY),
      secretEnv('POSTGRES_PASSWORD', secret, PASSWORD_KEY),
      ...literalEnv({ POSTGRES_DB: spec.bootstrap.database }),
    ],
    resources: resourcesOf(spec),
    securityContext: restrictedContainerSecurityContext(),
    startupProbe: startupProbe(),
    readinessProbe: readinessProbe(),
    livenessProbe: livenessProbe(),
    lifecycle: {
      // SIGTERM means a "smart" shutdown, which waits for every client to disconnect and so usually ends in
      // SIGKILL and crash recovery. A fast shutdown ends sessions and checkpoints.
      preStop: {
        exec: {
          command: [
            'sh',
            '-c',
            `exec pg_ctl stop -D "$PGDATA" -m fast -w -t ${FAST_SHUTDOWN_TIMEOUT_SECONDS}`,
          ],
        },
      },
    },
    terminationMessagePolicy: 'FallbackToLogsOnError',
    volumeMounts: [
      { name: instance.names.dataVolumeClaimTemplate, mountPath: DATA_MOUNT_PATH },
      { name: 'config', mountPath: CONFIG_MOUNT_PATH, readOnly: true },
      { name: 'run', mountPath: SOCKET_DIRECTORY },
      { name: 'shm', mountPath: '/dev/shm' },
      TMP_MOUNT,
    ],
  };
}

export function statefulSet(instance: SampleDbInstance): V1StatefulSet {
  const { spec, names } = instance;
  const config = postgresConfig(spec);
  const podLabels = { ...instance.labels.database };
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: childMeta(instance, names.statefulSet, 'database'),
    spec: {
      replicas: statefulSetReplicas(instance),
      serviceName: names.headlessService,
      selector: { matchLabels: databaseSelector(instance) },
      podManagementPolicy: 'OrderedReady',
      updateStrategy: { type: 'RollingUpdate' },
      revisionHistoryLimit: 5,
      // The operator deletes the data PVCs itself, and only after the deletion policy's snapshot or backup.
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
      template: {
        metadata: {
          labels: podLabels,
          annotations: {
            [ANNOTATIONS.configHash]: config.hash,
            'kubectl.kubernetes.io/default-container': CONTAINERS.postgres,
          },
        },
        spec: withReplication(instance, {
          securityContext: restrictedPodSecurityContext(),
          automountServiceAccountToken: false,
          // Service links would inject <NAME>_PORT-style variables, which can collide with what the image reads.
          enableServiceLinks: false,
          terminationGracePeriodSeconds: TERMINATION_GRACE_PERIOD_SECONDS,
          containers: [postgresContainer(instance), ...exporterContainers(instance.object)],
          volumes: [
            {
              name: 'config',
              configMap: {
                name: names.configConfigMap,
                items: [{ key: POSTGRESQL_CONF_KEY, path: POSTGRESQL_CONF_KEY }],
              },
            },
            scratchVolume('run', '16Mi'),
            scratchVolume(TMP_VOLUME, '256Mi'),
            // Parallel queries use POSIX shared memory; a container's default /dev/shm is 64MB.
            { name: 'shm', emptyDir: { medium: 'Memory', sizeLimit: '256Mi' } },
          ],
        }),
      },
      volumeClaimTemplates: [
        {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: { name: names.dataVolumeClaimTemplate, labels: { ...instance.labels.database } },
          spec: {
            accessModes: ['ReadWriteOnce'],
            resources: { requests: { storage: spec.storage.size } },
            ...(spec.storage.storageClassName ? { storageClassName: spec.storage.storageClassName } : {}),
          },
        },
      ],
    },
  };
}
