import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../src/runtime/resource.ts';
import { byNamespace, byOwnerUid, Store } from '../../../src/runtime/store.ts';

function obj(name: string, rv: string, extra: Partial<KubeObject['metadata']> = {}, ns = 'a'): KubeObject {
  return { metadata: { name, namespace: ns, resourceVersion: rv, uid: `u-${name}`, ...extra } };
}

describe('Store', () => {
  it('indexes by namespace and owner uid, and follows updates and removals', () => {
    const store = new Store();
    store.upsert(
      obj('x', '1', { ownerReferences: [{ apiVersion: 'v1', kind: 'K', name: 'o', uid: 'owner-1' }] }),
    );
    store.upsert(obj('y', '2', {}, 'b'));
    assert.deepEqual(
      store.byIndex(byNamespace, 'a').map((o) => o.metadata.name),
      ['x'],
    );
    assert.deepEqual(
      store.byIndex(byOwnerUid, 'owner-1').map((o) => o.metadata.name),
      ['x'],
    );
    store.upsert(
      obj('x', '3', { ownerReferences: [{ apiVersion: 'v1', kind: 'K', name: 'o', uid: 'owner-2' }] }),
    );
    assert.deepEqual(store.byIndex(byOwnerUid, 'owner-1'), []);
    assert.equal(store.byIndex(byOwnerUid, 'owner-2').length, 1);
    store.remove('a/x');
    assert.deepEqual(store.byIndex(byOwnerUid, 'owner-2'), []);
    assert.deepEqual(store.byIndex(byNamespace, 'a'), []);
  });

  it('supports custom indexers', () => {
    const store = new Store({
      indexers: { app: (o) => (o.metadata.labels?.app ? [o.metadata.labels.app] : []) },
    });
    store.upsert(obj('x', '1', { labels: { app: 'db' } }));
    store.upsert(obj('y', '1', { labels: { app: 'web' } }));
    assert.deepEqual(
      store.byIndex('app', 'db').map((o) => o.metadata.name),
      ['x'],
    );
    assert.throws(() => store.byIndex('nope', 'x'), /no index/);
  });

  it('drops managedFields by default and keeps them when asked', () => {
    const withFields = obj('x', '1', { managedFields: [{ manager: 'm' }] });
    const dropping = new Store();
    dropping.upsert(withFields);
    assert.equal(dropping.get('a/x')?.metadata.managedFields, undefined);
    assert.deepEqual(withFields.metadata.managedFields, [{ manager: 'm' }], 'input not mutated');
    const keeping = new Store({ dropManagedFields: false });
    keeping.upsert(withFields);
    assert.deepEqual(keeping.get('a/x')?.metadata.managedFields, [{ manager: 'm' }]);
  });

  it("drops kubectl's last-applied-configuration copy and keeps the other annotations", () => {
    const lastApplied = 'kubectl.kubernetes.io/last-applied-configuration';
    const store = new Store();
    const annotated = obj('x', '1', { annotations: { [lastApplied]: '{"big":"copy"}', note: 'kept' } });
    store.upsert(annotated);
    assert.deepEqual(store.get('a/x')?.metadata.annotations, { note: 'kept' });
    assert.equal(annotated.metadata.annotations?.[lastApplied], '{"big":"copy"}', 'input not mutated');
    store.upsert(obj('y', '1', { annotations: { [lastApplied]: '{}' } }));
    assert.equal(store.get('a/y')?.metadata.annotations, undefined, 'no empty annotations left behind');
    const keeping = new Store({ dropManagedFields: false });
    keeping.upsert(
      obj('z', '1', { annotations: { [lastApplied]: '{}' }, managedFields: [{ manager: 'm' }] }),
    );
    assert.equal(keeping.get('a/z')?.metadata.annotations, undefined);
    assert.deepEqual(keeping.get('a/z')?.metadata.managedFields, [{ manager: 'm' }]);
  });

  it('read-your-writes: our newer write is visible at once and an older watch event does not roll it back', () => {
    const store = new Store();
    store.upsert(obj('x', '10', { labels: { v: 'old' } }));
    assert.equal(store.applyOwnWrite(obj('x', '12', { labels: { v: 'ours' } })), true);
    assert.equal(store.get('a/x')?.metadata.labels?.v, 'ours');
    assert.equal(store.upsert(obj('x', '11', { labels: { v: 'in-between' } })), 'stale');
    assert.equal(store.get('a/x')?.metadata.labels?.v, 'ours');
    assert.equal(store.upsert(obj('x', '12', { labels: { v: 'ours' } })), 'unchanged');
    assert.equal(store.upsert(obj('x', '13', { labels: { v: 'next' } })), 'updated');
    assert.equal(store.get('a/x')?.metadata.labels?.v, 'next');
  });

  it('ignores an own write older than the cache', () => {
    const store = new Store();
    store.upsert(obj('x', '20'));
    assert.equal(store.applyOwnWrite(obj('x', '19', { labels: { v: 'late' } })), false);
    assert.equal(store.get('a/x')?.metadata.resourceVersion, '20');
  });

  it('read-your-writes for deletes: an older watch event does not bring our deleted object back', () => {
    const store = new Store();
    store.upsert(obj('x', '10'));
    store.applyOwnDelete('a/x', '12');
    assert.equal(store.get('a/x'), undefined);
    assert.equal(store.upsert(obj('x', '11')), 'stale');
    assert.equal(store.get('a/x'), undefined);
    assert.equal(store.upsert(obj('x', '15')), 'added', 'a later re-creation is cached');
  });

  it('compares resourceVersions numerically, not as strings', () => {
    const store = new Store();
    store.upsert(obj('x', '9'));
    assert.equal(store.upsert(obj('x', '10')), 'updated');
  });

  it('files objects by namespace and name: reads by key and ref, list, keys, entries and size agree', () => {
    const store = new Store();
    store.upsert(obj('x', '1'));
    store.upsert(obj('y', '2', {}, 'b'));
    store.upsert(obj('node-1', '3', {}, ''));
    store.upsert(obj('z', '4'));
    store.upsert(obj('x', '5'));
    assert.equal(store.size, 4);
    assert.equal(store.get('a/x')?.metadata.resourceVersion, '5');
    assert.equal(store.get({ namespace: 'a', name: 'x' })?.metadata.resourceVersion, '5');
    assert.equal(store.get('node-1')?.metadata.name, 'node-1', 'cluster-scoped: key is the name');
    assert.equal(store.get({ namespace: '', name: 'node-1' })?.metadata.name, 'node-1');
    assert.equal(store.get('b/x'), undefined);
    assert.deepEqual(store.keys().sort(), ['a/x', 'a/z', 'b/y', 'node-1']);
    assert.deepEqual([...store.entries()].map(([key, o]) => [key, o.metadata.resourceVersion]).sort(), [
      ['a/x', '5'],
      ['a/z', '4'],
      ['b/y', '2'],
      ['node-1', '3'],
    ]);
    assert.deepEqual(
      store
        .list()
        .map((o) => o.metadata.name)
        .sort(),
      ['node-1', 'x', 'y', 'z'],
    );
    assert.deepEqual(
      store
        .byIndex(byNamespace, 'a')
        .map((o) => o.metadata.name)
        .sort(),
      ['x', 'z'],
    );
    assert.deepEqual(store.byIndex(byNamespace, ''), [], 'cluster-scoped objects are in no namespace');
    assert.equal(store.remove('b/y')?.metadata.name, 'y');
    assert.equal(store.remove('b/y'), undefined);
    assert.deepEqual(store.byIndex(byNamespace, 'b'), []);
    assert.equal(store.size, 3);
    store.clear();
    assert.equal(store.size, 0);
    assert.deepEqual(store.list(), []);
  });

  it('an index that names several values, or the same value twice, follows updates and removals', () => {
    const owners = (...uids: string[]) => ({
      ownerReferences: uids.map((uid) => ({ apiVersion: 'v1', kind: 'K', name: uid, uid })),
    });
    const store = new Store();
    store.upsert(obj('x', '1', owners('o1', 'o2', 'o2')));
    store.upsert(obj('y', '1', owners('o2')));
    assert.deepEqual(
      store.byIndex(byOwnerUid, 'o2').map((o) => o.metadata.name),
      ['x', 'y'],
    );
    store.upsert(obj('x', '2', owners('o1')));
    assert.deepEqual(
      store.byIndex(byOwnerUid, 'o2').map((o) => o.metadata.name),
      ['y'],
    );
    assert.equal(store.byIndex(byOwnerUid, 'o1')[0]?.metadata.resourceVersion, '2', 'the cached version');
    store.remove('a/y');
    assert.deepEqual(store.byIndex(byOwnerUid, 'o2'), []);
  });

  it('a byNamespace indexer of the caller replaces the built-in one', () => {
    const store = new Store({ indexers: { [byNamespace]: (o) => [`ns:${o.metadata.namespace}`] } });
    store.upsert(obj('x', '1'));
    assert.deepEqual(store.byIndex(byNamespace, 'a'), []);
    assert.equal(store.byIndex(byNamespace, 'ns:a')[0]?.metadata.name, 'x');
  });

  it('what a reader reads of a trimmed object is what it read before: fields, values and key order', () => {
    const lastApplied = 'kubectl.kubernetes.io/last-applied-configuration';
    const apply = {
      manager: 'm',
      operation: 'Apply',
      apiVersion: 'v1',
      fieldsType: 'FieldsV1',
      fieldsV1: {},
    };
    const incoming: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'x',
        namespace: 'a',
        uid: 'u-x',
        resourceVersion: '7',
        generation: 2,
        creationTimestamp: '2026-12-07T13:14:31Z',
        labels: { app: 'db' },
        annotations: { [lastApplied]: '{}', note: 'kept' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'K', name: 'o', uid: 'o1' }],
        finalizers: ['f'],
        managedFields: [
          { ...apply, time: '2026-12-07T13:14:31Z' },
          { manager: 'kubectl', operation: 'Update', apiVersion: 'v1', time: 't', fieldsV1: {} },
        ],
      },
      data: { k: 'v' },
    } as KubeObject;
    const store = new Store();
    store.upsert(incoming);
    const cached = store.get('a/x')!;
    // What the rest-destructuring copy gave: the other fields in their order, then managedFields and annotations.
    const { managedFields: _m, annotations: _a, ...others } = incoming.metadata;
    const expected = {
      ...incoming,
      metadata: { ...others, managedFields: [apply], annotations: { note: 'kept' } },
    };
    assert.deepEqual(cached, expected);
    assert.equal(JSON.stringify(cached), JSON.stringify(expected));
    assert.deepEqual(Object.keys(cached.metadata), Object.keys(expected.metadata));
    assert.equal(cached.metadata.labels, incoming.metadata.labels, 'unchanged fields are held, not copied');
  });
});
