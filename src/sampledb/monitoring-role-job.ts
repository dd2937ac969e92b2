// The monitoring role Job: runs scripts/monitoring-role.ts against the database pod, as the superuser, with the
// monitoring Secret's password. One Job per monitoring Secret (its name carries a hash of the Secret's uid): a
// Secret deleted and generated anew gets its password into the role by a new Job; a finished Job is the record.
import { createHash } from 'node:crypto';
import type { V1Job } from '@kubernetes/client-node';
import { POSTGRES_PORT } from '../api/index.ts';
import { PASSWORD_KEY } from './credentials.ts';
import { MONITORING_PASSWORD_ENV, MONITORING_ROLE } from './exporter.ts';
import type { SampleDbInstance } from './instance.ts';
import { childMeta } from './meta.ts';
import { boundedName } from './names.ts';
import { literalEnv, scriptJobPodSpec, secretEnv, superuserEnv } from './pod.ts';
import { MONITORING_ROLE_SCRIPT, monitoringRoleScriptEnv } from './scripts/monitoring-role.ts';

export const MONITORING_ROLE_CONTAINER = 'monitoring-role';

export function monitoringRoleJobName(sampleDbName: string, secretUid: string): string {
  const hash = createHash('sha256').update(secretUid).digest('hex').slice(0, 8);
  return boundedName(sampleDbName, `monitoring-${hash}`);
}

export function monitoringRoleJob(instance: SampleDbInstance, secretUid: string): V1Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: childMeta(instance, monitoringRoleJobName(instance.name, secretUid), 'init'),
    spec: {
      backoffLimit: 3,
      activeDeadlineSeconds: 900,
      template: {
        metadata: { labels: { ...instance.labels.init } },
        spec: scriptJobPodSpec({
          name: MONITORING_ROLE_CONTAINER,
          image: instance.spec.image,
          script: MONITORING_ROLE_SCRIPT,
          env: [
            ...literalEnv(
              monitoringRoleScriptEnv({ host: instance.podHost, port: POSTGRES_PORT, role: MONITORING_ROLE }),
            ),
            ...superuserEnv(instance),
            secretEnv(MONITORING_PASSWORD_ENV, instance.names.monitoringSecret, PASSWORD_KEY),
          ],
        }),
      },
    },
  };
}
