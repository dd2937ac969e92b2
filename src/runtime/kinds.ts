// Descriptors of the built-in Kubernetes resources that controllers commonly read and write, so that each is
// declared once (operators add their own custom resources next to these).
import type {
  EventsV1Event,
  V1ConfigMap,
  V1EndpointSlice,
  V1Job,
  V1Lease,
  V1Namespace,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1Pod,
  V1Secret,
  V1Service,
  V1ServiceAccount,
  V1StatefulSet,
  V1StorageClass,
} from '@kubernetes/client-node';
import type { ResourceType, Writable } from './resource.ts';

/** A resource of the given API group/version whose objects are of type `T`. */
export function resourceType<T extends Writable = Writable>(
  group: string,
  version: string,
  plural: string,
  kind: string,
  namespaced = true,
): ResourceType<T> {
  return { group, version, plural, kind, namespaced };
}

const core = <T extends Writable>(plural: string, kind: string, namespaced = true) =>
  resourceType<T>('', 'v1', plural, kind, namespaced);

export const NAMESPACES = core<V1Namespace>('namespaces', 'Namespace', false);
export const CONFIG_MAPS = core<V1ConfigMap>('configmaps', 'ConfigMap');
export const SECRETS = core<V1Secret>('secrets', 'Secret');
export const SERVICES = core<V1Service>('services', 'Service');
export const SERVICE_ACCOUNTS = core<V1ServiceAccount>('serviceaccounts', 'ServiceAccount');
export const PERSISTENT_VOLUME_CLAIMS = core<V1PersistentVolumeClaim>(
  'persistentvolumeclaims',
  'PersistentVolumeClaim',
);
export const PERSISTENT_VOLUMES = core<V1PersistentVolume>('persistentvolumes', 'PersistentVolume', false);
export const PODS = core<V1Pod>('pods', 'Pod');
export const STATEFUL_SETS = resourceType<V1StatefulSet>('apps', 'v1', 'statefulsets', 'StatefulSet');
export const JOBS = resourceType<V1Job>('batch', 'v1', 'jobs', 'Job');
export const STORAGE_CLASSES = resourceType<V1StorageClass>(
  'storage.k8s.io',
  'v1',
  'storageclasses',
  'StorageClass',
  false,
);
export const LEASES = resourceType<V1Lease>('coordination.k8s.io', 'v1', 'leases', 'Lease');
export const EVENTS = resourceType<EventsV1Event>('events.k8s.io', 'v1', 'events', 'Event');
/** discovery.k8s.io/v1 EndpointSlice: which pods a Service routes to (kube-proxy programs the node from these). */
export const ENDPOINT_SLICES = resourceType<V1EndpointSlice>(
  'discovery.k8s.io',
  'v1',
  'endpointslices',
  'EndpointSlice',
);
