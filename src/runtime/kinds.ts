// Descriptors of the built-in Kubernetes resources that controllers commonly read and write, so that each is
// declared once (operators add their own custom resources next to these).
import type { ResourceType } from './resource.ts';

/** A resource of the given API group/version. */
export function resourceType(
  group: string,
  version: string,
  plural: string,
  kind: string,
  namespaced = true,
): ResourceType {
  return { group, version, plural, kind, namespaced };
}

const core = (plural: string, kind: string, namespaced = true) =>
  resourceType('', 'v1', plural, kind, namespaced);

export const NAMESPACES = core('namespaces', 'Namespace', false);
export const CONFIG_MAPS = core('configmaps', 'ConfigMap');
export const SECRETS = core('secrets', 'Secret');
export const SERVICES = core('services', 'Service');
export const SERVICE_ACCOUNTS = core('serviceaccounts', 'ServiceAccount');
export const PERSISTENT_VOLUME_CLAIMS = core('persistentvolumeclaims', 'PersistentVolumeClaim');
export const PERSISTENT_VOLUMES = core('persistentvolumes', 'PersistentVolume', false);
export const PODS = core('pods', 'Pod');
export const STATEFUL_SETS = resourceType('apps', 'v1', 'statefulsets', 'StatefulSet');
export const JOBS = resourceType('batch', 'v1', 'jobs', 'Job');
export const STORAGE_CLASSES = resourceType('storage.k8s.io', 'v1', 'storageclasses', 'StorageClass', false);
export const LEASES = resourceType('coordination.k8s.io', 'v1', 'leases', 'Lease');
export const EVENTS = resourceType('events.k8s.io', 'v1', 'events', 'Event');
