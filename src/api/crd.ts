// CustomResourceDefinitions generated from the schemas. Plain objects, so the cdk8s constructs, the Pulumi
// component and the tests all use the very same definitions.
import type { TSchema } from '@sinclair/typebox';
import { GROUP, SampleDbSchema, VERSION } from './sampledb.ts';
import { SampleDbBackupSchema } from './sampledb-backup.ts';

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

const COMMON_LABELS = { 'app.kubernetes.io/part-of': 'sampledb-operator' };

export function sampleDbCrd(): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `sampledbs.${GROUP}`, labels: COMMON_LABELS },
    spec: {
      group: GROUP,
      names: {
        kind: 'SampleDB',
        listKind: 'SampleDBList',
        plural: 'sampledbs',
        singular: 'sampledb',
        shortNames: ['sdb'],
        // `sampledb` would collide with the singular name (`kubectl get sampledb x` would list two kinds).
        categories: ['sampledb-operator', 'all'],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              description: 'SampleDB is a PostgreSQL database managed by the sampledb-operator.',
              ...toOpenApiV3(SampleDbSchema),
            },
          },
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Ready', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
            { name: 'Version', type: 'string', jsonPath: '.spec.version' },
            { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
            { name: 'Endpoint', type: 'string', jsonPath: '.status.endpoint', priority: 1 },
            { name: 'Last Backup', type: 'date', jsonPath: '.status.lastBackup.completionTime' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          selectableFields: [{ jsonPath: '.spec.version' }],
        },
      ],
    },
  };
}

export function sampleDbBackupCrd(): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `sampledbbackups.${GROUP}`, labels: COMMON_LABELS },
    spec: {
      group: GROUP,
      names: {
        kind: 'SampleDBBackup',
        listKind: 'SampleDBBackupList',
        plural: 'sampledbbackups',
        singular: 'sampledbbackup',
        shortNames: ['sdbbackup'],
        // Not in `all`: `kubectl get all` should not list every historical backup.
        categories: ['sampledb-operator'],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              description: 'SampleDBBackup is one logical backup of a SampleDB.',
              ...toOpenApiV3(SampleDbBackupSchema),
            },
          },
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'SampleDB', type: 'string', jsonPath: '.spec.sampleDB.name' },
            { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
            { name: 'Size', type: 'integer', jsonPath: '.status.sizeBytes' },
            { name: 'Completed', type: 'date', jsonPath: '.status.completedAt' },
            { name: 'Location', type: 'string', jsonPath: '.status.location', priority: 1 },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          selectableFields: [{ jsonPath: '.spec.sampleDB.name' }],
        },
      ],
    },
  };
}

export function allCrds(): CustomResourceDefinition[] {
  return [sampleDbCrd(), sampleDbBackupCrd()];
}
