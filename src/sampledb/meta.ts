// Labels, owner references and object metadata shared by every child of a SampleDB.
import type { V1ObjectMeta, V1OwnerReference } from '@kubernetes/client-node';
import { API_VERSION, type SampleDbObject } from '../api/index.ts';

export const COMPONENTS = [
  'database',
  'init',
  'backup',
  'restore',
  'credentials',
  'connection',
  'binding',
  'config',
] as const;
export type Component = (typeof COMPONENTS)[number];

export const LABEL_NAME = 'app.kubernetes.io/name';
export const LABEL_INSTANCE = 'app.kubernetes.io/instance';
export const LABEL_COMPONENT = 'app.kubernetes.io/component';
export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const APP_NAME = 'sampledb';
export const MANAGER = 'sampledb-operator';

/** Annotation on the pod template carrying the hash of postgresql.conf, so a settings change rolls the pod. */
export const CONFIG_HASH_ANNOTATION = 'sampledb.io/config-hash';

/** The labels every child carries; also the selector of the database pod (with component=database). */
export function labelsFor(db: SampleDbObject, component: Component): Record<string, string> {
  return {
    [LABEL_NAME]: APP_NAME,
    [LABEL_INSTANCE]: nameOf(db),
    [LABEL_COMPONENT]: component,
    [LABEL_MANAGED_BY]: MANAGER,
  };
}

/** Selects the children of one SampleDB, whatever their component (for list/watch). */
export function instanceSelector(db: SampleDbObject): Record<string, string> {
  return { [LABEL_NAME]: APP_NAME, [LABEL_INSTANCE]: nameOf(db), [LABEL_MANAGED_BY]: MANAGER };
}

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

export function sampleDbOwnerReference(db: SampleDbObject): V1OwnerReference {
  return ownerReferenceTo({ apiVersion: API_VERSION, kind: 'SampleDB', metadata: db.metadata });
}

export function nameOf(db: SampleDbObject): string {
  const name = db.metadata.name;
  if (!name) throw new Error('SampleDB has no metadata.name');
  return name;
}

export function namespaceOf(db: SampleDbObject): string {
  return db.metadata.namespace ?? 'default';
}

/** Metadata of a child owned by the SampleDB. */
export function childMeta(
  db: SampleDbObject,
  name: string,
  component: Component,
  extra: { annotations?: Record<string, string>; labels?: Record<string, string> } = {},
): V1ObjectMeta {
  return {
    name,
    namespace: namespaceOf(db),
    labels: { ...extra.labels, ...labelsFor(db, component) },
    ...(extra.annotations && Object.keys(extra.annotations).length > 0
      ? { annotations: extra.annotations }
      : {}),
    ownerReferences: [sampleDbOwnerReference(db)],
  };
}
