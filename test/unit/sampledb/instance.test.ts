import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveInstance } from '../../../src/sampledb/instance.ts';
import { sampleDbStatus } from '../../../src/sampledb/status.ts';
import { sampleDb } from '../../support/sampledb.ts';

describe('resolveInstance', () => {
  it('resolves the spec with the operator defaults, the names and the labels once', () => {
    const instance = resolveInstance(sampleDb({ version: '15' }), {
      imageRepository: 'mirror.example/postgres',
    });
    assert.equal(instance.name, 'orders');
    assert.equal(instance.namespace, 'shop');
    assert.equal(instance.spec.image, 'mirror.example/postgres:15');
    assert.equal(instance.spec.service.port, 5432);
    assert.equal(instance.names.initJob, 'orders-init');
    assert.deepEqual(instance.labels.init, {
      'app.kubernetes.io/name': 'sampledb',
      'app.kubernetes.io/instance': 'orders',
      'app.kubernetes.io/component': 'init',
      'app.kubernetes.io/managed-by': 'sampledb-operator',
    });
    assert.deepEqual(instance.selector, {
      'app.kubernetes.io/name': 'sampledb',
      'app.kubernetes.io/instance': 'orders',
      'app.kubernetes.io/managed-by': 'sampledb-operator',
    });
  });

  it('gives one endpoint host (the status endpoint says the same) and the pod host through the headless Service', () => {
    const instance = resolveInstance(
      sampleDb({ service: { port: 6432 }, bootstrap: { database: 'shop', owner: 'app' } }),
    );
    assert.deepEqual(instance.endpoint, {
      host: 'orders.shop.svc',
      port: 6432,
      database: 'shop',
      username: 'app',
    });
    assert.equal(instance.podHost, 'orders-0.orders-headless.shop.svc');
    assert.equal(sampleDbStatus(instance, {}).endpoint, 'orders.shop.svc:6432');
  });

  it('names the generated Secret and backup claim unless the user gives their own', () => {
    const generated = resolveInstance(sampleDb());
    assert.deepEqual(generated.credentials, { secretName: 'orders-credentials', generated: true });
    assert.deepEqual(generated.backupClaim, { name: 'orders-backups', operatorOwned: true });
    const own = resolveInstance(
      sampleDb({
        bootstrap: { credentialsSecret: { name: 'mine' } },
        backup: { volume: { claimName: 'shared' } },
      }),
    );
    assert.deepEqual(own.credentials, { secretName: 'mine', generated: false });
    assert.deepEqual(own.backupClaim, { name: 'shared', operatorOwned: false });
  });

  it('refuses a SampleDB without a name', () => {
    assert.throws(() => resolveInstance(sampleDb({}, { name: undefined })), /no metadata.name/);
  });
});
