// The StatefulSet. Its volumeClaimTemplates are immutable, so the template keeps the size it was created with; a
// larger spec.storage.size is applied to the PVCs themselves by the storage step.
import type { V1StatefulSet } from '@kubernetes/client-node';
import type { SampleDbInstance } from '../instance.ts';
import { PODS, PVCS, STATEFULSETS } from '../resources.ts';
import { statefulSet } from '../statefulset.ts';
import { withWorkloadVersion, workloadVersion } from '../upgrade/workload.ts';
import type { Step } from './context.ts';

/**
 * The StatefulSet to apply: the builder's, with the claim template size of the existing object, and the image the
 * data volume's major version allows (upgrade/workload.ts).
 */
export function desiredStatefulSet(
  instance: SampleDbInstance,
  existing: V1StatefulSet | undefined,
): V1StatefulSet {
  const templateSize = existing?.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests?.storage;
  const { spec } = instance;
  const built = templateSize
    ? statefulSet({ ...instance, spec: { ...spec, storage: { ...spec.storage, size: templateSize } } })
    : statefulSet(instance);
  return withWorkloadVersion(built, workloadVersion(instance, existing));
}

export const applyStatefulSet: Step = {
  name: 'statefulset',
  writes: ['apply'],
  async run({ instance, observed, view, write }) {
    const { namespace, names } = instance;
    const existing = view.get(STATEFULSETS, namespace, names.statefulSet);
    const desired = desiredStatefulSet(instance, existing);
    // A major upgrade decides the image, the data major and whether the files are offline (0 replicas).
    const directive = observed.majorUpgrade?.plan.workload;
    if (directive) {
      withWorkloadVersion(desired, directive);
      if (desired.spec) desired.spec.replicas = directive.replicas;
    }
    const applied = await write.apply(STATEFULSETS, desired);
    const { held } = directive ? { held: undefined } : workloadVersion(instance, existing);
    // The elected primary's pod and claim (pod 0 without replicas): Ready, versions and migrations follow it.
    const pod = view.get(PODS, namespace, instance.primary.pod);
    const dataPvc = view.get(PVCS, namespace, instance.primary.dataPvc);
    return {
      observed: {
        statefulSet: applied,
        ...(pod ? { pod } : {}),
        ...(dataPvc ? { dataPvc } : {}),
        ...(held ? { heldMajor: held } : {}),
      },
    };
  },
};
