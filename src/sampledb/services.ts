// The headless Service that gives the StatefulSet pod its stable DNS name, and the client Service that publishes
// the database.
import type { V1EndpointSlice, V1Pod, V1Service } from '@kubernetes/client-node';
import { ANNOTATIONS, LABELS, POSTGRES_PORT, POSTGRES_PORT_NAME } from '../api/index.ts';
import type { SampleDbInstance } from './instance.ts';
import { childMeta } from './meta.ts';
import { replicated, roleSelector } from './replication/objects.ts';

export function databaseSelector(instance: SampleDbInstance): Record<string, string> {
  return { ...instance.labels.database };
}

/** The component value no pod has: the client Service's selector while writes are stopped. */
export const WRITES_STOPPED_COMPONENT = 'writes-stopped';

/**
 * The client Service's selector. While a SampleDBRestore has stopped writes (the SampleDB's writes-stopped
 * annotation), its component label asks for a value no pod has: the Service selects nothing and clients cannot
 * connect, while the Jobs still reach the pod through the headless Service. The same keys either way: the selector
 * is an atomic map, and the apply-skip compares values per key, so a key added and removed again would not be seen.
 */
export function clientSelector(instance: SampleDbInstance): Record<string, string> {
  // With replicas, the client Service is the read-write one: it selects the elected primary only.
  const writable = replicated(instance) ? roleSelector(instance, 'primary') : databaseSelector(instance);
  return writesStopped(instance) ? { ...writable, [LABELS.component]: WRITES_STOPPED_COMPONENT } : writable;
}

/** Whether a SampleDBRestore has stopped client writes (the client Service then selects no pod). */
export function writesStopped(instance: SampleDbInstance): boolean {
  return Boolean(instance.object.metadata.annotations?.[ANNOTATIONS.writesStopped]);
}

/** The label the EndpointSlice controller puts on each slice of a Service: the Service's name. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/**
 * Whether the client Service routes to `pod`, as the Service's EndpointSlices say. A pod turns Ready before the
 * EndpointSlice controller lists it, and kube-proxy programs the nodes only from the slices: until then a client of
 * the Service is refused. The endpoint must be this very pod (its UID: a recreated pod keeps its name) and ready
 * (an absent ready condition means ready, as the API defines it). `undefined` when no slice of the Service is known
 * (a cluster without the EndpointSlice controller): there is nothing to judge by.
 */
export function serviceRoutesTo(slices: readonly V1EndpointSlice[], pod: V1Pod): boolean | undefined {
  if (slices.length === 0) return undefined;
  const { name, uid } = pod.metadata ?? {};
  return slices.some((slice) =>
    (slice.endpoints ?? []).some(
      (endpoint) =>
        endpoint.targetRef?.kind === 'Pod' &&
        endpoint.targetRef.name === name &&
        (!uid || !endpoint.targetRef.uid || endpoint.targetRef.uid === uid) &&
        endpoint.conditions?.ready !== false,
    ),
  );
}

/** Whether a client Service selects no pod because writes are stopped. */
export function serviceSelectsNothing(service: V1Service | undefined): boolean {
  return service?.spec?.selector?.[LABELS.component] === WRITES_STOPPED_COMPONENT;
}

export function headlessService(instance: SampleDbInstance): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: childMeta(instance, instance.names.headlessService, 'database'),
    spec: {
      clusterIP: 'None',
      // The pod must be resolvable before it is ready: the init Job and peers reach it while it starts.
      publishNotReadyAddresses: true,
      selector: databaseSelector(instance),
      ports: [{ name: POSTGRES_PORT_NAME, port: POSTGRES_PORT, targetPort: POSTGRES_PORT, protocol: 'TCP' }],
    },
  };
}

export function clientService(instance: SampleDbInstance): V1Service {
  const { service } = instance.spec;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: childMeta(instance, instance.names.clientService, 'database', {
      annotations: service.annotations,
    }),
    spec: {
      type: service.type,
      selector: clientSelector(instance),
      ports: [{ name: POSTGRES_PORT_NAME, port: service.port, targetPort: POSTGRES_PORT, protocol: 'TCP' }],
    },
  };
}
