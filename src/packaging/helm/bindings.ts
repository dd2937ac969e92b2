// How each construct prop is fed from the chart's values: the Go template expression, its TypeScript twin, and how
// the prop shapes the synthesized objects (a plain value, a switch, a list, an optional value). derive.ts plants a
// sentinel for each prop and finds where it lands; propsFromValues() is the same mapping for the tests.
import { parseQuantity, type SampleDbOperatorProps, ValidationError } from '../../index.ts';
import type { Cond, Expr, Scope } from './template.ts';
import type { ChartValues, RenderContext } from './values.ts';

export const CHART = 'sampledb-operator';

/** `$.Values.a.b` and its twin. */
export function valueAt(path: string): Expr {
  const keys = path.split('.');
  return {
    go: `$.Values.${path}`,
    reads: [path],
    evaluate: (scope) =>
      keys.reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], scope.values),
  };
}

/** A named template of _helpers.tpl (see helpers.ts), called with the root context. */
export function helper(name: string, reads: readonly string[], evaluate: (scope: Scope) => unknown): Expr {
  return { go: `include "${CHART}.${name}" $`, evaluate, reads };
}

export const element: Expr = { go: '$element', evaluate: (scope) => scope.element };

export const truthy = (expr: Expr): Cond => ({
  go: expr.go,
  holds: (scope) => {
    const value = expr.evaluate(scope);
    return Array.isArray(value) ? value.length > 0 : Boolean(value);
  },
});

export const joined = (list: Expr, separator: string): Expr => ({
  go: `join ${JSON.stringify(separator)} ${list.go}`,
  evaluate: (scope) => (list.evaluate(scope) as string[]).join(separator),
});

/** `managed-by` says Helm on what helm installs (the constructs say cdk8s). */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const releaseService: Expr = { go: '$.Release.Service', evaluate: () => 'Helm' };

export function imageOf(values: ChartValues, context: RenderContext): string {
  const { repository, tag, digest } = values.image;
  return digest ? `${repository}@${digest}` : `${repository}:${tag || context.appVersion}`;
}

export function namespaceOf(values: ChartValues, context: RenderContext): string {
  return values.namespace || context.releaseNamespace;
}

/** The construct's V8 heap from the memory limit: 75%, at least 64 MiB (SampleDbOperator's NODE_OPTIONS). */
export function maxOldSpaceMiB(memoryLimit: string): number | undefined {
  const bytes = parseQuantity(memoryLimit);
  return bytes ? Math.max(64, Math.floor((bytes / 2 ** 20) * 0.75)) : undefined;
}

/** A leaf the constructs compute from a prop: the captured part becomes the expression. */
export interface Derived {
  readonly pattern: RegExp;
  readonly expr: Expr;
}

interface Common {
  /** Dotted path into SampleDbOperatorProps. */
  readonly prop: string;
  readonly expr: Expr;
}

export type Binding =
  /** A string or number that lands in the objects as itself (and inside strings). */
  | (Common & { readonly kind: 'scalar'; readonly sentinel: string | number; readonly derived?: Derived[] })
  /** A boolean: objects, entries or leaves depend on it. `context`: props both states need (e.g. replicas: 1). */
  | (Common & {
      readonly kind: 'toggle';
      readonly reference: boolean;
      readonly context?: Partial<SampleDbOperatorProps>;
    })
  /** A list of strings: objects per element, joined strings, sequences, entries present when non-empty. */
  | (Common & { readonly kind: 'list'; readonly sentinels: readonly [string, string] })
  /** A value that may be absent: entries present only when it is set. */
  | (Common & { readonly kind: 'optional'; readonly sentinel: string; readonly present: Cond });

const heap: Expr = helper('maxOldSpaceMiB', ['resources.limits.memory'], (s) =>
  maxOldSpaceMiB(s.values.resources.limits.memory),
);

/**
 * Every SampleDbOperator prop the chart sets. The `satisfies` below makes the type checker fail when the construct
 * gains a prop the chart does not map yet (add a value in values.ts and a binding here).
 */
