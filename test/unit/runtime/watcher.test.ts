import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CONFIG_MAPS } from '../../../src/runtime/kinds.ts';
import type { KubeObject } from '../../../src/runtime/resource.ts';
import { Store } from '../../../src/runtime/store.ts';
import { type Change, diffRelist, Watcher } from '../../../src/runtime/watcher.ts';
import { FakeKube, until } from './fake-kube.ts';

const configMaps = CONFIG_MAPS;

function obj(name: string, rv: string, uid = `u-${name}`): KubeObject {
  return { metadata: { name, namespace: 'ns', resourceVersion: rv, uid } };
}
const entries = (...objs: KubeObject[]) =>
  objs.map((o) => [`ns/${o.metadata.name}`, o] as [string, KubeObject]);
const names = (objs: KubeObject[]) => objs.map((o) => o.metadata.name).sort();

describe('diffRelist (410 recovery)', () => {
  it('emits deletes for objects that vanished while the watch was gone', () => {
    const diff = diffRelist(entries(obj('a', '1'), obj('b', '2'), obj('c', '3')), [
      obj('a', '1'),
      obj('c', '7'),
    ]);
    assert.deepEqual(names(diff.deleted), ['b']);
    assert.deepEqual(
      diff.modified.map((m) => [m.object.metadata.name, m.old.metadata.resourceVersion]),
      [['c', '3']],
    );
    assert.deepEqual(diff.added, []);
  });

  it('reports new objects as added and unchanged ones not at all', () => {
    const diff = diffRelist(entries(obj('a', '1')), [obj('a', '1'), obj('d', '9')]);
    assert.deepEqual(names(diff.added), ['d']);
    assert.deepEqual(diff.modified, []);
    assert.deepEqual(diff.deleted, []);
  });

  it('treats a recreated object (same name, new uid) as delete + add', () => {
    const diff = diffRelist(entries(obj('a', '1', 'old')), [obj('a', '5', 'new')]);
    assert.deepEqual(
      diff.deleted.map((o) => o.metadata.uid),
      ['old'],
    );
    assert.deepEqual(
      diff.added.map((o) => o.metadata.uid),
      ['new'],
    );
  });

  it('keeps a cached own write newer than the list', () => {
    const diff = diffRelist(entries(obj('a', '30')), [obj('a', '25')]);
    assert.deepEqual(diff.modified, []);
    assert.deepEqual(diff.deleted, []);
  });
});

