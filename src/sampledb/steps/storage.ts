// Storage growth: every instance's data PVC is patched when its StorageClass allows expansion; otherwise a condition
// says why the volume stays as it is and what to do instead.
import type { V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { compareQuantities, REASONS, SAMPLEDB_CONDITIONS } from '../../api/index.ts';
import type { ConditionInput } from '../../runtime/index.ts';
import type { SampleDbInstance } from '../instance.ts';
import { podName, statefulSetReplicas } from '../replication/objects.ts';
import { PVCS, STORAGE_CLASSES } from '../resources.ts';
import type { ClusterView } from '../view.ts';
import type { Step } from './context.ts';

export type StorageDecision =
  | { kind: 'none' }
  | { kind: 'expand'; from: string; to: string }
  | { kind: 'not-expandable'; from: string; to: string; storageClass: string }
  | { kind: 'resizing'; to: string; capacity: string | undefined };

/** Pure: what the storage step does for a data PVC and the spec's size. */
export function decideStorage(
  pvc: V1PersistentVolumeClaim | undefined,
  wanted: string,
  storageClass: V1StorageClass | undefined,
): StorageDecision {
  const requested = pvc?.spec?.resources?.requests?.storage;
  if (!pvc || !requested) return { kind: 'none' };
  if (compareQuantities(wanted, requested) > 0) {
    if (storageClass?.allowVolumeExpansion === true) return { kind: 'expand', from: requested, to: wanted };
    return {
      kind: 'not-expandable',
      from: requested,
      to: wanted,
      storageClass: pvc.spec?.storageClassName ?? '(none)',
    };
  }
  const capacity = pvc.status?.capacity?.storage;
  if (capacity && compareQuantities(capacity, requested) < 0)
    return { kind: 'resizing', to: requested, capacity };
  return { kind: 'none' };
}

/** The data claims of every instance (data-<name>-<ordinal>) the StatefulSet runs or keeps, in ordinal order. */
function dataClaims(
  instance: SampleDbInstance,
  view: ClusterView,
): { name: string; pvc: V1PersistentVolumeClaim }[] {
  const count = Math.max(statefulSetReplicas(instance), instance.spec.instances);
  const claims: { name: string; pvc: V1PersistentVolumeClaim }[] = [];
  for (let ordinal = 0; ordinal < count; ordinal++) {
    const name = `${instance.names.dataVolumeClaimTemplate}-${podName(instance, ordinal)}`;
    const pvc = view.get(PVCS, instance.namespace, name);
    if (pvc) claims.push({ name, pvc });
  }
  return claims;
}

export const growStorage: Step = {
  name: 'storage',
  writes: ['patch'],
  async run({ instance, observed, view, write }) {
    const wanted = instance.spec.storage.size;
    const generation = instance.object.metadata.generation;
    const condition = (status: 'True' | 'False', reason: string, message: string): ConditionInput => ({
      type: SAMPLEDB_CONDITIONS.storageResized,
      status,
      reason,
      message,
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
    });
    // Every instance's claim: a replica needs the room the primary gets (it holds the same data).
    const claims = dataClaims(instance, view);
    if (claims.length === 0) return undefined;
    const decided = claims.map(({ name, pvc }) => {
      const className = pvc.spec?.storageClassName;
      const storageClass = className ? view.get(STORAGE_CLASSES, '', className) : undefined;
      return { name, decision: decideStorage(pvc, wanted, storageClass) };
    });
    let primaryPvc = observed.dataPvc;
    const messages: string[] = [];
    let worst: { status: 'True' | 'False'; reason: string } = { status: 'True', reason: REASONS.sizeMatches };
    for (const { name, decision } of decided) {
      switch (decision.kind) {
        case 'expand': {
          const patched = await write.patch(
            PVCS,
            { namespace: instance.namespace, name },
            { spec: { resources: { requests: { storage: decision.to } } } },
          );
          if (patched && name === instance.primary.dataPvc) primaryPvc = patched;
          messages.push(`Growing PersistentVolumeClaim ${name} from ${decision.from} to ${decision.to}.`);
          if (worst.reason !== REASONS.expansionNotSupported)
            worst = { status: 'False', reason: REASONS.expanding };
          break;
        }
        case 'resizing':
          messages.push(
            `PersistentVolumeClaim ${name} was asked for ${decision.to}; the volume has ${decision.capacity} so far.`,
          );
          if (worst.reason !== REASONS.expansionNotSupported)
            worst = { status: 'False', reason: REASONS.expanding };
          break;
        case 'not-expandable':
          messages.push(
            `spec.storage.size is ${decision.to} but PersistentVolumeClaim ${name} stays at ${decision.from}: StorageClass ${decision.storageClass} does not allow volume expansion (allowVolumeExpansion is not true). Ask the cluster administrator to enable it, or restore a backup into a new SampleDB of the larger size.`,
          );
          worst = { status: 'False', reason: REASONS.expansionNotSupported };
          break;
        case 'none':
          break;
      }
    }
    const names = claims.map((c) => c.name).join(', ');
    const message =
      messages.length > 0
        ? messages.join(' ')
        : `PersistentVolumeClaim${claims.length > 1 ? 's' : ''} ${names} ha${claims.length > 1 ? 've' : 's'} the requested size ${wanted}.`;
    return {
      ...(primaryPvc && primaryPvc !== observed.dataPvc ? { observed: { dataPvc: primaryPvc } } : {}),
      conditions: [condition(worst.status, worst.reason, message)],
    };
  },
};
