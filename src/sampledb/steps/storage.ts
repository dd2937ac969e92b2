// Storage growth: the data PVC is patched when its StorageClass allows expansion; otherwise a condition says why the
// volume stays as it is and what to do instead.
import type { V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { compareQuantities, REASONS, SAMPLEDB_CONDITIONS } from '../../api/index.ts';
import type { ConditionInput } from '../../runtime/index.ts';
import { PVCS, STORAGE_CLASSES } from '../resources.ts';
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

export const growStorage: Step = {
  name: 'storage',
  writes: ['patch'],
  async run({ instance, observed, view, write }) {
    const pvc = observed.dataPvc;
    const wanted = instance.spec.storage.size;
    const className = pvc?.spec?.storageClassName;
    const storageClass = className ? view.get(STORAGE_CLASSES, '', className) : undefined;
    const decision = decideStorage(pvc, wanted, storageClass);
    // The elected primary's claim (pod 0 without replicas); the replicas' claims are not grown (README Limits).
    const name = instance.primary.dataPvc;
    const generation = instance.object.metadata.generation;
    const condition = (status: 'True' | 'False', reason: string, message: string): ConditionInput => ({
      type: SAMPLEDB_CONDITIONS.storageResized,
      status,
      reason,
      message,
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
    });
    switch (decision.kind) {
      case 'expand': {
        const patched = await write.patch(
          PVCS,
          { namespace: instance.namespace, name },
          { spec: { resources: { requests: { storage: decision.to } } } },
        );
        return {
          ...(patched ? { observed: { dataPvc: patched } } : {}),
          conditions: [
            condition(
              'False',
              REASONS.expanding,
              `Growing PersistentVolumeClaim ${name} from ${decision.from} to ${decision.to}.`,
            ),
          ],
        };
      }
      case 'resizing':
        return {
          conditions: [
            condition(
              'False',
              REASONS.expanding,
              `PersistentVolumeClaim ${name} was asked for ${decision.to}; the volume has ${decision.capacity} so far.`,
            ),
          ],
        };
      case 'not-expandable':
        return {
          conditions: [
            condition(
              'False',
              REASONS.expansionNotSupported,
              `spec.storage.size is ${decision.to} but PersistentVolumeClaim ${name} stays at ${decision.from}: StorageClass ${decision.storageClass} does not allow volume expansion (allowVolumeExpansion is not true). Ask the cluster administrator to enable it, or restore a backup into a new SampleDB of the larger size.`,
            ),
          ],
        };
      case 'none':
        if (!pvc) return undefined;
        return {
          conditions: [
            condition(
              'True',
              REASONS.sizeMatches,
              `PersistentVolumeClaim ${name} has the requested size ${wanted}.`,
            ),
          ],
        };
    }
  },
};
