import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyNeed, covers, keepApplyEntries, shareFields } from '../../../src/runtime/apply-skip.ts';
import type { KubeObject } from '../../../src/runtime/resource.ts';

const manager = 'example-operator';

/** What the operator applies: a Service with a keyed port list (key port+protocol, protocol left to its default). */
function desiredService(): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: 'db',
      namespace: 'ns',
      labels: { app: 'db' },
      ownerReferences: [
        { apiVersion: 'example.com/v1', kind: 'DB', name: 'db', uid: 'u1', controller: true },
      ],
    },
    spec: {
      selector: { app: 'db' },
      ports: [{ name: 'postgres', port: 5432, targetPort: 5432 }],
    },
  } as KubeObject;
}

/** Our managedFields entry for that apply, as kube-apiserver records it. */
const serviceFields = {
  'f:metadata': {
    'f:labels': { 'f:app': {} },
    'f:ownerReferences': { 'k:{"uid":"u1"}': {} },
  },
  'f:spec': {
    'f:ports': {
      'k:{"port":5432,"protocol":"TCP"}': { '.': {}, 'f:name': {}, 'f:port': {}, 'f:targetPort': {} },
    },
    'f:selector': {},
  },
};

/** The cached Service after that apply: defaults, other managers' fields and our Apply entry. */
function cachedService(overrides: { fields?: object; spec?: object; labels?: object } = {}): KubeObject {
  const desired = desiredService() as KubeObject & { spec: Record<string, unknown> };
  return {
    ...desired,
    metadata: {
      ...desired.metadata,
      uid: 's1',
      resourceVersion: '42',
      labels: { ...desired.metadata.labels, ...overrides.labels },
      annotations: { 'added-by': 'someone else' },
      managedFields: [
        {
          manager,
          operation: 'Apply',
          apiVersion: 'v1',
          fieldsType: 'FieldsV1',
          fieldsV1: overrides.fields ?? serviceFields,
        },
        {
          manager: 'kubectl',
          operation: 'Update',
          apiVersion: 'v1',
          fieldsV1: { 'f:metadata': { 'f:annotations': {} } },
        },
      ],
    },
    spec: {
      ...desired.spec,
      ports: [{ name: 'postgres', port: 5432, targetPort: 5432, protocol: 'TCP' }],
      clusterIP: '10.96.0.10',
      type: 'ClusterIP',
      ...overrides.spec,
    },
  } as KubeObject;
}

