// The chart's templates as data: a tree per object whose leaves are literals or expressions over the values, with
// conditions on objects and map entries and ranges over list values. derive.ts builds it from the constructs,
// emit.ts prints it as Go templates, and render() evaluates it here, so the generator can check the tree against
// the constructs for every combination of values before a line of template is written.
import type { Json, JsonObject } from '../sources.ts';
import type { ChartValues, RenderContext } from './values.ts';

export interface Scope {
  readonly values: ChartValues;
  readonly context: RenderContext;
  /** The element of the list a `range` is at. */
  readonly element?: string;
}

/** A value read from the values: its Go template expression (with `$` the root context) and its TypeScript twin. */
export interface Expr {
  readonly go: string;
  readonly evaluate: (scope: Scope) => unknown;
  /** The values it reads (dotted paths), for the docs. */
  readonly reads?: readonly string[];
}

/** A condition: a Go template pipeline that is truthy when `holds`. */
export interface Cond {
  readonly go: string;
  readonly holds: (scope: Scope) => boolean;
}

export type TNode =
  | { readonly t: 'lit'; readonly value: null | boolean | number | string }
  /** A string built from literal text and expressions. */
  | { readonly t: 'str'; readonly parts: ReadonlyArray<string | Expr> }
  /** A number or boolean that an expression yields. */
  | { readonly t: 'expr'; readonly expr: Expr; readonly as: 'int' | 'bool' }
  | { readonly t: 'map'; readonly entries: Entry[] }
  | { readonly t: 'seq'; readonly items: Entry[] }
  /** A sequence with one item per element of a list value. */
  | { readonly t: 'each'; readonly list: Expr; readonly item: TNode };

export interface Entry {
  readonly key?: string;
  value: TNode;
  /** The entry exists only when every condition holds. */
  when: Cond[];
}

export interface ObjectTemplate {
  /** Construct path, with a list element written as `each` (one object per element). */
  readonly id: string;
  readonly when: Cond[];
  /** One object per element of this list value. */
  readonly each?: Expr;
  body: TNode;
}

export const not = (cond: Cond): Cond => ({
  go: `not (${cond.go})`,
  holds: (scope) => !cond.holds(scope),
});

export function renderNode(node: TNode, scope: Scope): Json {
  switch (node.t) {
    case 'lit':
      return node.value;
    case 'str':
      return node.parts.map((p) => (typeof p === 'string' ? p : String(p.evaluate(scope)))).join('');
    case 'expr': {
      const value = node.expr.evaluate(scope);
      return node.as === 'int' ? Math.trunc(Number(value)) : Boolean(value);
    }
    case 'map': {
      const out: JsonObject = {};
      for (const entry of node.entries) {
        if (entry.when.every((c) => c.holds(scope)))
          out[entry.key as string] = renderNode(entry.value, scope);
      }
      return out;
    }
    case 'seq':
      return node.items
        .filter((i) => i.when.every((c) => c.holds(scope)))
        .map((i) => renderNode(i.value, scope));
    case 'each':
      return (node.list.evaluate(scope) as string[]).map((element) =>
        renderNode(node.item, { ...scope, element }),
      );
  }
}

/** What helm would render for these values, per the tree: used to check the tree against the constructs. */
export function render(templates: readonly ObjectTemplate[], scope: Omit<Scope, 'element'>): JsonObject[] {
  const out: JsonObject[] = [];
  for (const template of templates) {
    if (!template.when.every((c) => c.holds(scope))) continue;
    const elements = template.each ? (template.each.evaluate(scope) as string[]) : [undefined];
    for (const element of elements) {
      out.push(
        renderNode(template.body, element === undefined ? scope : { ...scope, element }) as JsonObject,
      );
    }
  }
  return out;
}
