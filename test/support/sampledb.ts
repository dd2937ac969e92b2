// SampleDB objects for tests.
import type { SampleDbBackupObject, SampleDbObject, SampleDbSpec } from '../../src/api/index.ts';

export function sampleDb(
  spec: Partial<SampleDbSpec> = {},
  metadata: Partial<SampleDbObject['metadata']> = {},
): SampleDbObject {
  return {
    apiVersion: 'sampledb.io/v1alpha1',
    kind: 'SampleDB',
    metadata: {
      name: 'orders',
      namespace: 'shop',
      uid: '1b4e28ba-2fa1-11d2-883f-0016d3cca427',
      generation: 1,
      ...metadata,
    },
    spec: { version: '16', storage: { size: '10Gi' }, ...spec },
  };
}

export function sampleDbBackup(
  name: string,
  of: string,
  status?: SampleDbBackupObject['status'],
): SampleDbBackupObject {
  return {
    apiVersion: 'sampledb.io/v1alpha1',
    kind: 'SampleDBBackup',
    metadata: { name },
    spec: { sampleDB: { name: of } },
    ...(status ? { status } : {}),
  };
}
