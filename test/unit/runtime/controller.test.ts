import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { InformerCache } from '../../../src/runtime/cache.ts';
import { ConflictError } from '../../../src/runtime/client.ts';
import { Controller, controllerOwnerRefs, type ReconcileRequest } from '../../../src/runtime/controller.ts';
import { CONFIG_MAPS } from '../../../src/runtime/kinds.ts';
import { runtimeMetrics } from '../../../src/runtime/metrics.ts';
import type { ResourceType } from '../../../src/runtime/resource.ts';
import { FakeClock, settle } from './fake-clock.ts';
import { FakeKube, until } from './fake-kube.ts';

// Controller over a fake in-memory transport (FakeKube); queue delays run on a fake clock.

const configMaps = CONFIG_MAPS;
const widgets: ResourceType = {
  group: 'example.com',
  version: 'v1',
  plural: 'widgets',
  kind: 'Widget',
  namespaced: true,
};

async function setup(
  reconcile: (req: ReconcileRequest) => Promise<{ requeueAfter?: number } | undefined>,
  opts: {
    owns?: boolean;
    workers?: number;
    onError?: (req: ReconcileRequest, err: unknown) => void;
    orphanKeys?: () => { namespace: string; name: string }[];
  } = {},
) {
  const kube = new FakeKube();
  const clock = new FakeClock();
  const registry = new Registry();
  const cache = new InformerCache({ http: kube.asHttp() });
  const controller = new Controller(
    {
      name: 'test',
      for: opts.owns ? widgets : configMaps,
      owns: opts.owns ? [configMaps] : [],
      reconciler: { reconcile },
      workers: opts.workers ?? 2,
      onError: opts.onError,
      ...(opts.orphanKeys ? { orphanKeys: opts.orphanKeys } : {}),
    },
    { cache, clock, metrics: runtimeMetrics(registry) },
  );
  cache.start();
  return { kube, clock, registry, cache, controller };
}