export const BINDINGS = {
  image: {
    prop: 'image',
    kind: 'scalar',
    sentinel: 'sentinel.invalid/sdb-image:sentinel',
    expr: helper('image', ['image.repository', 'image.tag', 'image.digest'], (s) =>
      imageOf(s.values, s.context),
    ),
  },
  imagePullPolicy: {
    prop: 'imagePullPolicy',
    kind: 'scalar',
    sentinel: 'SdbSentinelPolicy',
    expr: valueAt('image.pullPolicy'),
  },
  imagePullSecrets: {
    prop: 'imagePullSecrets',
    kind: 'list',
    sentinels: ['sdbsentinelpullone', 'sdbsentinelpulltwo'],
    expr: valueAt('imagePullSecrets'),
  },
  namespace: {
    prop: 'namespace',
    kind: 'scalar',
    sentinel: 'sdbsentinelns',
    expr: helper('namespace', ['namespace'], (s) => namespaceOf(s.values, s.context)),
  },
  createNamespace: {
    prop: 'createNamespace',
    kind: 'toggle',
    reference: true,
    expr: valueAt('createNamespace'),
  },
  name: { prop: 'name', kind: 'scalar', sentinel: 'sdbsentinelbase', expr: valueAt('name') },
  replicas: { prop: 'replicas', kind: 'scalar', sentinel: 9137, expr: valueAt('replicas') },
  leaderElection: {
    prop: 'leaderElection',
    kind: 'toggle',
    reference: true,
    context: { replicas: 1 },
    expr: valueAt('leaderElection'),
  },
  watchNamespaces: {
    prop: 'watchNamespaces',
    kind: 'list',
    sentinels: ['sdbsentinelwatchone', 'sdbsentinelwatchtwo'],
    expr: valueAt('watchNamespaces'),
  },
  logLevel: { prop: 'logLevel', kind: 'scalar', sentinel: 'SdbSentinelLogLevel', expr: valueAt('logLevel') },
  'resources.requests.cpu': {
    prop: 'resources.requests.cpu',
    kind: 'scalar',
    sentinel: '4111m',
    expr: valueAt('resources.requests.cpu'),
  },
  'resources.requests.memory': {
    prop: 'resources.requests.memory',
    kind: 'scalar',
    sentinel: '4222Mi',
    expr: valueAt('resources.requests.memory'),
  },
  'resources.limits.cpu': {
    prop: 'resources.limits.cpu',
    kind: 'optional',
    sentinel: '4333m',
    expr: valueAt('resources.limits.cpu'),
    present: {
      go: 'hasKey $.Values.resources.limits "cpu"',
      holds: (s) => s.values.resources.limits.cpu !== undefined,
    },
  },
  'resources.limits.memory': {
    prop: 'resources.limits.memory',
    kind: 'scalar',
    sentinel: '4444Mi',
    expr: valueAt('resources.limits.memory'),
    derived: [{ pattern: /^--max-old-space-size=(\d+)$/, expr: heap }],
  },
  metricsPort: { prop: 'metricsPort', kind: 'scalar', sentinel: 40311, expr: valueAt('metricsPort') },
  healthPort: { prop: 'healthPort', kind: 'scalar', sentinel: 40322, expr: valueAt('healthPort') },
  postgresImageRepository: {
    prop: 'postgresImageRepository',
    kind: 'scalar',
    sentinel: 'sentinel.example/sdb-postgres-repository',
    expr: valueAt('postgresImageRepository'),
  },
  deletionProtection: {
    prop: 'deletionProtection',
    kind: 'toggle',
    reference: true,
    expr: valueAt('deletionProtection'),
  },
  monitoring: {
    prop: 'monitoring',
    kind: 'toggle',
    reference: true,
    expr: valueAt('monitoring.enabled'),
  },
} as const satisfies Record<
  | Exclude<keyof SampleDbOperatorProps, 'resources'>
  | `resources.${'requests' | 'limits'}.${'cpu' | 'memory'}`,
  Binding
>;

export const bindings: readonly Binding[] = Object.values(BINDINGS);

/** Sets a dotted path in a props object (creating the objects on the way). */
export function setProp(props: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = props;
  for (const key of keys.slice(0, -1)) {
    node[key] = { ...(node[key] as Record<string, unknown> | undefined) };
    node = node[key] as Record<string, unknown>;
  }
  if (value === undefined) delete node[keys.at(-1) as string];
  else node[keys.at(-1) as string] = value;
}

/**
 * The checks helm runs in templates/validate.yaml (values.schema.json covers types, ranges and patterns): the rules
 * that span two values, with the construct's messages where the construct has the same rule.
 */
export const CROSS_FIELD_RULES: ReadonlyArray<{
  readonly field: string;
  readonly message: string;
  /** Go condition under which the values are wrong (`.` is the root context). */
  readonly go: string;
  readonly violated: (values: ChartValues, context: RenderContext) => boolean;
}> = [
  {
    field: 'leaderElection',
    message: 'more than one replica needs leader election',
    go: 'and (gt (int .Values.replicas) 1) (not .Values.leaderElection)',
    violated: (v) => v.replicas > 1 && !v.leaderElection,
  },
  {
    field: 'healthPort',
    message: 'must differ from metricsPort',
    go: 'eq (int .Values.metricsPort) (int .Values.healthPort)',
    violated: (v) => v.metricsPort === v.healthPort,
  },
  {
    field: 'createNamespace',
    message:
      'needs namespace set to a namespace other than the release namespace (helm itself creates or needs that one)',
    go: `and .Values.createNamespace (eq (include "${CHART}.namespace" .) .Release.Namespace)`,
    violated: (v, c) => v.createNamespace && namespaceOf(v, c) === c.releaseNamespace,
  },
];

export function crossFieldErrors(values: ChartValues, context: RenderContext) {
  return CROSS_FIELD_RULES.filter((r) => r.violated(values, context)).map(({ field, message }) => ({
    field,
    message,
  }));
}

/** The construct props a set of chart values feeds, without the chart's cross-value checks. */
export function propsOf(values: ChartValues, context: RenderContext): SampleDbOperatorProps {
  const props: Record<string, unknown> = {};
  const scope: Scope = { values, context };
  for (const binding of bindings) setProp(props, binding.prop, binding.expr.evaluate(scope));
  return props as unknown as SampleDbOperatorProps;
}

/** The construct props a set of chart values stands for (what the templates must render the same as). */
export function propsFromValues(values: ChartValues, context: RenderContext): SampleDbOperatorProps {
  const errors = crossFieldErrors(values, context);
  if (errors.length > 0) throw new ValidationError('chart values', errors);
  return propsOf(values, context);
}
