// The StatefulSet. Its volumeClaimTemplates are immutable, so the template keeps the size it was created with; a
// larger spec.storage.size is applied to the PVCs themselves by the storage step.
import type { V1PersistentVolumeClaim, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import type { SampleDbInstance } from '../instance.ts';
import { PODS, PVCS, STATEFULSETS } from '../resources.ts';
import { statefulSet } from '../statefulset.ts';
import type { Step } from './context.ts';

type Cached<T> = T & { metadata: object };

/** The StatefulSet to apply: the builder's, with the claim template size of the existing object. */
export function desiredStatefulSet(
  instance: SampleDbInstance,
  existing: V1StatefulSet | undefined,
): V1StatefulSet {
  const templateSize = existing?.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests?.storage;
  if (!templateSize) return statefulSet(instance);
  const { spec } = instance;
  return statefulSet({ ...instance, spec: { ...spec, storage: { ...spec.storage, size: templateSize } } });
}

export const applyStatefulSet: Step = {
  name: 'statefulset',
  async run(ctx) {
    const { instance, view, client } = ctx;
    const { namespace, names } = instance;
    const existing = view.get<Cached<V1StatefulSet>>(STATEFULSETS, namespace, names.statefulSet);
    ctx.observed.statefulSet = await client.apply<Cached<V1StatefulSet>>(
      STATEFULSETS,
      desiredStatefulSet(instance, existing) as never,
    );
    ctx.observed.pod = view.get<Cached<V1Pod>>(PODS, namespace, names.pod);
    ctx.observed.dataPvc = view.get<Cached<V1PersistentVolumeClaim>>(PVCS, namespace, names.dataPvc);
    return undefined;
  },
};
