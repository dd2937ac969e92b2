// Owner references and the object metadata shared by every child of a SampleDB.
import type { V1ObjectMeta, V1OwnerReference } from '@kubernetes/client-node';
import { API_VERSION, KINDS } from '../api/index.ts';
import type { Component, SampleDbInstance } from './instance.ts';

export { COMPONENTS, type Component } from './instance.ts';

export function ownerReferenceTo(owner: {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; uid?: string };
}): V1OwnerReference {
  const { name, uid } = owner.metadata;
  if (!name || !uid) throw new Error(`${owner.kind} needs metadata.name and metadata.uid to own children`);
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name,
    uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

export function sampleDbOwnerReference(instance: SampleDbInstance): V1OwnerReference {
  return ownerReferenceTo({
    apiVersion: API_VERSION,
    kind: KINDS.sampleDb,
    metadata: instance.object.metadata,
  });
}

/** Metadata of a child owned by the SampleDB. */
export function childMeta(
  instance: SampleDbInstance,
  name: string,
  component: Component,
  extra: { annotations?: Record<string, string>; labels?: Record<string, string> } = {},
): V1ObjectMeta {
  return {
    name,
    namespace: instance.namespace,
    labels: { ...extra.labels, ...instance.labels[component] },
    ...(extra.annotations && Object.keys(extra.annotations).length > 0
      ? { annotations: extra.annotations }
      : {}),
    ownerReferences: [sampleDbOwnerReference(instance)],
  };
}
