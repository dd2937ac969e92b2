import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { InformerCache } from '../../../src/runtime/cache.ts';
import { Client, ConflictError } from '../../../src/runtime/client.ts';
import { ApiError, isStatus, type KubeHttp } from '../../../src/runtime/http.ts';
import { resourceType } from '../../../src/runtime/kinds.ts';
import type { KubeObject, ObjectRef } from '../../../src/runtime/resource.ts';
import { Store } from '../../../src/runtime/store.ts';

// Client over a recording fake transport: asserts the requests it would send and what it caches.

// Typed by the runtime's own KubeObject, so the fixtures below need no client-node types.
const configMaps = resourceType<KubeObject>('', 'v1', 'configmaps', 'ConfigMap');

type Call = { verb: string; args: unknown[] };

function fakeHttp(respond: (call: Call) => unknown = (c) => c.args[1]): { http: KubeHttp; calls: Call[] } {
  const calls: Call[] = [];
  const record =
    (verb: string) =>
    async (...args: unknown[]) => {
      const call = { verb, args };
      calls.push(call);
      const result = respond(call);
      if (result instanceof Error) throw result;
      return result;
    };
  const http = {
    apply: record('apply'),
    patch: record('patch'),
    create: record('create'),
    delete: record('delete'),
  };
  return { http: http as unknown as KubeHttp, calls };
}

function cacheWith(store: Store<KubeObject>): InformerCache {
  return {
    storeFor: () => store,
    get: (_rt: unknown, ref: ObjectRef) => store.get(ref),
    storeForWrite: () => store,
  } as unknown as InformerCache;
}

const cm = (rv: string, finalizers?: string[]): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'x', namespace: 'ns', uid: 'u1', resourceVersion: rv, finalizers },
});

