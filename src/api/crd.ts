// CustomResourceDefinitions generated from the schemas. Plain objects, so the cdk8s constructs, the Pulumi
// component and the tests all use the very same definitions.
import type { TSchema } from '@sinclair/typebox';
import { GROUP, KINDS, LABELS, OPERATOR_NAME, PLURALS, VERSION } from './identity.ts';
import { SampleDbSchema } from './sampledb.ts';
import { SampleDbBackupSchema } from './sampledb-backup.ts';
import { SampleDbDrillSchema } from './sampledb-drill.ts';
import { SampleDbRestoreSchema } from './sampledb-restore.ts';

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels?: Record<string, string> };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames: string[];
      categories: string[];
    };
    scope: 'Namespaced';
    versions: Array<{
      name: string;
      served: boolean;
      storage: boolean;
      schema: { openAPIV3Schema: Record<string, unknown> };
      subresources: { status: Record<string, never> };
      additionalPrinterColumns: Array<{
        name: string;
        type: string;
        jsonPath: string;
        description?: string;
        priority?: number;
        format?: string;
      }>;
      selectableFields?: Array<{ jsonPath: string }>;
    }>;
  };
}

/** Turns a TypeBox schema into the structural JSON the apiserver accepts (drops TypeBox's symbol keys). */
export function toOpenApiV3(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

const COMMON_LABELS = { [LABELS.partOf]: OPERATOR_NAME };

type Version = CustomResourceDefinition['spec']['versions'][number];

interface CrdParts {
  kind: string;
  plural: string;
  shortNames: string[];
  categories: string[];
  description: string;
  schema: TSchema;
  printerColumns: Version['additionalPrinterColumns'];
  selectableFields: string[];
}

/** A namespaced CRD of our group with one served, stored version and the status subresource. */
function crdOf(parts: CrdParts): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${parts.plural}.${GROUP}`, labels: COMMON_LABELS },
    spec: {
      group: GROUP,
      names: {
        kind: parts.kind,
        listKind: `${parts.kind}List`,
        plural: parts.plural,
        singular: parts.kind.toLowerCase(),
        shortNames: parts.shortNames,
        categories: parts.categories,
      },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { description: parts.description, ...toOpenApiV3(parts.schema) } },
          subresources: { status: {} },
          additionalPrinterColumns: parts.printerColumns,
          selectableFields: parts.selectableFields.map((jsonPath) => ({ jsonPath })),
        },
      ],
    },
  };
}

const AGE = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

export function sampleDbCrd(): CustomResourceDefinition {
  return crdOf({
    kind: KINDS.sampleDb,
    plural: PLURALS.sampleDb,
    shortNames: ['sdb'],
    // `sampledb` would collide with the singular name (`kubectl get sampledb x` would list two kinds).
    categories: [OPERATOR_NAME, 'all'],
    description: 'SampleDB is a PostgreSQL database managed by the sampledb-operator.',
    schema: SampleDbSchema,
    printerColumns: [
      { name: 'Ready', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
      { name: 'Version', type: 'string', jsonPath: '.spec.version' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Endpoint', type: 'string', jsonPath: '.status.endpoint', priority: 1 },
      { name: 'Last Backup', type: 'date', jsonPath: '.status.lastBackup.completionTime' },
      AGE,
    ],
    selectableFields: ['.spec.version'],
  });
}

export function sampleDbBackupCrd(): CustomResourceDefinition {
  return crdOf({
    kind: KINDS.sampleDbBackup,
    plural: PLURALS.sampleDbBackup,
    shortNames: ['sdbbackup'],
    // Not in `all`: `kubectl get all` should not list every historical backup.
    categories: [OPERATOR_NAME],
    description: 'SampleDBBackup is one logical backup of a SampleDB.',
    schema: SampleDbBackupSchema,
    printerColumns: [
      { name: 'SampleDB', type: 'string', jsonPath: '.spec.sampleDB.name' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Size', type: 'integer', jsonPath: '.status.sizeBytes' },
      { name: 'Completed', type: 'date', jsonPath: '.status.completedAt' },
      { name: 'Verified', type: 'boolean', jsonPath: '.status.verified' },
      {
        name: 'Restore Seconds',
        type: 'number',
        jsonPath: '.status.verification.restoreSeconds',
        description: 'Measured restore time (RTO) of the verification.',
        priority: 1,
      },
      { name: 'Location', type: 'string', jsonPath: '.status.location', priority: 1 },
      AGE,
    ],
    selectableFields: ['.spec.sampleDB.name'],
  });
}

export function sampleDbRestoreCrd(): CustomResourceDefinition {
  return crdOf({
    kind: KINDS.sampleDbRestore,
    plural: PLURALS.sampleDbRestore,
    shortNames: ['sdbrestore'],
    categories: [OPERATOR_NAME],
    description: 'SampleDBRestore restores a SampleDBBackup into its existing SampleDB, in place.',
    schema: SampleDbRestoreSchema,
    printerColumns: [
      { name: 'SampleDB', type: 'string', jsonPath: '.spec.sampleDB.name' },
      { name: 'Backup', type: 'string', jsonPath: '.spec.backup.name' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Step', type: 'string', jsonPath: '.status.step' },
      { name: 'Safety Backup', type: 'string', jsonPath: '.status.safetyBackup', priority: 1 },
      { name: 'Message', type: 'string', jsonPath: '.status.message', priority: 1 },
      AGE,
    ],
    selectableFields: ['.spec.sampleDB.name'],
  });
}

export function sampleDbDrillCrd(): CustomResourceDefinition {
  return crdOf({
    kind: KINDS.sampleDbDrill,
    plural: PLURALS.sampleDbDrill,
    shortNames: ['sdbdrill'],
    categories: [OPERATOR_NAME],
    description:
      'SampleDBDrill runs a resilience drill (a fault and its measured recovery) against a SampleDB, once or on a schedule.',
    schema: SampleDbDrillSchema,
    printerColumns: [
      { name: 'SampleDB', type: 'string', jsonPath: '.spec.sampleDB.name' },
      { name: 'Kind', type: 'string', jsonPath: '.spec.kind' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Last Result', type: 'string', jsonPath: '.status.runs[0].result' },
      {
        name: 'Writable Seconds',
        type: 'number',
        jsonPath: '.status.runs[0].writableSeconds',
        description: 'Last run: from the fault to the first accepted write.',
      },
      {
        name: 'Detect Seconds',
        type: 'number',
        jsonPath: '.status.runs[0].detectSeconds',
        description: 'Last run: from the fault to the operator seeing it.',
        priority: 1,
      },
      { name: 'Schedule', type: 'string', jsonPath: '.spec.schedule', priority: 1 },
      { name: 'Message', type: 'string', jsonPath: '.status.message', priority: 1 },
      AGE,
    ],
    selectableFields: ['.spec.sampleDB.name', '.spec.kind'],
  });
}

export function allCrds(): CustomResourceDefinition[] {
  return [sampleDbCrd(), sampleDbBackupCrd(), sampleDbRestoreCrd(), sampleDbDrillCrd()];
}
