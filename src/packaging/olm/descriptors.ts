// OLM UI descriptors from the CRD schemas: one spec descriptor per spec field and one status descriptor per status
// field, with the x-descriptor that tells the console how to show and edit it (a switch for booleans, a select for
// enums, a Secret/ConfigMap/StorageClass picker for references, conditions and phase for status).
import type { Json, JsonObject } from '../sources.ts';

export interface Descriptor {
  path: string;
  displayName: string;
  description: string;
  'x-descriptors': string[];
}

interface SchemaNode {
  type?: string;
  required?: string[];
  description?: string;
  enum?: string[];
  properties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode | boolean;
  items?: SchemaNode;
}

const UI = 'urn:alm:descriptor:com.tectonic.ui';
const K8S = 'urn:alm:descriptor:io.kubernetes';

const humanize = (key: string) =>
  key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/^./, (c) => c.toUpperCase())
    .replace(/\bSql\b/g, 'SQL')
    .replace(/\bSQ L\b/g, 'SQL');

/**
 * "version" -> "Version", "storage.size" -> "Storage Size", "bootstrap.credentialsSecret.name" -> "Credentials
 * Secret": nested fields carry their parent's name, a reference is named after what it refers to.
 */
export function displayNameOf(path: string): string {
  const keys = path.split('.');
  const last = keys.at(-1) ?? path;
  const parent = keys.at(-2);
  if (!parent) return humanize(last);
  if (last === 'name') return humanize(parent);
  return `${humanize(parent)} ${humanize(last)}`;
}

/** The first sentence, not fooled by "e.g." or a quoted example. */
const firstSentence = (text = '') => /^(.*?[.!?]["')]?)(?=\s+[A-Z]|$)/s.exec(text)?.[1] ?? text;

/** Which kind of object a `{ name }` reference names, from the field that holds it. */
function referenceKind(path: string, description = ''): string | undefined {
  if (/secret/i.test(path) || /\bSecret\b/.test(description)) return `${K8S}:core:v1:Secret`;
  if (/\bConfigMap\b/.test(description)) return `${K8S}:core:v1:ConfigMap`;
  return undefined;
}

/** Fields the console shows up front (besides the required ones); the rest sit under "Advanced". */
const BASIC = new Set(['backup.schedule', 'deletion.policy', 'deletion.protection']);

function specDescriptorsOf(node: SchemaNode, path: string, required: boolean, out: Descriptor[]): void {
  const props = node.properties ?? {};
  // The resources block as one editor, and `{ name }` references as pickers of the referenced kind.
  if (/(^|\.)resources$/.test(path) && props.requests && props.limits) {
    out.push(descriptor(path, node, [`${UI}:resourceRequirements`]));
    return;
  }
  const keys = Object.keys(props);
  const reference =
    keys.length > 0 && keys.every((k) => k === 'name' || k === 'key')
      ? referenceKind(path, `${node.description ?? ''} ${props.name?.description ?? ''}`)
      : undefined;
  if (reference && props.name) {
    out.push(
      descriptor(`${path}.name`, { description: node.description ?? props.name.description }, [reference]),
    );
    if (props.key) specDescriptorsOf(props.key, `${path}.key`, false, out);
    return;
  }
  if (node.type === 'object' && node.properties) {
    for (const [key, child] of Object.entries(node.properties)) {
      const childPath = path ? `${path}.${key}` : key;
      specDescriptorsOf(child, childPath, required && (node.required ?? []).includes(key), out);
    }
    return;
  }
  const xs: string[] = [];
  if (node.enum) xs.push(...node.enum.map((v) => `${UI}:select:${v}`));
  else if (node.type === 'boolean') xs.push(`${UI}:booleanSwitch`);
  else if (node.type === 'integer' || node.type === 'number') xs.push(`${UI}:number`);
  else if (/storageClassName$/.test(path)) xs.push(`${K8S}:StorageClass`);
  else if (node.type === 'string') xs.push(`${UI}:text`);
  else return; // maps of settings and annotations: edited as YAML
  if (!required && !BASIC.has(path)) xs.push(`${UI}:advanced`);
  out.push(descriptor(path, node, xs));
}

function descriptor(path: string, node: SchemaNode, xs: string[]): Descriptor {
  return {
    path,
    displayName: displayNameOf(path),
    description: firstSentence(node.description),
    'x-descriptors': xs,
  };
}

function statusDescriptorsOf(node: SchemaNode, path: string, out: Descriptor[]): void {
  if (path === 'conditions') {
    out.push(descriptor(path, node, [`${K8S}.conditions`]));
    return;
  }
  if (path === 'phase') {
    out.push(descriptor(path, node, [`${K8S}.phase`]));
    return;
  }
  if (node.type === 'object' && node.properties) {
    for (const [key, child] of Object.entries(node.properties))
      statusDescriptorsOf(child, path ? `${path}.${key}` : key, out);
    return;
  }
  if (path === 'observedGeneration') return; // bookkeeping, not for people
  const secret =
    /secret/i.test(node.description ?? '') && path.endsWith('.name') ? `${K8S}:core:v1:Secret` : undefined;
  out.push(descriptor(path, node, [secret ?? `${UI}:text`]));
}

/** The spec and status descriptors of one CRD (its stored version). */
export function descriptorsOf(crd: JsonObject): {
  specDescriptors: Descriptor[];
  statusDescriptors: Descriptor[];
} {
  const versions = (crd.spec as { versions: Array<{ storage: boolean; schema: { openAPIV3Schema: Json } }> })
    .versions;
  const stored = versions.find((v) => v.storage) ?? versions[0];
  const schema = stored?.schema.openAPIV3Schema as unknown as SchemaNode;
  const specDescriptors: Descriptor[] = [];
  const statusDescriptors: Descriptor[] = [];
  if (schema.properties?.spec) specDescriptorsOf(schema.properties.spec, '', true, specDescriptors);
  if (schema.properties?.status) statusDescriptorsOf(schema.properties.status, '', statusDescriptors);
  return { specDescriptors, statusDescriptors };
}
