// Labels, owner references and object metadata shared by every child of a SampleDB.
import type { V1ObjectMeta, V1OwnerReference } from '@kubernetes/client-node';
import { API_VERSION, APP_NAME, KINDS, LABELS, OPERATOR_NAME, type SampleDbObject } from '../api/index.ts';

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

/** The labels every child carries; also the selector of the database pod (with component=database). */
export function labelsFor(db: SampleDbObject, component: Component): Record<string, string> {
  return {
    [LABELS.name]: APP_NAME,
    [LABELS.instance]: nameOf(db),
    [LABELS.component]: component,
    [LABELS.managedBy]: OPERATOR_NAME,
  };
}

/** Selects the children of one SampleDB, whatever their component (for list/watch). */
export function instanceSelector(db: SampleDbObject): Record<string, string> {
  return { [LABELS.name]: APP_NAME, [LABELS.instance]: nameOf(db), [LABELS.managedBy]: OPERATOR_NAME };
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
  return ownerReferenceTo({ apiVersion: API_VERSION, kind: KINDS.sampleDb, metadata: db.metadata });
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
