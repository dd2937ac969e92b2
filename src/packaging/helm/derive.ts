// Derives the chart's templates from the constructs. Every prop gets a sentinel value; one synthesis with all of them
// (the reference) shows where each lands, and for switches, lists and optional values one more synthesis per state
// shows which objects, entries and leaves depend on them. Whatever does not fit these shapes stops the generator
// with the object and field named, so a construct change can never turn into a quietly wrong chart. verify() then
// renders the result for every combination of states and compares it with the constructs.
import { isDeepStrictEqual } from 'node:util';
import type { SampleDbOperatorProps } from '../../index.ts';
import { type Json, type JsonObject, operatorObjects, type SynthesizedObject } from '../sources.ts';
import {
  type Binding,
  bindings,
  element,
  joined,
  MANAGED_BY_LABEL,
  releaseService,
  setProp,
  truthy,
} from './bindings.ts';
import { type Cond, type Entry, type Expr, not, type ObjectTemplate, type TNode } from './template.ts';

type ScalarBinding = Extract<Binding, { kind: 'scalar' | 'optional' }>;
type ListBinding = Extract<Binding, { kind: 'list' }>;

class TemplateError extends Error {
  constructor(where: string, message: string) {
    super(`helm chart generator: ${where}: ${message}`);
    this.name = 'TemplateError';
  }
}

/** The reference props: every prop at its sentinel, switches at their reference state, lists with one element. */
function referenceProps(overrides: Record<string, unknown> = {}): SampleDbOperatorProps {
  const props: Record<string, unknown> = {};
  for (const b of bindings) {
    if (b.kind === 'toggle') setProp(props, b.prop, b.reference);
    else if (b.kind === 'list') setProp(props, b.prop, [b.sentinels[0]]);
    else setProp(props, b.prop, b.sentinel);
  }
  for (const [path, value] of Object.entries(overrides)) setProp(props, path, value);
  return props as unknown as SampleDbOperatorProps;
}

const byPath = (objects: SynthesizedObject[]) => new Map(objects.map((o) => [o.path, o.manifest]));

/** A template being derived: the construct path it comes from and the prop overrides it was synthesized under. */
interface Draft extends ObjectTemplate {
  readonly path: string;
  readonly state: Readonly<Record<string, unknown>>;
}

const synthesizeAt = (state: Readonly<Record<string, unknown>>) =>
  byPath(operatorObjects(referenceProps(state)));

/** What is substituted inside one object: the scalar sentinels, and in a per-element object the element. */
interface Substitutions {
  readonly scalars: ReadonlyArray<{ sentinel: string; expr: Expr; numeric: boolean }>;
  readonly derived: ReadonlyArray<{ pattern: RegExp; expr: Expr }>;
  readonly element?: string;
}

function substitutionsOf(scalars: readonly ScalarBinding[]): Substitutions {
  return {
    scalars: scalars.map((b) => ({
      sentinel: String(b.sentinel),
      expr: b.expr,
      numeric: typeof b.sentinel === 'number',
    })),
    derived: scalars.flatMap((b) => (b.kind === 'scalar' ? (b.derived ?? []) : [])),
  };
}

/** Splits a string at the sentinels it contains. */
function partsOf(value: string, subs: Substitutions): Array<string | Expr> {
  const tokens = [
    ...subs.scalars.map((s) => ({ text: s.sentinel, expr: s.expr })),
    ...(subs.element ? [{ text: subs.element, expr: element }] : []),
  ];
  const parts: Array<string | Expr> = [];
  let rest = value;
  while (rest.length > 0) {
    let first: { index: number; text: string; expr: Expr } | undefined;
    for (const token of tokens) {
      const index = rest.indexOf(token.text);
      if (index >= 0 && (!first || index < first.index)) first = { index, ...token };
    }
    if (!first) {
      parts.push(rest);
      break;
    }
    if (first.index > 0) parts.push(rest.slice(0, first.index));
    parts.push(first.expr);
    rest = rest.slice(first.index + first.text.length);
  }
  return parts;
}