// The following use a fake in-memory transport (FakeKube) instead of an apiserver.
describe('Watcher over a fake transport', () => {
  function start(kube: FakeKube, opts: { stallTimeoutMs?: number; pageSize?: number } = {}) {
    const watcher = new Watcher<KubeObject>({
      http: kube.asHttp(),
      resource: configMaps,
      pageSize: opts.pageSize ?? 2,
      stallTimeoutMs: opts.stallTimeoutMs ?? 60_000,
      backoff: { initialMs: 1, maxMs: 5 },
    });
    const changes: Change<KubeObject>[] = [];
    watcher.onChange((c) => changes.push(c));
    watcher.start();
    return { watcher, changes };
  }

  it('lists all pages, syncs, then streams changes', async () => {
    const kube = new FakeKube();
    for (const n of ['a', 'b', 'c', 'd', 'e']) kube.put(n);
    const { watcher, changes } = start(kube);
    assert.equal(await watcher.waitForSync(), true);
    assert.equal(watcher.store.size, 5);
    assert.equal(kube.listCalls, 3, 'five objects in pages of two');
    assert.equal(watcher.store.get('ns/a')?.kind, 'ConfigMap', 'type meta restored on listed items');
    // As `{ ...item, apiVersion, kind }` gave it (the copy is laid out compactly, see compact.ts).
    assert.deepEqual(Object.keys(watcher.store.get('ns/a')!), ['metadata', 'apiVersion', 'kind']);
    assert.equal(watcher.store.get('ns/a')?.apiVersion, 'v1');
    kube.put('a', { data: { x: '1' } });
    await until(() => changes.some((c) => c.type === 'MODIFIED'), 'modified event');
    await watcher.stop();
  });

  it('resumes from the last seen resourceVersion after the server closes the watch, without relisting', async () => {
    const kube = new FakeKube();
    kube.put('a');
    const { watcher, changes } = start(kube);
    await watcher.waitForSync();
    await until(() => kube.openWatches === 1, 'watch open');
    kube.put('b');
    await until(() => watcher.store.size === 2, 'b cached');
    kube.closeWatches();
    kube.put('c');
    await until(() => watcher.store.size === 3, 'c cached after reconnect');
    assert.equal(kube.listCalls, 1);
    assert.equal(changes.filter((c) => c.type === 'ADDED').length, 3, 'no duplicate ADDED on resume');
    await watcher.stop();
  });

  it('relists after 410 Gone and emits the delete that happened meanwhile', async () => {
    const kube = new FakeKube();
    kube.put('a');
    kube.put('b');
    const { watcher, changes } = start(kube);
    await watcher.waitForSync();
    await until(() => kube.openWatches === 1, 'watch open');
    // In the same tick as the disconnect (before the watcher can resume): b is deleted and history is compacted,
    // so the resume gets 410 and only a relist can reveal the delete.
    kube.closeWatches();
    kube.remove('b');
    kube.compact();
    await until(
      () => changes.some((c) => c.type === 'DELETED' && c.object.metadata.name === 'b'),
      'delete of b',
    );
    assert.equal(watcher.store.get('ns/b'), undefined);
    assert.ok(kube.listCalls >= 2, 'relisted');
    await watcher.stop();
  });

  it("with a store shared across namespaces, a relist of one namespace never deletes another's objects", async () => {
    const kube = new FakeKube();
    kube.put('a1', {}, 'team-a');
    kube.put('b1', {}, 'team-b');
    const store = new Store<KubeObject>();
    const watchers = ['team-a', 'team-b'].map(
      (namespace) =>
        new Watcher<KubeObject>({
          http: kube.asHttp(),
          resource: configMaps,
          namespace,
          store,
          stallTimeoutMs: 60_000,
          backoff: { initialMs: 1, maxMs: 5 },
        }),
    );
    const changes: Change<KubeObject>[] = [];
    for (const w of watchers) {
      w.onChange((c) => changes.push(c));
      w.start();
    }
    await Promise.all(watchers.map((w) => w.waitForSync()));
    await until(() => kube.openWatches === 2, 'two watches open');
    assert.deepEqual(store.keys().sort(), ['team-a/a1', 'team-b/b1']);
    kube.closeWatches();
    kube.remove('a1', 'team-a');
    kube.compact();
    await until(
      () => changes.some((c) => c.type === 'DELETED' && c.object.metadata.name === 'a1'),
      'delete of a1',
    );
    assert.deepEqual(store.keys(), ['team-b/b1']);
    assert.deepEqual(
      changes.filter((c) => c.type === 'DELETED').map((c) => c.object.metadata.name),
      ['a1'],
      'only the vanished object is reported deleted',
    );
    await Promise.all(watchers.map((w) => w.stop()));
  });

  it('detects a silent watch, reports stalled, restarts it, and clears the flag once connected', async () => {
    const kube = new FakeKube();
    kube.put('a');
    kube.hangWatches = true;
    const { watcher } = start(kube, { stallTimeoutMs: 30 });
    await watcher.waitForSync();
    await until(() => watcher.stalled, 'stall detected');
    const callsWhenStalled = kube.watchCalls;
    kube.hangWatches = false;
    await until(() => kube.watchCalls > callsWhenStalled && !watcher.stalled, 'restarted watch');
    kube.put('b');
    await until(() => watcher.store.size === 2, 'events flow after restart');
    await watcher.stop();
  });

  // Read-your-writes puts a write of ours in the cache before its watch event arrives; that event must still reach
  // the handlers, since another controller may learn of the object only through it (a SampleDBBackup created by
  // the SampleDB controller was never reconciled by the backup controller).
  describe('own writes cached before their watch event', () => {
    const about = (changes: Change<KubeObject>[], name: string) =>
      changes.filter((c) => c.object.metadata.name === name).map((c) => c.type);

    it('announces a created object once, as ADDED', async () => {
      const kube = new FakeKube();
      const { watcher, changes } = start(kube);
      await watcher.waitForSync();
      await until(() => kube.openWatches === 1, 'watch open');
      // Same tick: the response of our create is cached before the watcher reads the event.
      watcher.store.applyOwnWrite(kube.put('b'));
      kube.put('z');
      await until(() => about(changes, 'z').length === 1, 'later event seen');
      assert.deepEqual(about(changes, 'b'), ['ADDED']);
      await watcher.stop();
    });

    it('announces an update as MODIFIED from the version the watch delivered before', async () => {
      const kube = new FakeKube();
      kube.put('a');
      const { watcher, changes } = start(kube);
      await watcher.waitForSync();
      await until(() => kube.openWatches === 1, 'watch open');
      changes.length = 0;
      watcher.store.applyOwnWrite(kube.put('a', { data: { v: '2' } }));
      kube.put('z');
      await until(() => about(changes, 'z').length === 1, 'later event seen');
      const modified = changes.filter((c) => c.object.metadata.name === 'a');
      assert.deepEqual(
        modified.map((c) => [c.type, c.old?.metadata.resourceVersion, c.object.metadata.resourceVersion]),
        [['MODIFIED', '101', '102']],
      );
      await watcher.stop();
    });

    it('announces an own write first seen by a relist after 410 Gone', async () => {
      const kube = new FakeKube();
      kube.put('a');
      const { watcher, changes } = start(kube);
      await watcher.waitForSync();
      await until(() => kube.openWatches === 1, 'watch open');
      // Same tick: the watch drops, we create c, and history is compacted, so c is seen only by the relist.
      kube.closeWatches();
      watcher.store.applyOwnWrite(kube.put('c'));
      kube.compact();
      await until(() => about(changes, 'c').length > 0, 'c announced');
      kube.put('z');
      await until(() => about(changes, 'z').length === 1, 'later event seen');
      assert.deepEqual(about(changes, 'c'), ['ADDED']);
      await watcher.stop();
    });
  });

  it('bookmarks advance the resume point', async () => {
    const kube = new FakeKube();
    kube.put('a');
    const { watcher } = start(kube);
    await watcher.waitForSync();
    await until(() => kube.openWatches === 1, 'watch open');
    kube.rv = 500;
    kube.bookmark();
    await until(() => watcher.resourceVersion === '500', 'bookmark rv');
    await watcher.stop();
  });
});
