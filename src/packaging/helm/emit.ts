// Prints the template trees as Go-template YAML, the way a person would write the chart: block YAML, `{{- if }}`
// around conditional entries, `{{- range }}` for per-element objects and sequences. Every value that comes from an
// expression is printed through `toJson`, which is valid YAML for any string, so no value can break the document.
import { stringify } from 'yaml';
import type { Cond, Entry, Expr, ObjectTemplate, TNode } from './template.ts';

const ELEMENT = '$element';

const condition = (when: readonly Cond[]) =>
  when.length === 1 ? (when[0] as Cond).go : `and ${when.map((c) => `(${c.go})`).join(' ')}`;

/** A literal scalar as YAML; text that Go templates would read as an action is printed through one. */
function literal(value: null | boolean | number | string): string {
  if (typeof value === 'string') {
    if (value.includes('{{') || value.includes('}}')) return `{{ ${JSON.stringify(value)} | toJson }}`;
    const text = stringify(value, { lineWidth: 0 }).trimEnd();
    return text.includes('\n') ? JSON.stringify(value) : text;
  }
  return JSON.stringify(value);
}

/** The Go expression of a string built from parts. */
function stringExpr(parts: ReadonlyArray<string | Expr>): string {
  if (parts.length === 1 && typeof parts[0] !== 'string') {
    const { go } = parts[0] as Expr;
    // include, join and a range element already yield strings.
    return /^(include|join) |^\$element$/.test(go) ? `${go} | toJson` : `${go} | toString | toJson`;
  }
  const args = parts.map((p) => (typeof p === 'string' ? JSON.stringify(p) : `(toString (${p.go}))`));
  return `print ${args.join(' ')} | toJson`;
}

const isBlock = (node: TNode) =>
  (node.t === 'map' && node.entries.length > 0) ||
  (node.t === 'seq' && node.items.length > 0) ||
  node.t === 'each';

function inline(node: TNode): string {
  switch (node.t) {
    case 'lit':
      return literal(node.value);
    case 'str':
      return `{{ ${stringExpr(node.parts)} }}`;
    case 'expr':
      return node.as === 'int' ? `{{ ${node.expr.go} | int }}` : `{{ ${node.expr.go} }}`;
    case 'map':
      return '{}';
    case 'seq':
      return '[]';
    case 'each':
      throw new Error('a range is printed as a block');
  }
}

/** Lines of a conditional block: `{{- if }}` trims the newline before it, so the output keeps the YAML intact. */
function guarded(when: readonly Cond[], lines: string[]): string[] {
  return when.length === 0 ? lines : [`{{- if ${condition(when)} }}`, ...lines, '{{- end }}'];
}

/** The lines of `node` as the value of `prefix` (a `key:` or `-` at `indent` spaces). */
function valueLines(prefix: string, node: TNode, indent: number): string[] {
  const pad = ' '.repeat(indent);
  if (!isBlock(node)) return [`${pad}${prefix} ${inline(node)}`];
  const sequence = prefix === '-';
  if (node.t === 'each') {
    // `key:` then one item per element (or, as a sequence item, the items of a nested sequence).
    const item = itemLines(node.item, indent + 2);
    return [`${pad}${prefix}`, `{{- range ${ELEMENT} := ${node.list.go} }}`, ...item, '{{- end }}'];
  }
  const childIndent = indent + 2;
  const children =
    node.t === 'map'
      ? mapLines(node.entries, childIndent)
      : seqLines((node as { items: Entry[] }).items, childIndent);
  if (sequence && node.t === 'map' && !children[0]?.startsWith('{{-')) {
    // `- key: value` on the dash's line, the other keys under it.
    const [first, ...rest] = children;
    return [`${pad}- ${(first as string).trimStart()}`, ...rest];
  }
  return [`${pad}${prefix}`, ...children];
}

function itemLines(node: TNode, indent: number): string[] {
  return valueLines('-', node, indent);
}

function mapLines(entries: readonly Entry[], indent: number): string[] {
  return entries.flatMap((e) => guarded(e.when, valueLines(`${keyText(e.key as string)}:`, e.value, indent)));
}

function seqLines(items: readonly Entry[], indent: number): string[] {
  return items.flatMap((e) => guarded(e.when, itemLines(e.value, indent)));
}

function keyText(key: string): string {
  return literal(key);
}

/** One template file: the object, under its conditions, once or once per list element. */
export function emitTemplate(template: ObjectTemplate): string {
  if (template.body.t !== 'map') throw new Error(`${template.id}: an object must be a map`);
  const body = mapLines(template.body.entries, 0);
  const lines = template.each
    ? [`{{- range ${ELEMENT} := ${template.each.go} }}`, '---', ...body, '{{- end }}']
    : body;
  return `${guarded(template.when, lines).join('\n')}\n`;
}