function templatize(value: Json, subs: Substitutions, where: string): TNode {
  if (typeof value === 'string') {
    for (const d of subs.derived) {
      const match = d.pattern.exec(value);
      if (match?.[1] !== undefined) {
        const at = value.indexOf(match[1], match.index + match[0].indexOf(match[1]));
        return {
          t: 'str',
          parts: [value.slice(0, at), d.expr, value.slice(at + match[1].length)].filter((p) => p !== ''),
        };
      }
    }
    const parts = partsOf(value, subs);
    return parts.every((p) => typeof p === 'string') ? { t: 'lit', value } : { t: 'str', parts };
  }
  if (typeof value === 'number') {
    const scalar = subs.scalars.find((s) => s.numeric && Number(s.sentinel) === value);
    return scalar ? { t: 'expr', expr: scalar.expr, as: 'int' } : { t: 'lit', value };
  }
  if (value === null || typeof value === 'boolean') return { t: 'lit', value };
  if (Array.isArray(value)) {
    return {
      t: 'seq',
      items: value.map((v, i) => ({ value: templatize(v, subs, `${where}[${i}]`), when: [] })),
    };
  }
  const entries: Entry[] = [];
  for (const [key, child] of Object.entries(value)) {
    const keyParts = partsOf(key, subs);
    if (
      keyParts.length !== 1 ||
      typeof keyParts[0] !== 'string' ||
      (subs.element && key.includes(subs.element))
    )
      throw new TemplateError(where, `the key "${key}" depends on a value; keys cannot be templated`);
    const node =
      key === MANAGED_BY_LABEL && child === 'cdk8s'
        ? ({ t: 'str', parts: [releaseService] } as const)
        : templatize(child, subs, `${where}.${key}`);
    entries.push({ key, value: node, when: [] });
  }
  return { t: 'map', entries };
}

const contains = (value: Json, text: string) => JSON.stringify(value).includes(text);
const swap = (value: Json, from: string, to: string) =>
  JSON.parse(JSON.stringify(value).replaceAll(from, to)) as Json;

/**
 * Walks a template alongside two syntheses that differ in one state (`a`: the template's state, `b`: the other one):
 * map entries only in `a` get `onlyInA`, entries only in `b` are added with `onlyInB`, and differing leaves go to
 * `leaf`, which returns the node to use or undefined when it cannot explain the difference.
 */
function annotate(
  node: TNode,
  a: Json,
  b: Json,
  where: string,
  handlers: {
    onlyInA?: Cond;
    onlyInB?: Cond;
    subs: Substitutions;
    leaf: (node: TNode, a: Json, b: Json) => TNode | undefined;
  },
): TNode {
  if (isDeepStrictEqual(a, b)) return node;
  const isMap = (v: Json): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (node.t === 'map' && isMap(a) && isMap(b)) {
    for (const entry of node.entries) {
      const key = entry.key as string;
      if (!(key in b)) {
        if (!handlers.onlyInA) throw new TemplateError(`${where}.${key}`, 'present in one state only');
        entry.when.push(handlers.onlyInA);
      } else entry.value = annotate(entry.value, a[key] as Json, b[key] as Json, `${where}.${key}`, handlers);
    }
    for (const [key, value] of Object.entries(b)) {
      if (key in a) continue;
      if (!handlers.onlyInB) throw new TemplateError(`${where}.${key}`, 'present in one state only');
      node.entries.push({
        key,
        value: templatize(value, handlers.subs, `${where}.${key}`),
        when: [handlers.onlyInB],
      });
    }
    return node;
  }
  if (node.t === 'seq' && Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    node.items.forEach((item, i) => {
      item.value = annotate(item.value, a[i] as Json, b[i] as Json, `${where}[${i}]`, handlers);
    });
    return node;
  }
  const replaced = handlers.leaf(node, a, b);
  if (!replaced)
    throw new TemplateError(
      where,
      `changes from ${JSON.stringify(a)} to ${JSON.stringify(b)} in a way the chart cannot template`,
    );
  return replaced;
}

type Drafts = Map<string, Draft>;

/** Tries to explain the difference with `annotate`; if it cannot, the object becomes two variants, one per state. */
function annotateOrSplit(
  drafts: Drafts,
  draft: Draft,
  a: JsonObject,
  b: JsonObject,
  handlers: Parameters<typeof annotate>[4] & { onlyInA: Cond; onlyInB: Cond },
  otherState: Record<string, unknown>,
  variant: string,
): void {
  try {
    // annotate mutates the tree; work on a copy so a failed attempt leaves the draft as it was.
    const body = annotate(structuredCloneNode(draft.body), a, b, draft.id, handlers);
    draft.body = body;
  } catch (error) {
    if (!(error instanceof TemplateError)) throw error;
    draft.when.push(handlers.onlyInA);
    const id = `${draft.id}#${variant}`;
    drafts.set(id, {
      id,
      path: draft.path,
      state: { ...draft.state, ...otherState },
      when: [...draft.when.slice(0, -1), handlers.onlyInB],
      body: templatize(b, handlers.subs, id),
    });
  }
}

/** A deep copy of a tree (expressions and conditions are shared: they are immutable). */
function structuredCloneNode(node: TNode): TNode {
  switch (node.t) {
    case 'map':
      return {
        t: 'map',
        entries: node.entries.map((e) => ({ ...e, value: structuredCloneNode(e.value), when: [...e.when] })),
      };
    case 'seq':
      return {
        t: 'seq',
        items: node.items.map((e) => ({ ...e, value: structuredCloneNode(e.value), when: [...e.when] })),
      };
    case 'each':
      return { ...node, item: structuredCloneNode(node.item) };
    default:
      return node;
  }
}

