// What a drill run creates: the canary and probe Jobs, fill-disk's fill and release Jobs (owned by the SampleDBDrill)
// and restore-check's throw-away SampleDB. Pure builders.
import type { V1Job, V1NetworkPolicy, V1PodSpec } from '@kubernetes/client-node';
import {
  ANNOTATIONS,
  API_VERSION,
  CONTAINERS,
  KINDS,
  LABELS,
  POSTGRES_PORT,
  type SampleDbDrillObject,
  type SampleDbObject,
} from '../../api/index.ts';
import { TERMINATION_LOG } from '../backup-job.ts';
import type { SampleDbInstance } from '../instance.ts';
import { ownerReferenceTo } from '../meta.ts';
import { literalEnv, scriptJobPodSpec, superuserEnv } from '../pod.ts';
import { DATA_MOUNT_PATH, PGDATA } from '../postgres-config.ts';
import { DRILL_CANARY_SCRIPT, DRILL_PROBE_SCRIPT, drillScriptEnv } from '../scripts/drill.ts';
import {
  DEFAULT_FILL_HOLD_SECONDS,
  DRILL_FILL_SCRIPT,
  DRILL_RELEASE_SCRIPT,
  FILLED_MARKER,
  fillScriptEnv,
} from '../scripts/drill-fill.ts';
import { DRILL_NETCHECK_SCRIPT, NETCHECK_SECONDS, netcheckScriptEnv } from '../scripts/drill-netcheck.ts';
import {
  canaryJobName,
  fillJobName,
  isolationPolicyName,
  netcheckName,
  probeJobName,
  releaseJobName,
  throwawayName,
} from './names.ts';

/** fill-disk's probe waits this long after the fill for a write to be refused (the hold and some). */
export const FILL_REFUSAL_WAIT_SECONDS = DEFAULT_FILL_HOLD_SECONDS + 30;
/** The fill Job's bound: filling (instant with fallocate), the hold, and a start on a busy node. */
const FILL_DEADLINE_SECONDS = DEFAULT_FILL_HOLD_SECONDS + 300;

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
  const env = drillScriptEnv({
    host: instance.endpoint.host,
    port: instance.endpoint.port,
    run: runKey(drill, run),
    replicas: Math.max(0, instance.spec.instances - 1),
    terminationLog: TERMINATION_LOG,
    ...(which === 'probe' && drill.spec.kind === 'fill-disk'
      ? { fillSeconds: FILL_REFUSAL_WAIT_SECONDS }
      : {}),
  });
  return runJob(
    drill,
    instance,
    which === 'canary' ? canaryJobName(drillName, run) : probeJobName(drillName, run),
    scriptJobPodSpec({
      name: CONTAINERS.drill,
      image: instance.spec.image,
      script: which === 'canary' ? DRILL_CANARY_SCRIPT : DRILL_PROBE_SCRIPT,
      env: [...literalEnv(env), ...superuserEnv(instance)],
      terminationMessagePath: TERMINATION_LOG,
    }),
  );
}

function runJob(
  drill: SampleDbDrillObject,
  instance: SampleDbInstance,
  name: string,
  podSpec: V1PodSpec,
  activeDeadlineSeconds?: number,
  podLabels: Readonly<Record<string, string>> = {},
): V1Job {
  const labels = { ...instance.labels.drill };
  const annotations = { [ANNOTATIONS.drill]: drill.metadata.name ?? '' };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: instance.namespace,
      labels,
      annotations,
      ownerReferences: [
        ownerReferenceTo({ apiVersion: API_VERSION, kind: KINDS.sampleDbDrill, metadata: drill.metadata }),
      ],
    },
    spec: {
      backoffLimit: 0,
      ...(activeDeadlineSeconds ? { activeDeadlineSeconds } : {}),
      template: { metadata: { labels: { ...labels, ...podLabels }, annotations }, spec: podSpec },
    },
  };
}

/** The volume fill-disk fills: the data claim of a database pod (`<claim template>-<pod>`), and where that pod runs. */
export interface FillTarget {
  pod: string;
  /** The pod's node: a second pod can mount a ReadWriteOnce volume only there. */
  node?: string;
  /** The claim's capacity (status), or its requested size. */
  claimBytes: number;
}

export const dataClaimOf = (instance: SampleDbInstance, pod: string) =>
  `${instance.names.dataVolumeClaimTemplate}-${pod}`;

/**
 * fill-disk's Jobs: `fill` fills the volume with one ballast file, is Ready while it is full and removes the file
 * after its hold; `release` removes a ballast a failed fill left. Both mount the claim beside the running database,
 * so they run on its node; neither gets a database credential.
 */
