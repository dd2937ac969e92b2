// Runtime validation from the same schemas that become the CRD: the JSON Schema part by Ajv, the CEL part by the
// TypeScript twins of each rule. Used by the constructs (fail at synth time) and by the controller (a status
// condition instead of a crash when an object slipped past admission, e.g. written before a CRD upgrade).
import type { TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { SampleDbSchema } from './sampledb.ts';
import { SampleDbBackupSchema } from './sampledb-backup.ts';
import { SampleDbDrillSchema } from './sampledb-drill.ts';
import { SampleDbRestoreSchema } from './sampledb-restore.ts';
import { rulesOf } from './schema-kit.ts';

/** One problem with one field. `field` is a dotted path such as `spec.storage.size`. */
export interface FieldError {
  readonly field: string;
  readonly message: string;
}

export class ValidationError extends Error {
  readonly errors: readonly FieldError[];
  constructor(what: string, errors: readonly FieldError[]) {
    super(`${what} is invalid:\n${errors.map((e) => `  - ${e.field}: ${e.message}`).join('\n')}`);
    this.name = 'ValidationError';
    this.errors = errors;
  }
}

export interface Validator {
  /** Errors for a new object (schema + CEL rules that do not read oldSelf). */
  validate(value: unknown): FieldError[];
  /** Errors for an update: everything `validate` checks plus the transition rules. */
  validateUpdate(oldValue: unknown, newValue: unknown): FieldError[];
}

type SchemaNode = TSchema & {
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  additionalProperties?: SchemaNode | boolean;
};

/**
 * A copy of the schema where every object with declared properties refuses unknown ones, so a typo in a
 * construct's props is an error at synth time (the apiserver would prune it, or refuse it under strict field
 * validation).
 */
function strictCopy(schema: SchemaNode): SchemaNode {
  const copy = JSON.parse(JSON.stringify(schema)) as SchemaNode;
  const visit = (node: SchemaNode) => {
    if (node.properties && Object.keys(node.properties).length > 0) {
      node.additionalProperties ??= false;
      for (const child of Object.values(node.properties)) visit(child);
    }
    if (node.items) visit(node.items);
    if (typeof node.additionalProperties === 'object') visit(node.additionalProperties);
  };
  visit(copy);
  return copy;
}

function fieldOf(path: string): string {
  return path
    .split('/')
    .filter(Boolean)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}

function describe(error: ErrorObject): FieldError {
  const field = fieldOf(error.instancePath);
  const join = (child: string) => (field ? `${field}.${child}` : child);
  switch (error.keyword) {
    case 'required':
      return { field: join(String(error.params.missingProperty)), message: 'Required value' };
    case 'additionalProperties':
      return {
        field: join(String(error.params.additionalProperty)),
        message: 'unknown field (check the spelling)',
      };
    case 'enum':
      return {
        field,
        message: `must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
      };
    case 'pattern': {
      const description = (error.parentSchema as { description?: string } | undefined)?.description;
      return {
        field,
        message: `invalid value ${JSON.stringify(error.data)}${description ? `: ${description}` : ` (must match ${error.params.pattern})`}`,
      };
    }
    default:
      return { field, message: error.message ?? 'invalid' };
  }
}

function walkRules(
  node: SchemaNode,
  value: unknown,
  oldValue: unknown,
  path: string,
  transitions: boolean,
  errors: FieldError[],
): void {
  if (value === undefined || value === null) return;
  for (const rule of rulesOf(node)) {
    const field = rule.reportAt ?? (rule.fieldPath ? `${path}${rule.fieldPath}` : path);
    let ok = true;
    try {
      if (rule.holds) ok = rule.holds(value);
      if (ok && transitions && rule.holdsOnUpdate && oldValue !== undefined && oldValue !== null) {
        ok = rule.holdsOnUpdate(value, oldValue);
      }
    } catch {
      // The value is malformed below this node (e.g. not a quantity); the schema check has reported it.
    }
    if (!ok) errors.push({ field: field || '(root)', message: rule.message });
  }
  const record = value as Record<string, unknown>;
  const oldRecord = (oldValue ?? undefined) as Record<string, unknown> | undefined;
  if (node.properties && typeof value === 'object') {
    for (const [key, child] of Object.entries(node.properties)) {
      walkRules(child, record[key], oldRecord?.[key], path ? `${path}.${key}` : key, transitions, errors);
    }
  }
}

export function createValidator(schema: TSchema): Validator {
  // Compiled on first use: a process that never validates a kind (the operator with no SampleDBDrill, say) never
  // holds its compiled code (a few MB of RSS each).
  let compiled: ValidateFunction | undefined;
  const check = (value: unknown): ValidateFunction => {
    // verbose: describe() names the refused value and the field's description (error.data, error.parentSchema).
    compiled ??= new Ajv({ allErrors: true, strict: false, validateFormats: false, verbose: true }).compile(
      strictCopy(schema as SchemaNode),
    );
    compiled(value);
    return compiled;
  };
  const run = (value: unknown, oldValue: unknown, transitions: boolean): FieldError[] => {
    const result = check(value);
    const errors: FieldError[] = result.errors ? result.errors.map(describe) : [];
    walkRules(schema as SchemaNode, value, oldValue, '', transitions, errors);
    return errors;
  };
  return {
    validate: (value) => run(value, undefined, false),
    validateUpdate: (oldValue, newValue) => run(newValue, oldValue, true),
  };
}

export const sampleDbValidator: Validator = createValidator(SampleDbSchema);
export const sampleDbBackupValidator: Validator = createValidator(SampleDbBackupSchema);
export const sampleDbRestoreValidator: Validator = createValidator(SampleDbRestoreSchema);
export const sampleDbDrillValidator: Validator = createValidator(SampleDbDrillSchema);