describe('Client', () => {
  it('applies with the field manager it is given and force, and caches the result (read-your-writes)', async () => {
    const store = new Store<KubeObject>();
    store.upsert(cm('5'));
    const { http, calls } = fakeHttp(() => cm('6'));
    const client = new Client({ http, fieldManager: 'example-operator', cache: cacheWith(store) });
    await client.apply(configMaps, cm(''));
    assert.deepEqual(calls[0]?.args[2], { fieldManager: 'example-operator', force: true });
    assert.equal(client.get(configMaps, { namespace: 'ns', name: 'x' })?.metadata.resourceVersion, '6');
  });

  it('does not send an apply whose result the cache already holds (write-skipping), and sends a changed one', async () => {
    const store = new Store<KubeObject>();
    const desired = (value: string) => ({ ...cm(''), data: { key: value } });
    const applied = (rv: string, value: string) => ({
      ...desired(value),
      metadata: {
        ...cm(rv).metadata,
        managedFields: [
          {
            manager: 'example-operator',
            operation: 'Apply',
            apiVersion: 'v1',
            fieldsV1: { 'f:data': { 'f:key': {} } },
          },
        ],
      },
    });
    let rv = 5;
    const { http, calls } = fakeHttp((call) =>
      applied(String(rv++), (call.args[1] as { data: { key: string } }).data.key),
    );
    const client = new Client({ http, fieldManager: 'example-operator', cache: cacheWith(store) });
    await client.apply(configMaps, desired('a'));
    const skipped = await client.apply(configMaps, desired('a'));
    assert.equal(calls.length, 1, 'the second, identical apply is not sent');
    assert.equal(skipped.metadata.resourceVersion, '5', 'it returns the cached object');
    await client.apply(configMaps, desired('b'));
    assert.equal(calls.length, 2, 'a changed value is sent');
  });

  it('applies status through the status subresource', async () => {
    const { http, calls } = fakeHttp(() => cm('7'));
    await new Client({ http, fieldManager: 'example-operator' }).applyStatus(configMaps, cm(''));
    assert.equal((calls[0]!.args[2] as { subresource: string }).subresource, 'status');
  });

  it('adds a finalizer with a resourceVersion test and maps a failed test to ConflictError', async () => {
    const { http, calls } = fakeHttp(() => new ApiError(422, 'PATCH', '/x', { reason: 'Invalid' }));
    const client = new Client({ http, fieldManager: 'example-operator' });
    await assert.rejects(client.addFinalizer(configMaps, cm('9'), 'example.com/cleanup'), ConflictError);
    assert.deepEqual(calls[0]?.args[2], [
      { op: 'test', path: '/metadata/resourceVersion', value: '9' },
      { op: 'add', path: '/metadata/finalizers', value: ['example.com/cleanup'] },
    ]);
    assert.equal(calls[0]?.args[3], 'json');
  });

  it('removes a finalizer by index, guarded, and is a no-op when absent', async () => {
    const { http, calls } = fakeHttp(() => cm('11', ['a']));
    const client = new Client({ http, fieldManager: 'example-operator' });
    await client.removeFinalizer(configMaps, cm('10', ['a', 'b']), 'b');
    assert.deepEqual(calls[0]?.args[2], [
      { op: 'test', path: '/metadata/resourceVersion', value: '10' },
      { op: 'test', path: '/metadata/finalizers/1', value: 'b' },
      { op: 'remove', path: '/metadata/finalizers/1' },
    ]);
    await client.removeFinalizer(configMaps, cm('11', ['a']), 'b');
    assert.equal(calls.length, 1);
  });

  it('deduplicates repeated events into a series on one Event object', async () => {
    let now = new Date('2025-01-01T00:00:00Z');
    const { http, calls } = fakeHttp((c) => c.args[1]);
    const client = new Client({ http, fieldManager: 'example-operator', now: () => now });
    const event = {
      regarding: cm('1'),
      type: 'Warning' as const,
      reason: 'Bad',
      action: 'Reconcile',
      note: 'n',
    };
    // Events are written in the background: flushEvents() waits for each write, so the calls below stay ordered.
    await client.event(event);
    await client.flushEvents(1000);
    now = new Date('2025-01-01T00:00:10Z');
    await client.event(event);
    await client.flushEvents(1000);
    await client.event(event);
    await client.flushEvents(1000);
    assert.deepEqual(
      calls.map((c) => c.verb),
      ['create', 'patch', 'patch'],
    );
    const created = calls[0]!.args[1] as { metadata: { name: string }; regarding: { uid: string } };
    assert.equal(created.regarding.uid, 'u1');
    assert.equal((calls[1]!.args[2] as { series: { count: number } }).series.count, 2);
    assert.equal((calls[2]!.args[2] as { series: { count: number } }).series.count, 3);
    assert.equal((calls[2]!.args[1] as { name: string }).name, created.metadata.name);
    await client.event({ ...event, note: 'different' });
    await client.flushEvents(1000);
    assert.equal(calls.at(-1)?.verb, 'create', 'a different note is a different event');
  });

  it('treats deleting a missing object as done', async () => {
    const { http } = fakeHttp(() => new ApiError(404, 'DELETE', '/x', {}));
    await new Client({ http, fieldManager: 'example-operator' }).delete(configMaps, {
      namespace: 'ns',
      name: 'x',
    });
  });
  it('raises every lost optimistic-concurrency race as an ApiError with status 409, the answer as its cause', async () => {
    const failedTest = new ApiError(422, 'PATCH', '/x', { reason: 'Invalid', message: 'test failed' });
    const changed = new ApiError(409, 'DELETE', '/x', { reason: 'Conflict', message: 'uid precondition' });
    const races: [string, ApiError, (client: Client) => Promise<unknown>][] = [
      [
        'a guarded patch whose test failed (422)',
        failedTest,
        (c) => c.addFinalizer(configMaps, cm('9'), 'f'),
      ],
      [
        'a delete whose precondition failed (409)',
        changed,
        (c) => c.delete(configMaps, { namespace: 'ns', name: 'x' }),
      ],
    ];
    for (const [what, answer, write] of races) {
      const { http } = fakeHttp(() => answer);
      const err = await write(new Client({ http, fieldManager: 'example-operator' })).then(
        () => assert.fail(`${what}: resolved`),
        (e: unknown) => e,
      );
      assert.ok(err instanceof ConflictError, what);
      assert.ok(err instanceof ApiError, `${what}: an ApiError`);
      assert.equal(err.status, 409, what);
      assert.equal(err.reason, 'Conflict', what);
      assert.ok(isStatus(err, 409), what);
      assert.equal(err.name, 'ConflictError');
      assert.equal(err.message, answer.message);
      assert.equal(err.cause, answer);
    }
  });
});
