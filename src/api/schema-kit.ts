// Building blocks for CRD schemas with TypeBox.
//
// Why these wrappers: a CRD's openAPIV3Schema must be *structural* (every node has a `type`, no `anyOf` carrying
// types, enums as `enum`, not `anyOf: [{const}]`). TypeBox's Union/Literal emit anyOf-of-const, so enums and
// Kubernetes quantities are declared here as `Type.Unsafe` nodes that carry the exact JSON the apiserver expects
// while still giving precise TypeScript types.
import { type SchemaOptions, type TSchema, type TUnsafe, Type } from '@sinclair/typebox';

/**
 * A CEL validation rule (`x-kubernetes-validations`) together with the same rule written in TypeScript.
 *
 * The CEL text is what the apiserver enforces; `holds` lets the constructs and the controller give the same
 * answer without a cluster. Integration tests on a real apiserver prove that both agree.
 * Transition rules (those that read `oldSelf`) only run on the apiserver and so take a `holdsOnUpdate` instead.
 */
export interface ValidationRule<Self = unknown> {
  /** The CEL expression; `self` is the value of the node the rule is attached to. */
  readonly rule: string;
  /** Shown to the user when the rule fails. Must say what to do. */
  readonly message: string;
  /** Field the error is reported on, relative to the node (e.g. `.size`), so `kubectl` names the field. */
  readonly fieldPath?: string;
  /**
   * Field the TypeScript twin names when `fieldPath` cannot express it (CEL fieldPath must stay inside the
   * schema, so a root rule on `metadata.name` reports on the object; the message names the field either way).
   */
  readonly reportAt?: string;
  /** Machine-readable reason reported by the apiserver. */
  readonly reason?:
    | 'FieldValueInvalid'
    | 'FieldValueForbidden'
    | 'FieldValueRequired'
    | 'FieldValueDuplicate';
  /** TypeScript twin of `rule` for values that exist (create-time and synth-time checks). */
  readonly holds?: (self: Self) => boolean;
  /** TypeScript twin of a transition rule. */
  readonly holdsOnUpdate?: (self: Self, oldSelf: Self) => boolean;
}

const RULES = Symbol.for('sampledb.io/rules');

/** Attaches CEL rules to a schema node (emitted as `x-kubernetes-validations`, kept for TS checks too). */
export function withRules<T extends TSchema>(schema: T, rules: ValidationRule<never>[]): T {
  const cel = rules.map(({ rule, message, fieldPath, reason }) => ({
    rule,
    message,
    ...(fieldPath ? { fieldPath } : {}),
    ...(reason ? { reason } : {}),
  }));
  Object.assign(schema, { 'x-kubernetes-validations': cel });
  // Enumerable so that TypeBox's modifiers (Type.Optional spreads the node) carry the rules along; JSON output
  // ignores symbol keys, so the CRD only shows the CEL.
  Object.defineProperty(schema, RULES, { value: rules, enumerable: true });
  return schema;
}

/** The rules attached to a node by {@link withRules}. */
export function rulesOf(schema: TSchema): readonly ValidationRule[] {
  return ((schema as unknown as Record<symbol, unknown>)[RULES] as ValidationRule[] | undefined) ?? [];
}

/** A string enum, emitted as `{type: string, enum: [...]}`. */
export function StringEnum<const V extends readonly string[]>(
  values: V,
  options: SchemaOptions = {},
): TUnsafe<V[number]> {
  return Type.Unsafe<V[number]>({ ...options, type: 'string', enum: [...values] });
}

/** Kubernetes quantity strings as the apiserver parses them (`resource.Quantity`), e.g. `10Gi`, `500m`, `1.5`. */
export const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

/** A quantity written as a string (the form users write in YAML), e.g. `10Gi`. */
export function Quantity(options: SchemaOptions = {}) {
  return Type.String({ pattern: QUANTITY_PATTERN, maxLength: 64, ...options });
}

/** DNS-1123 subdomain: names of Secrets, ConfigMaps, PVCs, StorageClasses. */
export function ObjectName(options: SchemaOptions = {}) {
  return Type.String({
    minLength: 1,
    maxLength: 253,
    pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
    ...options,
  });
}

/**
 * A string → string map (labels, annotations, parameters), as `additionalProperties: {type: string}`:
 * TypeBox's Record emits `patternProperties`, which a structural CRD schema does not allow.
 */
export function StringMap(
  options: SchemaOptions = {},
  valueMaxLength = 4096,
): TUnsafe<Record<string, string>> {
  // Bounded values keep the apiserver's CEL cost estimate of rules over the map within budget.
  return Type.Unsafe<Record<string, string>>({
    ...options,
    type: 'object',
    additionalProperties: { type: 'string', maxLength: valueMaxLength },
  });
}

/** metav1.Condition, as in k8s.io/apimachinery/pkg/apis/meta/v1/types.go. */
export const ConditionSchema = Type.Object(
  {
    type: Type.String({
      maxLength: 316,
      pattern:
        '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
      description: 'Type of condition in CamelCase, e.g. Ready.',
    }),
    status: StringEnum(['True', 'False', 'Unknown'] as const, { description: 'Status of the condition.' }),
    observedGeneration: Type.Optional(
      Type.Integer({
        minimum: 0,
        format: 'int64',
        description: 'The .metadata.generation the condition was set for.',
      }),
    ),
    lastTransitionTime: Type.String({
      format: 'date-time',
      description: 'Last time the condition changed from one status to another.',
    }),
    reason: Type.String({
      minLength: 1,
      maxLength: 1024,
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
      description: "Programmatic identifier of the condition's last transition, in CamelCase.",
    }),
    message: Type.String({ maxLength: 32768, description: 'Human-readable details about the transition.' }),
  },
  { description: 'A metav1.Condition.' },
);

/** A list of conditions keyed by type, as the Kubernetes API conventions require. */
export function ConditionList(description: string) {
  return Type.Array(ConditionSchema, {
    description,
    maxItems: 32,
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['type'],
  });
}
