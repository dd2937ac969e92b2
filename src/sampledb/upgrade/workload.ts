// Which image the StatefulSet may run. The data volume holds the files of one major version, recorded on the
// StatefulSet (`sampledb.io/data-major`); a server of another major refuses them and crash-loops. So a raised major
// in the spec does not reach the pod template until the major upgrade has converted the files: until then the
// StatefulSet keeps the image it has. A minor change (same major, another image or digest) goes straight through
// and the StatefulSet rolls the pod, gated on its readiness.
import type { V1StatefulSet } from '@kubernetes/client-node';
import { ANNOTATIONS, CONTAINERS, majorVersion } from '../../api/index.ts';
import type { SampleDbInstance } from '../instance.ts';

export interface WorkloadVersion {
  /** The image the pod template gets. */
  image: string;
  /** The major version of the files on the data volume. */
  dataMajor: number;
  /** Set when the spec's major differs from the data's: the image is held, an upgrade (or refusal) is due. */
  held?: { fromMajor: number; toMajor: number; specImage: string };
}

export function templateImage(sts: V1StatefulSet | undefined): string | undefined {
  return sts?.spec?.template?.spec?.containers?.find((c) => c.name === CONTAINERS.postgres)?.image;
}

/**
 * The major of the data files: the StatefulSet's record, else (a StatefulSet from before the record) the major the
 * server reported, else the spec's (a new StatefulSet initializes the files with the spec's version).
 */
export function dataMajorOf(instance: SampleDbInstance, existing: V1StatefulSet | undefined): number {
  const recorded = Number.parseInt(existing?.metadata?.annotations?.[ANNOTATIONS.dataMajor] ?? '', 10);
  if (!Number.isNaN(recorded)) return recorded;
  const reported = majorVersion(instance.object.status?.currentVersion ?? '');
  if (existing && !Number.isNaN(reported)) return reported;
  return majorVersion(instance.spec.version);
}

/** Pure: the image and data major for the StatefulSet of `instance`, given the one that exists. */
export function workloadVersion(
  instance: SampleDbInstance,
  existing: V1StatefulSet | undefined,
): WorkloadVersion {
  const specImage = instance.spec.image;
  const dataMajor = dataMajorOf(instance, existing);
  const specMajor = majorVersion(instance.spec.version);
  const current = templateImage(existing);
  if (specMajor === dataMajor || !current) return { image: specImage, dataMajor };
  return { image: current, dataMajor, held: { fromMajor: dataMajor, toMajor: specMajor, specImage } };
}

/** The major an unfinished major upgrade converts the files to, as the StatefulSet records it. */
export function upgradingToOf(existing: V1StatefulSet | undefined): number | undefined {
  const recorded = Number.parseInt(existing?.metadata?.annotations?.[ANNOTATIONS.upgradingTo] ?? '', 10);
  return Number.isNaN(recorded) ? undefined : recorded;
}

/** `sts` with the postgres container on `image`, the data major recorded, and the upgrade under way (if any). */
export function withWorkloadVersion(
  sts: V1StatefulSet,
  version: Pick<WorkloadVersion, 'image' | 'dataMajor'> & { upgradingTo?: number },
) {
  const containers = sts.spec?.template?.spec?.containers ?? [];
  for (const container of containers)
    if (container.name === CONTAINERS.postgres) container.image = version.image;
  const { [ANNOTATIONS.upgradingTo]: _previous, ...annotations } = sts.metadata?.annotations ?? {};
  sts.metadata = {
    ...sts.metadata,
    annotations: {
      ...annotations,
      [ANNOTATIONS.dataMajor]: String(version.dataMajor),
      ...(version.upgradingTo === undefined
        ? {}
        : { [ANNOTATIONS.upgradingTo]: String(version.upgradingTo) }),
    },
  };
  return sts;
}
