// The VolumeSnapshot API (snapshot.storage.k8s.io/v1) as a cluster with the external-snapshotter CRDs serves it, but
// without its controller: tests install these CRDs and play the snapshot controller themselves, deciding when (and
// whether) a VolumeSnapshot becomes readyToUse. Only the shape the operator relies on is modelled.
import type { KubeObject, ResourceType } from '../../../src/runtime/index.ts';
import {
  SNAPSHOT_GROUP,
  VOLUME_SNAPSHOT_CLASSES,
  VOLUME_SNAPSHOTS,
} from '../../../src/sampledb/resources.ts';
import type { Manifest } from './manifests.ts';

export {
  SNAPSHOT_GROUP,
  VOLUME_SNAPSHOT_CLASSES,
  VOLUME_SNAPSHOTS,
} from '../../../src/sampledb/resources.ts';

export interface VolumeSnapshot extends KubeObject {
  spec?: { source?: { persistentVolumeClaimName?: string }; volumeSnapshotClassName?: string };
  status?: {
    readyToUse?: boolean;
    creationTime?: string;
    restoreSize?: string;
    error?: { message?: string; time?: string };
  };
}

const openObject = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

function crd(
  rt: ResourceType,
  listKind: string,
  schema: Record<string, unknown>,
  statusSubresource: boolean,
): Manifest {
  const metadata = {
    name: `${rt.plural}.${rt.group}`,
    // *.k8s.io is a protected group: the apiserver refuses its CRDs without this approval, which upstream's carry.
    annotations: {
      'api-approved.kubernetes.io': 'https://github.com/kubernetes-csi/external-snapshotter/pull/814',
    },
  };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata,
    spec: {
      group: rt.group,
      names: { plural: rt.plural, singular: rt.kind.toLowerCase(), kind: rt.kind, listKind },
      scope: rt.namespaced ? 'Namespaced' : 'Cluster',
      versions: [
        {
          name: rt.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: schema },
          ...(statusSubresource ? { subresources: { status: {} } } : {}),
        },
      ],
    },
  };
}

/** Minimal volumesnapshots and volumesnapshotclasses CRDs: the upstream names, scopes and status subresource. */
export function snapshotCrdManifests(): Manifest[] {
  return [
    crd(
      VOLUME_SNAPSHOTS,
      'VolumeSnapshotList',
      {
        type: 'object',
        required: ['spec'],
        properties: { spec: openObject, status: openObject },
      },
      true,
    ),
    // Upstream, a VolumeSnapshotClass has its fields at the top level (no spec).
    crd(
      VOLUME_SNAPSHOT_CLASSES,
      'VolumeSnapshotClassList',
      {
        type: 'object',
        required: ['driver', 'deletionPolicy'],
        properties: {
          driver: { type: 'string' },
          deletionPolicy: { type: 'string', enum: ['Delete', 'Retain'] },
          parameters: { type: 'object', additionalProperties: { type: 'string' } },
        },
      },
      false,
    ),
  ];
}

export function volumeSnapshotClass(name: string, driver: string): Manifest {
  return {
    apiVersion: `${SNAPSHOT_GROUP}/v1`,
    kind: 'VolumeSnapshotClass',
    metadata: { name },
    driver,
    deletionPolicy: 'Delete',
  };
}
