// The objects of a SampleDB with `instances` > 1 (docs/adr/0008-primary-election.md): the two role Secrets, the
// election ConfigMap the pods read at start, the read-only Service, and what the StatefulSet's pods get on top of the
// single-instance template. A SampleDB that never had more than one instance gets none of this and runs exactly as before.
import { randomInt } from 'node:crypto';
import type { V1ConfigMap, V1Container, V1PodSpec, V1Secret, V1Service } from '@kubernetes/client-node';
import { LABELS, POSTGRES_PORT, POSTGRES_PORT_NAME, serviceHost } from '../../api/index.ts';
import {
  decodeSecretValue,
  generatePassword,
  PASSWORD_KEY,
  type RandomInt,
  USERNAME_KEY,
} from '../credentials.ts';
import { FAILOVER_ROLE, REPLICATION_ROLE } from '../failover/instance-sql.ts';
import type { SampleDbInstance } from '../instance.ts';
import { childMeta } from '../meta.ts';
import { literalEnv, secretEnv } from '../pod.ts';
import { REPLICATION_START_SCRIPT } from './start-script.ts';

export const ELECTION_MOUNT_PATH = '/etc/sampledb-election';
export const ELECTION_PRIMARY_KEY = 'primary';
export const ELECTION_TERM_KEY = 'term';
const ELECTION_VOLUME = 'election';

/**
 * More than one instance, or one that had more: once a primary was elected, a scale down to 1 keeps the election
 * (the start script, the role labels, the record) so the primary is handed over to pod 0 before the others go,
 * and the remaining pod is not restarted without the start script while it still has a standby's files.
 */
export function replicated(instance: SampleDbInstance): boolean {
  return instance.spec.instances > 1 || instance.object.status?.replication?.primary !== undefined;
}

export interface ReplicationNames {
  replicationSecret: string;
  failoverSecret: string;
  electionConfigMap: string;
  readOnlyService: string;
}

export function replicationNames(instance: SampleDbInstance): ReplicationNames {
  return {
    replicationSecret: `${instance.name}-replication`,
    failoverSecret: `${instance.name}-failover`,
    electionConfigMap: `${instance.name}-election`,
    readOnlyService: `${instance.name}-ro`,
  };
}

export function podName(instance: SampleDbInstance, ordinal: number): string {
  return `${instance.names.statefulSet}-${ordinal}`;
}

/**
 * The StatefulSet's replicas: `instances`, but never fewer than keeps the recorded primary's pod and, while a
 * handover runs, the old primary's. A scale down that removes the primary hands over first, and the handover
 * promotes the target only once the old primary's recreated pod has said where its WAL ends: scaled away at the
 * election, that pod never came back, and writes waited out the handover's 60 s bound (measured on the real node).
 */
export function statefulSetReplicas(instance: SampleDbInstance): number {
  const replication = instance.object.status?.replication;
  const ordinalOf = (pod: string | undefined) =>
    pod?.startsWith(`${instance.names.statefulSet}-`)
      ? Number(pod.slice(instance.names.statefulSet.length + 1))
      : Number.NaN;
  const kept = [replication?.primary, replication?.handover?.from]
    .map(ordinalOf)
    .filter((ordinal) => Number.isInteger(ordinal) && ordinal >= 0);
  return Math.max(instance.spec.instances, ...kept.map((ordinal) => ordinal + 1));
}

const encode = (value: string) => Buffer.from(value, 'utf8').toString('base64');

/** A role's Secret; a password already in `existing` is kept (the role in the database has it). */
function roleSecret(
  instance: SampleDbInstance,
  name: string,
  role: string,
  existing: V1Secret | undefined,
  random: RandomInt,
): V1Secret {
  const password = decodeSecretValue(existing?.data?.[PASSWORD_KEY]) || generatePassword(undefined, random);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: childMeta(instance, name, 'credentials'),
    type: 'Opaque',
    data: { [USERNAME_KEY]: encode(role), [PASSWORD_KEY]: encode(password) },
  };
}

export function replicationSecret(
  instance: SampleDbInstance,
  existing?: V1Secret,
  random: RandomInt = randomInt,
) {
  return roleSecret(
    instance,
    replicationNames(instance).replicationSecret,
    REPLICATION_ROLE,
    existing,
    random,
  );
}

export function failoverSecret(
  instance: SampleDbInstance,
  existing?: V1Secret,
  random: RandomInt = randomInt,
) {
  return roleSecret(instance, replicationNames(instance).failoverSecret, FAILOVER_ROLE, existing, random);
}

/** The election record as the pods read it at start: a pod runs as a primary only when it is named here. */
export function electionConfigMap(instance: SampleDbInstance, primary: string, term: number): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: childMeta(instance, replicationNames(instance).electionConfigMap, 'config'),
    data: { [ELECTION_PRIMARY_KEY]: primary, [ELECTION_TERM_KEY]: String(term) },
  };
}

export type Role = 'primary' | 'replica';

/** The pod label of each role (the client Service selects the primary, `-ro` the replicas). */
export function roleSelector(instance: SampleDbInstance, role: Role): Record<string, string> {
  return { ...instance.labels.database, [LABELS.role]: role };
}

export function readOnlyService(instance: SampleDbInstance): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: childMeta(instance, replicationNames(instance).readOnlyService, 'database'),
    spec: {
      type: 'ClusterIP',
      selector: roleSelector(instance, 'replica'),
      ports: [{ name: POSTGRES_PORT_NAME, port: POSTGRES_PORT, targetPort: POSTGRES_PORT, protocol: 'TCP' }],
    },
  };
}

/**
 * The postgres container of a replicated SampleDB: the start script decides the role from the election record
 * (primary: the image's entrypoint; standby: pg_basebackup from the client Service when the volume is empty, then
 * streaming from it).
 */
export function replicatedPostgresContainer(instance: SampleDbInstance, container: V1Container): V1Container {
  const names = replicationNames(instance);
  return {
    ...container,
    command: ['sh', '-c', REPLICATION_START_SCRIPT, 'sampledb-start'],
    env: [
      ...(container.env ?? []),
      { name: 'SAMPLEDB_POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      ...literalEnv({
        SAMPLEDB_PRIMARY_HOST: instance.endpoint.host,
        SAMPLEDB_PRIMARY_PORT: String(instance.spec.service.port),
        SAMPLEDB_PEER_DOMAIN: serviceHost(instance.names.headlessService, instance.namespace),
        SAMPLEDB_PEER_PORT: String(POSTGRES_PORT),
        SAMPLEDB_REPLICATION_USER: REPLICATION_ROLE,
        SAMPLEDB_ELECTION_FILE: `${ELECTION_MOUNT_PATH}/${ELECTION_PRIMARY_KEY}`,
      }),
      secretEnv('SAMPLEDB_REPLICATION_PASSWORD', names.replicationSecret, PASSWORD_KEY),
    ],
    volumeMounts: [
      ...(container.volumeMounts ?? []),
      { name: ELECTION_VOLUME, mountPath: ELECTION_MOUNT_PATH, readOnly: true },
    ],
  };
}

/** The pod spec of a replicated SampleDB: the election ConfigMap mounted (a pod waits for it to exist). */
export function replicatedPodSpec(instance: SampleDbInstance, spec: V1PodSpec, postgres: string): V1PodSpec {
  return {
    ...spec,
    containers: spec.containers.map((c) =>
      c.name === postgres ? replicatedPostgresContainer(instance, c) : c,
    ),
    volumes: [
      ...(spec.volumes ?? []),
      { name: ELECTION_VOLUME, configMap: { name: replicationNames(instance).electionConfigMap } },
    ],
  };
}
