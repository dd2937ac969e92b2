// A SampleDB whose database serves: the object and a StatefulSet with its pod ready (no controllers run here).
import type { SampleDbObject } from '../../../../src/api/index.ts';
import { SAMPLEDBS, STATEFULSETS } from '../../../../src/sampledb/resources.ts';
import { sampleDb } from '../../../support/sampledb.ts';
import type { FakeApiserver } from './fake-apiserver.ts';

export function servingDatabase(api: FakeApiserver, db: SampleDbObject = sampleDb({ backup: {} })): void {
  api.put(SAMPLEDBS, db);
  api.put(STATEFULSETS, {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: db.metadata.name ?? '', namespace: db.metadata.namespace ?? '' },
    status: { replicas: 1, readyReplicas: 1 },
  });
}
