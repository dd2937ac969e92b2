// What a drill run creates: the canary and probe Jobs (owned by the SampleDBDrill) and restore-check's throw-away
// SampleDB. Pure builders.
import type { V1Job } from '@kubernetes/client-node';
import {
  ANNOTATIONS,
  API_VERSION,
  CONTAINERS,
  KINDS,
  type SampleDbDrillObject,
  type SampleDbObject,
} from '../../api/index.ts';
import { TERMINATION_LOG } from '../backup-job.ts';
import type { SampleDbInstance } from '../instance.ts';
import { ownerReferenceTo } from '../meta.ts';
import { literalEnv, scriptJobPodSpec, superuserEnv } from '../pod.ts';
import { DRILL_CANARY_SCRIPT, DRILL_PROBE_SCRIPT, drillScriptEnv } from '../scripts/drill.ts';
import { canaryJobName, probeJobName, throwawayName } from './names.ts';

/** The canary row's key: unique per namespace, drill and run. */
export const runKey = (drill: SampleDbDrillObject, run: number) =>
  `${drill.metadata.namespace ?? ''}/${drill.metadata.name ?? ''}/${run}`;

/** The Jobs of one run; each runs once (a second attempt would measure something else). */
export function drillJob(
  instance: SampleDbInstance,
  drill: SampleDbDrillObject,
  run: number,
  which: 'canary' | 'probe',
): V1Job {
  const drillName = drill.metadata.name ?? '';
  const labels = { ...instance.labels.drill };
  const annotations = { [ANNOTATIONS.drill]: drillName };
  const env = drillScriptEnv({
    host: instance.endpoint.host,
    port: instance.endpoint.port,
    run: runKey(drill, run),
    replicas: Math.max(0, instance.spec.instances - 1),
    terminationLog: TERMINATION_LOG,
  });
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: which === 'canary' ? canaryJobName(drillName, run) : probeJobName(drillName, run),
      namespace: instance.namespace,
      labels,
      annotations,
      ownerReferences: [
        ownerReferenceTo({ apiVersion: API_VERSION, kind: KINDS.sampleDbDrill, metadata: drill.metadata }),
      ],
    },
    spec: {
      backoffLimit: 0,
      template: {
        metadata: { labels, annotations },
        spec: scriptJobPodSpec({
          name: CONTAINERS.drill,
          image: instance.spec.image,
          script: which === 'canary' ? DRILL_CANARY_SCRIPT : DRILL_PROBE_SCRIPT,
          env: [...literalEnv(env), ...superuserEnv(instance)],
          terminationMessagePath: TERMINATION_LOG,
        }),
      },
    },
  };
}

/**
 * restore-check's throw-away SampleDB: the source's version, storage and database, restored from `backup`, one
 * instance, deletion policy Delete and no protection (it is removed as soon as it was Ready). Not owned by the drill:
 * the drill deletes it itself and waits until it is gone, and a SampleDB cannot be garbage-collected past its
 * finalizer's deletion policy anyway.
 */
export function throwawaySampleDb(
  source: SampleDbObject,
  drill: SampleDbDrillObject,
  run: number,
  backup: string,
): SampleDbObject {
  const spec = source.spec;
  return {
    apiVersion: API_VERSION,
    kind: KINDS.sampleDb,
    metadata: {
      name: throwawayName(source.metadata.name ?? '', run),
      namespace: source.metadata.namespace ?? '',
      annotations: { [ANNOTATIONS.drill]: drill.metadata.name ?? '' },
    },
    spec: {
      version: spec.version,
      ...(spec.image ? { image: spec.image } : {}),
      storage: { ...spec.storage },
      bootstrap: {
        ...(spec.bootstrap?.database ? { database: spec.bootstrap.database } : {}),
        ...(spec.bootstrap?.owner ? { owner: spec.bootstrap.owner } : {}),
        fromBackup: { name: backup },
      },
      deletion: { policy: 'Delete', protection: false },
    },
  };
}
