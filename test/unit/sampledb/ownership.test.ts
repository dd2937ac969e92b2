import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { bindingSecret, connectionConfigMap } from '../../../src/sampledb/connection.ts';
import { credentialsSecret } from '../../../src/sampledb/credentials.ts';
import { initJob } from '../../../src/sampledb/init-job.ts';
import { resolveInstance } from '../../../src/sampledb/instance.ts';
import { postgresConfigMap } from '../../../src/sampledb/postgres-config.ts';
import { clientService, headlessService } from '../../../src/sampledb/services.ts';
import { statefulSet } from '../../../src/sampledb/statefulset.ts';
import { sampleDb } from '../../support/sampledb.ts';

const db = sampleDb();
const children: Array<[string, { metadata?: V1ObjectMeta }, string]> = [
  ['StatefulSet', statefulSet(resolveInstance(db)), 'database'],
  ['headless Service', headlessService(resolveInstance(db)), 'database'],
  ['client Service', clientService(resolveInstance(db)), 'database'],
  ['credentials Secret', credentialsSecret(resolveInstance(db), undefined) ?? {}, 'credentials'],
  ['connection ConfigMap', connectionConfigMap(resolveInstance(db)), 'connection'],
  ['binding Secret', bindingSecret(resolveInstance(db), 'pw'), 'binding'],
  ['config ConfigMap', postgresConfigMap(resolveInstance(db)), 'config'],
  ['init Job', initJob(resolveInstance(db)), 'init'],
];

describe('children of a SampleDB', () => {
  for (const [what, child, component] of children) {
    it(`${what} is owned by the SampleDB and carries the app.kubernetes.io labels`, () => {
      assert.equal(child.metadata?.namespace, 'shop');
      assert.deepEqual(child.metadata?.ownerReferences, [
        {
          apiVersion: 'sampledb.io/v1alpha1',
          kind: 'SampleDB',
          name: 'orders',
          uid: db.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      assert.deepEqual(child.metadata?.labels, {
        'app.kubernetes.io/name': 'sampledb',
        'app.kubernetes.io/instance': 'orders',
        'app.kubernetes.io/component': component,
        'app.kubernetes.io/managed-by': 'sampledb-operator',
      });
    });
  }

  it('have distinct names per kind', () => {
    const keys = children.map(([, child]) => `${(child as { kind?: string }).kind}/${child.metadata?.name}`);
    assert.equal(new Set(keys).size, keys.length);
  });

  it('cannot be built for a SampleDB without a uid (an owner reference would be invalid)', () => {
    assert.throws(() => statefulSet(resolveInstance(sampleDb({}, { uid: undefined }))), /uid/);
  });
});