export function fillDiskJob(
  instance: SampleDbInstance,
  drill: SampleDbDrillObject,
  run: number,
  which: 'fill' | 'release',
  target: FillTarget,
): V1Job {
  const drillName = drill.metadata.name ?? '';
  const env = fillScriptEnv({
    volumeDir: DATA_MOUNT_PATH,
    dataDir: PGDATA.slice(DATA_MOUNT_PATH.length + 1),
    claimBytes: target.claimBytes,
    terminationLog: TERMINATION_LOG,
  });
  const podSpec = scriptJobPodSpec(
    {
      name: CONTAINERS.drill,
      image: instance.spec.image,
      script: which === 'fill' ? DRILL_FILL_SCRIPT : DRILL_RELEASE_SCRIPT,
      env: literalEnv(env),
      terminationMessagePath: TERMINATION_LOG,
      volumeMounts: [{ name: 'data', mountPath: DATA_MOUNT_PATH }],
    },
    [{ name: 'data', persistentVolumeClaim: { claimName: dataClaimOf(instance, target.pod) } }],
  );
  const [container] = podSpec.containers;
  if (which === 'fill' && container)
    container.readinessProbe = {
      exec: { command: ['test', '-e', FILLED_MARKER] },
      periodSeconds: 1,
      failureThreshold: 1,
    };
  // The database pod's SIGTERM-to-exit is not this pod's: the trap removes the ballast within a second.
  podSpec.terminationGracePeriodSeconds = 10;
  if (target.node)
    podSpec.affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchFields: [{ key: 'metadata.name', operator: 'In', values: [target.node] }] },
          ],
        },
      },
    };
  return runJob(
    drill,
    instance,
    which === 'fill' ? fillJobName(drillName, run) : releaseJobName(drillName, run),
    podSpec,
    which === 'fill' ? FILL_DEADLINE_SECONDS : 120,
  );
}

const ownedPolicy = (
  drill: SampleDbDrillObject,
  instance: SampleDbInstance,
  name: string,
  spec: V1NetworkPolicy['spec'],
): V1NetworkPolicy => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'NetworkPolicy',
  metadata: {
    name,
    namespace: instance.namespace,
    labels: { ...instance.labels.drill },
    annotations: { [ANNOTATIONS.drill]: drill.metadata.name ?? '' },
    // Deleting the drill deletes its policies too: an isolation never outlives the SampleDBDrill.
    ownerReferences: [
      ownerReferenceTo({ apiVersion: API_VERSION, kind: KINDS.sampleDbDrill, metadata: drill.metadata }),
    ],
  },
  ...(spec ? { spec } : {}),
});

/**
 * isolate-primary's enforcement check: a Job whose pod carries the netcheck label, which a deny-all egress policy
 * selects, asking the primary pod's IP whether PostgreSQL answers. No credential: pg_isready opens no session.
 */
export function netcheckJob(
  instance: SampleDbInstance,
  drill: SampleDbDrillObject,
  run: number,
  primaryIp: string,
): V1Job {
  const name = netcheckName(drill.metadata.name ?? '', run);
  const env = netcheckScriptEnv({ host: primaryIp, port: POSTGRES_PORT, terminationLog: TERMINATION_LOG });
  return runJob(
    drill,
    instance,
    name,
    scriptJobPodSpec({
      name: CONTAINERS.drill,
      image: instance.spec.image,
      script: DRILL_NETCHECK_SCRIPT,
      env: literalEnv(env),
      terminationMessagePath: TERMINATION_LOG,
    }),
    NETCHECK_SECONDS + 120,
    { [LABELS.drillNetcheck]: name },
  );
}

/** The deny-all egress policy over the enforcement check's pod (policyTypes Egress and no rule: nothing allowed). */
export function netcheckPolicy(
  instance: SampleDbInstance,
  drill: SampleDbDrillObject,
  run: number,
): V1NetworkPolicy {
  const name = netcheckName(drill.metadata.name ?? '', run);
  return ownedPolicy(drill, instance, name, {
    podSelector: { matchLabels: { [LABELS.drillNetcheck]: name } },
    policyTypes: ['Egress'],
  });
}

/**
 * The isolation: no traffic to or from the primary pod (selected by the StatefulSet's pod-name label, so the pod the
 * StatefulSet puts in its place while the policy holds is isolated too).
 */
export function isolationPolicy(
  instance: SampleDbInstance,
  drill: SampleDbDrillObject,
  run: number,
  pod: string,
): V1NetworkPolicy {
  return ownedPolicy(drill, instance, isolationPolicyName(drill.metadata.name ?? '', run), {
    podSelector: {
      matchLabels: { ...instance.labels.database, 'statefulset.kubernetes.io/pod-name': pod },
    },
    policyTypes: ['Ingress', 'Egress'],
  });
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