describe('applyNeed: skip an apply only when its result is already cached', () => {
  it('skips when every desired value is cached and we own exactly the desired fields', () => {
    assert.equal(applyNeed(desiredService(), cachedService(), manager), undefined);
  });

  it('applies when the object is not cached, or is being deleted', () => {
    assert.equal(applyNeed(desiredService(), undefined, manager), 'not-cached');
    const terminating = cachedService();
    terminating.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    assert.equal(applyNeed(desiredService(), terminating, manager), 'terminating');
  });

  it('applies when a value we own was changed by someone else', () => {
    const drifted = cachedService({ spec: { selector: { app: 'other' } } });
    assert.equal(applyNeed(desiredService(), drifted, manager), 'value-differs');
  });

  it('applies when a key left an atomic map we own whole (a selector key no longer wanted)', () => {
    // Applied before with a second selector key; the Service's selector is atomic, so fieldsV1 records it whole.
    const cached = cachedService({ spec: { selector: { app: 'db', 'writes-stopped': 'true' } } });
    assert.equal(applyNeed(desiredService(), cached, manager), 'ownership-differs');
  });

  it('applies when the desired object gained a field, even if another manager already set that value', () => {
    const desired = desiredService();
    desired.metadata.labels = { app: 'db', tier: 'data' };
    const cached = cachedService({ labels: { tier: 'data' } });
    assert.equal(applyNeed(desired, cached, manager), 'ownership-differs');
  });

  it('applies when we own a field the desired object dropped (so the apiserver removes it)', () => {
    const fields = structuredClone(serviceFields) as typeof serviceFields &
      Record<string, Record<string, object>>;
    (fields['f:metadata'] as Record<string, object>)['f:annotations'] = { 'f:old': {} };
    assert.equal(applyNeed(desiredService(), cachedService({ fields }), manager), 'ownership-differs');
  });

  it('applies when no Apply entry of ours is cached (managedFields dropped, or written by someone else)', () => {
    const cached = cachedService();
    cached.metadata.managedFields = [];
    assert.equal(applyNeed(desiredService(), cached, manager), 'not-owned');
    assert.equal(applyNeed(desiredService(), cachedService(), 'another-operator'), 'not-owned');
  });

  it('keeps the main resource and the status subresource apart', () => {
    assert.equal(applyNeed(desiredService(), cachedService(), manager, 'status'), 'not-owned');
    const status = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'db', namespace: 'ns' },
      status: { phase: 'Ready' },
    } as KubeObject;
    const cached = cachedService() as KubeObject & Record<string, unknown>;
    cached.status = { phase: 'Ready', observedGeneration: 3 };
    (cached.metadata.managedFields as object[]).push({
      manager,
      operation: 'Apply',
      apiVersion: 'v1',
      subresource: 'status',
      fieldsV1: { 'f:status': { 'f:phase': {} } },
    });
    assert.equal(applyNeed(status, cached, manager, 'status'), undefined);
    assert.equal(
      applyNeed({ ...status, status: { phase: 'Failed' } } as KubeObject, cached, manager, 'status'),
      'value-differs',
    );
  });

  it('skips when an empty map is desired that the apiserver did not record', () => {
    const desired = desiredService();
    desired.metadata.annotations = {};
    assert.equal(applyNeed(desired, cachedService(), manager), undefined);
  });

  it('applies when the apiVersion differs from the one our fields were recorded in', () => {
    assert.equal(applyNeed({ ...desiredService(), apiVersion: 'v2' }, cachedService(), manager), 'not-owned');
  });

  it('treats a null value as undecidable (null asks the apiserver to remove a field)', () => {
    const desired = desiredService() as KubeObject & { spec: Record<string, unknown> };
    desired.spec.externalName = null;
    assert.equal(applyNeed(desired, cachedService(), manager), 'undecidable');
  });
});

describe('applyNeed on lists', () => {
  const pod = (containers: object[], finalizers = ['a', 'b']) =>
    ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'ns', finalizers },
      spec: { containers },
    }) as KubeObject;
  const fields = {
    'f:metadata': { 'f:finalizers': { '.': {}, 'v:"a"': {}, 'v:"b"': {} } },
    'f:spec': {
      'f:containers': {
        'k:{"name":"main"}': { '.': {}, 'f:name': {}, 'f:image': {}, 'f:args': {} },
        'k:{"name":"side"}': { '.': {}, 'f:name': {}, 'f:image': {} },
      },
    },
  };
  const withEntry = (obj: KubeObject) => {
    const copy = structuredClone(obj);
    copy.metadata.managedFields = [{ manager, operation: 'Apply', apiVersion: 'v1', fieldsV1: fields }];
    return copy;
  };
  const main = { name: 'main', image: 'pg:17', args: ['-c', 'x=1'] };
  const side = { name: 'side', image: 'exporter:1' };

  it('matches keyed items and set items', () => {
    assert.equal(applyNeed(pod([main, side]), withEntry(pod([main, side])), manager), undefined);
  });

  it('applies when an atomic list (args) changed', () => {
    const cached = withEntry(pod([{ ...main, args: ['-c', 'x=2'] }, side]));
    assert.equal(applyNeed(pod([main, side]), cached, manager), 'value-differs');
  });

  it('applies when a keyed item we own is no longer desired', () => {
    assert.equal(applyNeed(pod([main]), withEntry(pod([main, side])), manager), 'value-differs');
  });

  it('applies when the set of finalizers differs', () => {
    assert.equal(
      applyNeed(pod([main, side], ['a']), withEntry(pod([main, side], ['a'])), manager),
      'ownership-differs',
    );
  });
});

