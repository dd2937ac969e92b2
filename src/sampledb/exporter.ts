// The postgres_exporter sidecar (spec.monitoring.exporter) and the Secret of the role it logs in as. Pure builders:
// the StatefulSet builder appends `exporterContainers(db)`, steps/monitoring.ts creates `monitoringSecret(db)` and
// then the role Job (monitoring-role-job.ts).
import { randomInt } from 'node:crypto';
import type { V1Container, V1Secret } from '@kubernetes/client-node';
import { DEFAULT_EXPORTER_IMAGE, POSTGRES_PORT, type SampleDbObject } from '../api/index.ts';
import { generatedRoleSecret, PASSWORD_KEY, type RandomInt, USERNAME_KEY } from './credentials.ts';
import type { SampleDbInstance } from './instance.ts';
import { namesFor } from './names.ts';
import { literalEnv, secretEnv } from './pod.ts';
import { restrictedContainerSecurityContext } from './security.ts';

export const EXPORTER_CONTAINER = 'exporter';
/** postgres_exporter's registered default port. */
export const EXPORTER_PORT = 9187;
/** The container port's name; the PodMonitor scrapes the port of this name. */
export const EXPORTER_PORT_NAME = 'metrics';
/**
 * The role the exporter logs in as: a member of pg_monitor (read access to the statistics views and settings) and
 * of nothing else; it owns nothing and may not create anything.
 */
export const MONITORING_ROLE = 'sampledb_monitor';
/** The role Job's env var carrying the role's password (from the monitoring Secret). */
export const MONITORING_PASSWORD_ENV = 'SAMPLEDB_MONITOR_PASSWORD';

export function exporterEnabled(db: SampleDbObject): boolean {
  return db.spec.monitoring?.exporter?.enabled === true;
}

export function exporterImage(db: SampleDbObject): string {
  return db.spec.monitoring?.exporter?.image ?? DEFAULT_EXPORTER_IMAGE;
}

export function monitoringSecretName(db: SampleDbObject): string {
  return namesFor(db.metadata.name ?? '').monitoringSecret;
}

/**
 * The desired monitoring Secret, or `undefined` when the exporter is off. Like the credentials Secret, a password
 * already in `existing` is kept: the role in the database has it.
 */
export function monitoringSecret(
  instance: SampleDbInstance,
  existing: V1Secret | undefined,
  random: RandomInt = randomInt,
): V1Secret | undefined {
  if (!exporterEnabled(instance.object)) return undefined;
  return generatedRoleSecret(instance, instance.names.monitoringSecret, MONITORING_ROLE, existing, random);
}

/** The sidecar, or none. It has no readiness probe on purpose: a failing exporter must not take the database out of its Service. */
export function exporterContainers(db: SampleDbObject): V1Container[] {
  if (!exporterEnabled(db)) return [];
  const secret = monitoringSecretName(db);
  return [
    {
      name: EXPORTER_CONTAINER,
      image: exporterImage(db),
      imagePullPolicy: 'IfNotPresent',
      args: [`--web.listen-address=:${EXPORTER_PORT}`],
      ports: [{ name: EXPORTER_PORT_NAME, containerPort: EXPORTER_PORT, protocol: 'TCP' }],
      env: [
        // Over loopback TCP: pg_hba.conf's `host all all all scram-sha-256` applies, the password is checked.
        ...literalEnv({ DATA_SOURCE_URI: `127.0.0.1:${POSTGRES_PORT}/postgres?sslmode=disable` }),
        secretEnv('DATA_SOURCE_USER', secret, USERNAME_KEY),
        secretEnv('DATA_SOURCE_PASS', secret, PASSWORD_KEY),
      ],
      resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { memory: '128Mi' } },
      securityContext: restrictedContainerSecurityContext(),
      // The landing page answers without querying the database: alive means the HTTP server is.
      livenessProbe: {
        httpGet: { path: '/', port: EXPORTER_PORT_NAME },
        periodSeconds: 30,
        failureThreshold: 3,
        timeoutSeconds: 5,
      },
      terminationMessagePolicy: 'FallbackToLogsOnError',
    },
  ];
}
