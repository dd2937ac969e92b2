// The version Job: runs scripts/version.ts against the database pod with the image the pod runs (so psql matches
// the server). One per image: a finished Job is the record of what that image's server reported. Its name carries a
// hash of the image, so a new image (a minor upgrade, a new digest, a major upgrade) gets a new report.
import { createHash } from 'node:crypto';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { ANNOTATIONS, CONTAINERS, POSTGRES_PORT } from '../api/index.ts';
import { PASSWORD_KEY } from './credentials.ts';
import type { SampleDbInstance } from './instance.ts';
import { childMeta } from './meta.ts';
import { boundedName } from './names.ts';
import { literalEnv, scriptJobPodSpec, secretEnv, superuserEnv } from './pod.ts';
import { VERSION_SCRIPT, versionScriptEnv } from './scripts/version.ts';

export const VERSION_CONTAINER = 'version';

export function versionJobName(sampleDbName: string, image: string): string {
  const hash = createHash('sha256').update(image).digest('hex').slice(0, 10);
  return boundedName(sampleDbName, `version-${hash}`);
}

export function versionJob(instance: SampleDbInstance, image: string): V1Job {
  const { spec } = instance;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: childMeta(instance, versionJobName(instance.name, image), 'upgrade', {
      annotations: { [ANNOTATIONS.image]: image },
    }),
    spec: {
      backoffLimit: 3,
      activeDeadlineSeconds: 900,
      template: {
        metadata: { labels: { ...instance.labels.upgrade } },
        spec: scriptJobPodSpec({
          name: VERSION_CONTAINER,
          image,
          script: VERSION_SCRIPT,
          env: [
            ...literalEnv(
              versionScriptEnv({
                host: instance.podHost,
                port: POSTGRES_PORT,
                database: spec.bootstrap.database,
                owner: spec.bootstrap.owner,
              }),
            ),
            ...superuserEnv(instance),
            secretEnv('SAMPLEDB_OWNER_PASSWORD', instance.credentials.secretName, PASSWORD_KEY),
          ],
        }),
      },
    },
  };
}

/** The image the database pod's PostgreSQL container runs, if there is a pod. */
export function runningImage(pod: V1Pod | undefined): string | undefined {
  return pod?.spec?.containers.find((c) => c.name === CONTAINERS.postgres)?.image;
}