describe('covers', () => {
  it('lets the cache hold more keys than desired, but not fewer or other values', () => {
    assert.equal(covers({ a: 1 }, { a: 1, b: 2 }), true);
    assert.equal(covers({ a: 1, b: 2 }, { a: 1 }), false);
    assert.equal(covers({ a: '1' }, { a: 1 }), false);
  });

  it('takes an empty desired list or map as matching an absent one', () => {
    assert.equal(covers({ a: [], b: {} }, {}), true);
    assert.equal(covers({ a: [1] }, {}), false);
  });
});

describe('keepApplyEntries', () => {
  it('keeps only Apply entries, without their timestamps', () => {
    const kept = keepApplyEntries([
      {
        manager,
        operation: 'Apply',
        apiVersion: 'v1',
        time: '2026-01-01T00:00:00Z',
        fieldsV1: { 'f:data': {} },
      },
      {
        manager: 'kube-controller-manager',
        operation: 'Update',
        apiVersion: 'v1',
        fieldsV1: { 'f:status': {} },
      },
    ]);
    assert.deepEqual(kept, [{ manager, operation: 'Apply', apiVersion: 'v1', fieldsV1: { 'f:data': {} } }]);
  });

  it('holds equal Apply entry lists once across objects (timestamps and Update entries aside)', () => {
    const entriesOf = (time: string, owner: string) => [
      {
        manager,
        operation: 'Apply',
        apiVersion: 'v1',
        time,
        fieldsV1: { 'f:data': { 'f:shared-list': {} } },
      },
      { manager: owner, operation: 'Update', apiVersion: 'v1', time, fieldsV1: { 'f:status': {} } },
    ];
    const a = keepApplyEntries(entriesOf('2026-01-01T00:00:00Z', 'x'));
    const b = keepApplyEntries(entriesOf('2026-01-02T00:00:00Z', 'y'));
    assert.equal(a, b, 'one list for both objects');
    const other = keepApplyEntries([
      { manager, operation: 'Apply', apiVersion: 'v1', fieldsV1: { 'f:data': { 'f:shared-list': {} } } },
      { manager: 'other', operation: 'Apply', apiVersion: 'v1', fieldsV1: { 'f:data': { 'f:x': {} } } },
    ]);
    assert.notEqual(other, a, 'a different list stays apart');
    assert.equal(
      other[0]!.fieldsV1?.['f:data'],
      a[0]!.fieldsV1?.['f:data'],
      'its equal field set is still shared',
    );
    assert.deepEqual(other[1], {
      manager: 'other',
      operation: 'Apply',
      apiVersion: 'v1',
      fieldsV1: { 'f:data': { 'f:x': {} } },
    });
  });
});

describe('shareFields', () => {
  it('holds an equal subtree once across objects, and keeps distinct ones apart', () => {
    const fieldsOf = (uid: string) => ({
      'f:metadata': { 'f:labels': { 'f:app': {} }, 'f:ownerReferences': { [`k:{"uid":"${uid}"}`]: {} } },
      'f:spec': { 'f:replicas': {}, 'f:template': { 'f:spec': { 'f:containers': {} } } },
    });
    const a = shareFields(fieldsOf('u1'));
    const b = shareFields(fieldsOf('u2'));
    assert.equal(a['f:spec'], b['f:spec'], 'one f:spec for both');
    assert.equal(a['f:metadata']!['f:labels'], b['f:metadata']!['f:labels']);
    assert.notEqual(a['f:metadata']!['f:ownerReferences'], b['f:metadata']!['f:ownerReferences']);
    assert.deepEqual(b, fieldsOf('u2'), 'the content is unchanged');
  });
});