/** Per-element objects, joins and sequences of a list prop, from syntheses with one, two and no elements. */
function applyList(drafts: Drafts, list: ListBinding, subs: Substitutions): void {
  const [one, two] = list.sentinels;
  const nonEmpty = truthy(list.expr);
  const empty = not(nonEmpty);
  for (const [state, group] of groupByState(drafts)) {
    const reference = synthesizeAt(state);
    const withTwo = synthesizeAt({ ...state, [list.prop]: [one, two] });
    const withNone = synthesizeAt({ ...state, [list.prop]: [] });
    const accounted = new Set<string>();

    for (const draft of group) {
      const manifest = reference.get(draft.path);
      if (!manifest || !contains(manifest, one)) continue;
      const twin = [...withTwo].find(
        ([p, m]) =>
          p !== draft.path &&
          contains(m, two) &&
          !contains(m, one) &&
          isDeepStrictEqual(swap(m, two, one), manifest),
      );
      if (twin) {
        // One object per element: a range over the list.
        accounted.add(twin[0]);
        drafts.delete(draft.id);
        const id = draft.id.replaceAll(one, 'each');
        drafts.set(id, {
          ...draft,
          id,
          each: list.expr,
          body: templatize(manifest, { ...subs, element: one }, id),
        });
        continue;
      }
      // A shared object: each leaf holding the element is a join (string) or a sequence with one item per element.
      const other = withTwo.get(draft.path);
      if (!other) throw new TemplateError(draft.id, `disappears when ${list.prop} has two elements`);
      draft.body = annotate(draft.body, manifest, other, draft.id, {
        subs,
        leaf: (_node, a, b) => {
          if (typeof a === 'string' && typeof b === 'string' && a.includes(one)) {
            const at = a.indexOf(one);
            const separator = b.slice(at + one.length, b.indexOf(two));
            if (b === a.replace(one, `${one}${separator}${two}`)) {
              const join = joined(list.expr, separator);
              const parts = partsOf(a, subs).flatMap((p) =>
                typeof p === 'string' ? partsOfElement(p, one, join) : [p],
              );
              return { t: 'str', parts };
            }
          }
          if (
            Array.isArray(a) &&
            Array.isArray(b) &&
            a.length === 1 &&
            b.length === 2 &&
            isDeepStrictEqual(swap(a[0] as Json, one, two), b[1])
          ) {
            return {
              t: 'each',
              list: list.expr,
              item: templatize(a[0] as Json, { ...subs, element: one }, draft.id),
            };
          }
          return undefined;
        },
      });
    }
    for (const path of withTwo.keys()) {
      if (!reference.has(path) && !accounted.has(path))
        throw new TemplateError(
          path,
          `appears with two ${list.prop} but is not a copy of a one-element object`,
        );
    }

    // Empty list: objects that exist only with elements, or only without; entries present only with elements.
    for (const draft of group) {
      if (draft.each || !drafts.has(draft.id)) continue;
      const manifest = reference.get(draft.path) as JsonObject;
      const other = withNone.get(draft.path);
      if (!other) {
        draft.when.push(nonEmpty);
        continue;
      }
      annotateOrSplit(
        drafts,
        draft,
        manifest,
        other,
        {
          subs,
          onlyInA: nonEmpty,
          onlyInB: empty,
          // A join of no elements leaves the text around it.
          leaf: (node, a, b) =>
            typeof a === 'string' && typeof b === 'string' && node.t === 'str' && b === a.replace(one, '')
              ? node
              : undefined,
        },
        { [list.prop]: [] },
        `no-${list.prop}`,
      );
    }
    addObjectsOnlyIn(drafts, group, reference, withNone, {
      state: { ...state, [list.prop]: [] },
      when: empty,
      variant: `no-${list.prop}`,
      subs,
    });
  }
}

/** Objects that exist only in the other state's synthesis: new templates, under that state's condition. */
function addObjectsOnlyIn(
  drafts: Drafts,
  group: readonly Draft[],
  here: Map<string, JsonObject>,
  there: Map<string, JsonObject>,
  other: { state: Record<string, unknown>; when: Cond; variant: string; subs: Substitutions },
): void {
  const known = new Set(group.map((d) => d.path));
  for (const [path, manifest] of there) {
    if (here.has(path) || known.has(path)) continue;
    const id = `${path}#${other.variant}`;
    drafts.set(id, {
      id,
      path,
      state: other.state,
      when: [other.when],
      body: templatize(manifest, other.subs, id),
    });
  }
}

