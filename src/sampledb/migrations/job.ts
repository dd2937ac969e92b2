// The migration Job: runs scripts/migrate.ts as the owner against the database pod, with the image the database
// runs (its psql matches the server). Its SQL is one projected volume of the ConfigMaps' keys, one `<name>.sql`
// file per migration; the script refuses a file whose checksum is not the one the operator read. It connects to the
// elected primary's pod (status.replication.primary; pod 0 without replicas): a replica would refuse the writes.
import type { V1Job, V1Volume } from '@kubernetes/client-node';
import { POSTGRES_PORT, serviceHost } from '../../api/index.ts';
import { PASSWORD_KEY } from '../credentials.ts';
import type { SampleDbInstance } from '../instance.ts';
import { childMeta } from '../meta.ts';
import { boundedName } from '../names.ts';
import { literalEnv, scriptJobPodSpec, secretEnv } from '../pod.ts';
import {
  MIGRATE_SCRIPT,
  MIGRATIONS_MOUNT_PATH,
  type MigrationToRun,
  migrateScriptEnv,
} from '../scripts/migrate.ts';
import { migrationsJobHash } from './plan.ts';

export const MIGRATE_CONTAINER = 'migrate';
const VOLUME = 'migrations';

export function migrationsJobName(sampleDbName: string, migrations: readonly MigrationToRun[]): string {
  return boundedName(sampleDbName, `migrate-${migrationsJobHash(migrations)}`);
}

/** The pod the migrations run against: the elected primary, else the only pod (pod 0). */
export function migrationsTargetPod(instance: SampleDbInstance, electedPrimary?: string): string {
  return electedPrimary ?? instance.object.status?.replication?.primary ?? instance.names.pod;
}

export function migrationsJob(
  instance: SampleDbInstance,
  image: string,
  migrations: readonly MigrationToRun[],
  electedPrimary?: string,
): V1Job {
  const host = serviceHost(
    `${migrationsTargetPod(instance, electedPrimary)}.${instance.names.headlessService}`,
    instance.namespace,
  );
  const entries = instance.object.spec.migrations ?? [];
  const volume: V1Volume = {
    name: VOLUME,
    projected: {
      sources: entries.map((e) => ({
        configMap: { name: e.configMap.name, items: [{ key: e.configMap.key, path: `${e.name}.sql` }] },
      })),
    },
  };
  const { spec } = instance;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: childMeta(instance, migrationsJobName(instance.name, migrations), 'init'),
    spec: {
      // A failure is the SQL's (or a changed migration): the script is safe to run again, but running it again
      // fails the same way, so the status says why at once.
      backoffLimit: 0,
      activeDeadlineSeconds: 3600,
      template: {
        metadata: { labels: { ...instance.labels.init } },
        spec: scriptJobPodSpec(
          {
            name: MIGRATE_CONTAINER,
            image,
            script: MIGRATE_SCRIPT,
            env: [
              ...literalEnv(
                migrateScriptEnv({
                  host,
                  port: POSTGRES_PORT,
                  database: spec.bootstrap.database,
                  owner: spec.bootstrap.owner,
                  migrations,
                }),
              ),
              secretEnv('PGPASSWORD', instance.credentials.secretName, PASSWORD_KEY),
            ],
            volumeMounts: [{ name: VOLUME, mountPath: MIGRATIONS_MOUNT_PATH, readOnly: true }],
          },
          [volume],
        ),
      },
    },
  };
}
