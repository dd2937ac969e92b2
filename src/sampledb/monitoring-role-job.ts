// The monitoring role Job: runs scripts/monitoring-role.ts against the database pod, as the superuser, with the
// monitoring Secret's password. One Job per monitoring Secret (its name carries a hash of the Secret's uid): a
// Secret deleted and generated anew gets its password into the role by a new Job; a finished Job is the record.
import { createHash } from 'node:crypto';
import type { V1Job } from '@kubernetes/client-node';
import { type OperatorDefaults, resolveSampleDbSpec, type SampleDbObject } from '../api/index.ts';
import { PASSWORD_KEY } from './credentials.ts';
import { MONITORING_PASSWORD_ENV, MONITORING_ROLE, monitoringSecretName } from './exporter.ts';
import { childMeta, labelsFor, nameOf } from './meta.ts';
import { boundedName } from './names.ts';
import {
  DATABASE_PORT,
  databasePodHost,
  JOB_RESOURCES,
  literalEnv,
  scratchVolume,
  secretEnv,
  superuserEnv,
  TMP_MOUNT,
  TMP_VOLUME,
} from './pod.ts';
import { MONITORING_ROLE_SCRIPT, monitoringRoleScriptEnv } from './scripts/monitoring-role.ts';
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from './security.ts';

export const MONITORING_ROLE_CONTAINER = 'monitoring-role';

export function monitoringRoleJobName(db: SampleDbObject, secretUid: string): string {
  const hash = createHash('sha256').update(secretUid).digest('hex').slice(0, 8);
  return boundedName(nameOf(db), `monitoring-${hash}`);
}

export function monitoringRoleJob(
  db: SampleDbObject,
  secretUid: string,
  defaults: OperatorDefaults = {},
): V1Job {
  const spec = resolveSampleDbSpec(db.spec, defaults);
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: childMeta(db, monitoringRoleJobName(db, secretUid), 'init'),
    spec: {
      backoffLimit: 3,
      activeDeadlineSeconds: 900,
      template: {
        metadata: { labels: labelsFor(db, 'init') },
        spec: {
          restartPolicy: 'Never',
          securityContext: restrictedPodSecurityContext(),
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          containers: [
            {
              name: MONITORING_ROLE_CONTAINER,
              // The database's own image: its psql matches the server.
              image: spec.image,
              imagePullPolicy: 'IfNotPresent',
              command: ['sh', '-c', MONITORING_ROLE_SCRIPT],
              env: [
                ...literalEnv(
                  monitoringRoleScriptEnv({
                    host: databasePodHost(db),
                    port: DATABASE_PORT,
                    role: MONITORING_ROLE,
                  }),
                ),
                ...superuserEnv(db),
                secretEnv(MONITORING_PASSWORD_ENV, monitoringSecretName(db), PASSWORD_KEY),
              ],
              resources: JOB_RESOURCES,
              securityContext: restrictedContainerSecurityContext(),
              terminationMessagePolicy: 'FallbackToLogsOnError',
              volumeMounts: [TMP_MOUNT],
            },
          ],
          volumes: [scratchVolume(TMP_VOLUME)],
        },
      },
    },
  };
}