describe('Controller', () => {
  it('reconciles every primary object once workers start', async () => {
    const seen: string[] = [];
    const { kube, cache, controller } = await setup(async (req) => {
      seen.push(`${req.namespace}/${req.name}`);
      return undefined;
    });
    kube.put('a');
    kube.put('b');
    await cache.waitForSync();
    controller.startWorkers();
    await until(() => seen.length === 2, 'two reconciles');
    kube.put('c');
    await until(() => seen.includes('ns/c'), 'c reconciled');
    await controller.shutdown();
    await cache.stop();
  });

  it('at start also reconciles the keys orphanKeys names, though no primary has them', async () => {
    const seen: string[] = [];
    const { kube, cache, controller } = await setup(
      async (req) => {
        seen.push(`${req.namespace}/${req.name}`);
        return undefined;
      },
      { orphanKeys: () => [{ namespace: 'ns', name: 'gone' }] },
    );
    kube.put('a');
    await cache.waitForSync();
    controller.startWorkers();
    await until(() => seen.length === 2, 'two reconciles');
    assert.deepEqual(seen.sort(), ['ns/a', 'ns/gone']);
    await controller.shutdown();
    await cache.stop();
  });

  it('backs off a throwing reconciler (no hot loop, no crash) and calls onError', async () => {
    let attempts = 0;
    const errors: unknown[] = [];
    const { kube, clock, registry, cache, controller } = await setup(
      async () => {
        attempts++;
        throw new Error('malformed spec');
      },
      { onError: (_req, err) => errors.push(err) },
    );
    kube.put('bad');
    await cache.waitForSync();
    controller.startWorkers();
    await until(() => attempts === 1, 'first attempt');
    // 1 s of fake time covers the 5+10+20+...+320 ms backoff steps: 8 attempts, not thousands.
    for (let i = 0; i < 100; i++) await clock.advance(10);
    assert.equal(attempts, 8);
    assert.equal(errors.length, 8);
    assert.equal(controller.queue.numRequeues('ns/bad'), 8);
    const text = await registry.metrics();
    assert.match(text, /controller_runtime_reconcile_errors_total\{controller="test"\} 8/);
    assert.match(text, /controller_runtime_reconcile_total\{controller="test",result="error"\} 8/);
    await controller.shutdown();
    await cache.stop();
  });

  it('a write that lost to a newer object (ConflictError) is reconciled again: not an error, no onError', async () => {
    let attempts = 0;
    const errors: unknown[] = [];
    const { kube, clock, registry, cache, controller } = await setup(
      async () => {
        attempts++;
        if (attempts === 1) throw new ConflictError('the object has been modified');
        return undefined;
      },
      { onError: (_req, err) => errors.push(err) },
    );
    kube.put('raced');
    await cache.waitForSync();
    controller.startWorkers();
    await until(() => attempts === 1, 'first attempt');
    for (let i = 0; i < 10 && attempts < 2; i++) await clock.advance(10);
    assert.equal(attempts, 2, 'reconciled again after the backoff step');
    assert.deepEqual(errors, [], 'onError is for failures, not for stale reads');
    const text = await registry.metrics();
    assert.match(text, /controller_runtime_reconcile_total\{controller="test",result="conflict"\} 1/);
    assert.doesNotMatch(text, /controller_runtime_reconcile_errors_total\{controller="test"\} [1-9]/);
    await controller.shutdown();
    await cache.stop();
  });

  it('honours requeueAfter', async () => {
    let runs = 0;
    const { kube, clock, cache, controller } = await setup(async () => {
      runs++;
      return { requeueAfter: 60_000 };
    });
    kube.put('a');
    await cache.waitForSync();
    controller.startWorkers();
    await until(() => runs === 1, 'first run');
    await clock.advance(59_000);
    assert.equal(runs, 1);
    await clock.advance(1_000);
    await until(() => runs === 2, 'requeued run');
    await controller.shutdown();
    await cache.stop();
  });

  it('maps owned objects to their controlling owner', async () => {
    const seen: string[] = [];
    const { kube, cache, controller } = await setup(
      async (req) => {
        seen.push(req.name);
        return undefined;
      },
      { owns: true },
    );
    await cache.waitForSync();
    controller.startWorkers();
    kube.put(
      'child',
      {
        metadata: {
          name: 'child',
          namespace: 'ns',
          resourceVersion: '999',
          ownerReferences: [
            { apiVersion: 'example.com/v1', kind: 'Widget', name: 'w1', uid: 'u1', controller: true },
            { apiVersion: 'example.com/v1', kind: 'Widget', name: 'not-controller', uid: 'u2' },
          ],
        },
      },
      'ns',
      'configmaps',
    );
    await until(() => seen.includes('w1'), 'owner reconciled');
    await settle();
    assert.deepEqual(seen, ['w1']);
    await controller.shutdown();
    await cache.stop();
  });

  it('never runs one key on two workers and stopWorkers waits for in-flight reconciles', async () => {
    let inFlight = 0;
    let maxSameKey = 0;
    const perKey = new Map<string, number>();
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let finished = 0;
    const { kube, cache, controller } = await setup(
      async (req) => {
        inFlight++;
        perKey.set(req.name, (perKey.get(req.name) ?? 0) + 1);
        maxSameKey = Math.max(maxSameKey, perKey.get(req.name)!);
        await gate;
        perKey.set(req.name, perKey.get(req.name)! - 1);
        inFlight--;
        finished++;
        return undefined;
      },
      { workers: 4 },
    );
    kube.put('a');
    await cache.waitForSync();
    controller.startWorkers();
    await until(() => inFlight === 1, 'a in flight');
    for (let i = 0; i < 10; i++) kube.put('a', { data: { i: String(i) } });
    await settle();
    assert.equal(inFlight, 1, 'updates to a busy key wait');
    const stopping = controller.stopWorkers(5_000);
    release();
    assert.equal(await stopping, true);
    assert.equal(maxSameKey, 1);
    assert.ok(finished >= 1);
    await cache.stop();
  });

  it('reconciles an object it never reconciled before one it re-reconciles, and again after a delete', async () => {
    const seen: string[] = [];
    let release: () => void = () => {};
    let busy = false;
    const { kube, cache, controller } = await setup(
      async (req) => {
        seen.push(req.name);
        if (req.name === 'busy') {
          busy = true;
          await new Promise<void>((r) => {
            release = r;
          });
          busy = false;
        }
        return undefined;
      },
      { workers: 1 },
    );
    kube.put('old');
    await cache.waitForSync();
    controller.startWorkers();
    await until(() => seen.length === 1, 'old reconciled');
    kube.put('busy');
    await until(() => busy, 'the one worker busy');
    kube.put('old', { data: { v: '2' } }); // re-reconcile: rest lane
    kube.put('new'); // never reconciled: first lane
    await until(() => controller.queue.length === 2, 'both waiting');
    release();
    await until(() => seen.length === 4, 'both reconciled');
    assert.deepEqual(seen, ['old', 'busy', 'new', 'old']);

    // Deleted and created again under the same name, it is a new object: first again.
    kube.remove('new');
    await until(() => seen.length === 5, 'delete reconciled');
    kube.put('busy', { data: { v: '2' } });
    await until(() => busy, 'the one worker busy again');
    kube.put('old', { data: { v: '3' } });
    kube.put('new');
    await until(() => controller.queue.length === 2, 'both waiting again');
    release();
    await until(() => seen.length === 8, 'both reconciled again');
    assert.deepEqual(seen.slice(5), ['busy', 'new', 'old']);
    await controller.shutdown();
    await cache.stop();
  });

  it('controllerOwnerRefs matches kind and group, and requires controller=true', () => {
    const refs = controllerOwnerRefs(
      {
        metadata: {
          namespace: 'ns',
          ownerReferences: [
            { apiVersion: 'other.io/v1', kind: 'Widget', name: 'x', uid: '1', controller: true },
            { apiVersion: 'example.com/v2', kind: 'Widget', name: 'y', uid: '2', controller: true },
          ],
        },
      },
      widgets,
    );
    assert.deepEqual(refs, [{ namespace: 'ns', name: 'y' }]);
  });
});
