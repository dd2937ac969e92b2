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
});
