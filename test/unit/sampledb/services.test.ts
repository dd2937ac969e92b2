import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveInstance } from '../../../src/sampledb/instance.ts';
import { clientService, headlessService } from '../../../src/sampledb/services.ts';
import { statefulSet } from '../../../src/sampledb/statefulset.ts';
import { sampleDb } from '../../support/sampledb.ts';

describe('services', () => {
  it('the headless Service is the StatefulSet serviceName and publishes the pod before it is ready', () => {
    const db = sampleDb();
    const headless = headlessService(resolveInstance(db));
    assert.equal(headless.spec?.clusterIP, 'None');
    assert.equal(headless.spec?.publishNotReadyAddresses, true);
    assert.equal(statefulSet(resolveInstance(db)).spec?.serviceName, headless.metadata?.name);
  });

  it('the client Service takes type, port and annotations from spec.service and targets 5432', () => {
    const db = sampleDb({
      service: { type: 'LoadBalancer', port: 6543, annotations: { 'lb.example.com/internal': 'true' } },
    });
    const service = clientService(resolveInstance(db));
    assert.equal(service.metadata?.name, 'orders');
    assert.equal(service.spec?.type, 'LoadBalancer');
    assert.deepEqual(service.spec?.ports, [
      { name: 'postgresql', port: 6543, targetPort: 5432, protocol: 'TCP' },
    ]);
    assert.deepEqual(service.metadata?.annotations, { 'lb.example.com/internal': 'true' });
  });

  it('defaults to a ClusterIP Service on 5432 without annotations', () => {
    const service = clientService(resolveInstance(sampleDb()));
    assert.equal(service.spec?.type, 'ClusterIP');
    assert.equal(service.spec?.ports?.[0]?.port, 5432);
    assert.equal(service.metadata?.annotations, undefined);
  });

  it('both Services select exactly the database pod labels', () => {
    const db = sampleDb();
    const podLabels = statefulSet(resolveInstance(db)).spec?.template.metadata?.labels ?? {};
    for (const service of [headlessService(resolveInstance(db)), clientService(resolveInstance(db))]) {
      for (const [key, value] of Object.entries(service.spec?.selector ?? {}))
        assert.equal(podLabels[key], value);
      assert.equal(service.spec?.selector?.['app.kubernetes.io/component'], 'database');
    }
  });
});