function partsOfElement(text: string, one: string, expr: Expr): Array<string | Expr> {
  const at = text.indexOf(one);
  if (at < 0) return [text];
  return [text.slice(0, at), expr, text.slice(at + one.length)].filter((p) => p !== '');
}

function groupByState(drafts: Drafts): Array<[Record<string, unknown>, Draft[]]> {
  const groups = new Map<string, [Record<string, unknown>, Draft[]]>();
  for (const draft of drafts.values()) {
    const key = JSON.stringify(draft.state);
    const group = groups.get(key) ?? [{ ...draft.state }, []];
    group[1].push(draft);
    groups.set(key, group);
  }
  return [...groups.values()];
}

/** Objects, entries and leaves that follow a switch. */
function applyToggle(
  drafts: Drafts,
  toggle: Extract<Binding, { kind: 'toggle' }>,
  subs: Substitutions,
): void {
  const on = truthy(toggle.expr);
  const inA = toggle.reference ? on : not(on);
  const inB = toggle.reference ? not(on) : on;
  for (const [state, group] of groupByState(drafts)) {
    const context = { ...state, ...(toggle.context ?? {}) } as Record<string, unknown>;
    const a = synthesizeAt(context);
    const b = synthesizeAt({ ...context, [toggle.prop]: !toggle.reference });
    for (const draft of group) {
      const left = a.get(draft.path);
      const right = b.get(draft.path);
      if (!left) throw new TemplateError(draft.id, `missing under ${JSON.stringify(toggle.context ?? {})}`);
      if (!right) {
        draft.when.push(inA);
        continue;
      }
      annotateOrSplit(
        drafts,
        draft,
        left,
        right,
        {
          subs,
          onlyInA: inA,
          onlyInB: inB,
          leaf: (_node, x, y) => {
            if (x === toggle.reference && y === !toggle.reference)
              return { t: 'expr', expr: toggle.expr, as: 'bool' };
            if (x === String(toggle.reference) && y === String(!toggle.reference))
              return { t: 'str', parts: [toggle.expr] };
            return undefined;
          },
        },
        { [toggle.prop]: !toggle.reference },
        `not-${toggle.prop}`,
      );
    }
    addObjectsOnlyIn(drafts, group, a, b, {
      state: { ...state, [toggle.prop]: !toggle.reference },
      when: inB,
      variant: `not-${toggle.prop}`,
      subs,
    });
  }
}

/** Entries (or objects) present only while an optional value is set. */
function applyOptional(
  drafts: Drafts,
  optional: Extract<Binding, { kind: 'optional' }>,
  subs: Substitutions,
): void {
  for (const [state, group] of groupByState(drafts)) {
    const withValue = synthesizeAt(state);
    const without = synthesizeAt({ ...state, [optional.prop]: undefined });
    for (const draft of group) {
      const left = withValue.get(draft.path);
      const right = without.get(draft.path);
      if (!left || draft.each) continue;
      if (!right) {
        draft.when.push(optional.present);
        continue;
      }
      draft.body = annotate(draft.body, left, right, draft.id, {
        subs,
        onlyInA: optional.present,
        leaf: () => undefined,
      });
    }
  }
}

/** The chart's object templates, derived from the operator construct. */
export function deriveTemplates(): ObjectTemplate[] {
  const scalars = bindings.filter((b): b is ScalarBinding => b.kind === 'scalar' || b.kind === 'optional');
  const subs = substitutionsOf(scalars);
  const referenceObjects = operatorObjects(referenceProps());

  const sentinels = bindings.flatMap((b) =>
    b.kind === 'list' ? [...b.sentinels] : b.kind === 'toggle' ? [] : [String(b.sentinel)],
  );
  for (const sentinel of sentinels) {
    const clash = sentinels.find((other) => other !== sentinel && other.includes(sentinel));
    if (clash) throw new TemplateError('sentinels', `"${sentinel}" is part of "${clash}"`);
  }
  for (const b of scalars) {
    if (!referenceObjects.some((o) => contains(o.manifest, String(b.sentinel))))
      throw new TemplateError(
        b.prop,
        'the prop does not reach any object (is it still a prop of SampleDbOperator?)',
      );
  }

  const drafts: Drafts = new Map();
  for (const { path, manifest } of referenceObjects)
    drafts.set(path, { id: path, path, state: {}, when: [], body: templatize(manifest, subs, path) });
  for (const b of bindings) if (b.kind === 'list') applyList(drafts, b, subs);
  for (const b of bindings) if (b.kind === 'toggle') applyToggle(drafts, b, subs);
  for (const b of bindings) if (b.kind === 'optional') applyOptional(drafts, b, subs);
  return [...drafts.values()].map(({ id, when, each, body }) => ({
    id,
    when,
    ...(each ? { each } : {}),
    body,
  }));
}
