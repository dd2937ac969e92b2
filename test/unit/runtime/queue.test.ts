import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { runtimeMetrics } from '../../../src/runtime/metrics.ts';
import { TokenBucket, WorkQueue } from '../../../src/runtime/queue.ts';
import { FakeClock, settle } from './fake-clock.ts';

// Unit tests on a fake clock: delays are asserted as computed values, never by waiting.

function newQueue(clock = new FakeClock(), extra: Partial<ConstructorParameters<typeof WorkQueue>[0]> = {}) {
  return { clock, queue: new WorkQueue({ name: 'test', clock, ...extra }) };
}

describe('WorkQueue', () => {
  it('dedups a key added several times while waiting', async () => {
    const { queue } = newQueue();
    queue.add('ns/a');
    queue.add('ns/a');
    queue.add('ns/b');
    queue.add('ns/a');
    assert.equal(queue.length, 2);
    assert.equal(await queue.get(), 'ns/a');
    assert.equal(await queue.get(), 'ns/b');
    assert.equal(queue.length, 0);
  });

  it('never hands the same key to two workers at once', async () => {
    const { queue } = newQueue();
    queue.add('ns/a');
    const first = await queue.get();
    queue.add('ns/a');
    let second: string | undefined = 'not yet';
    const pending = queue.get().then((k) => {
      second = k;
    });
    await settle();
    assert.equal(first, 'ns/a');
    assert.equal(second, 'not yet', 'second worker must wait while ns/a is processing');
    queue.done('ns/a');
    await pending;
    assert.equal(second, 'ns/a');
  });

  it('turns any number of adds during processing into exactly one follow-up', async () => {
    const { queue } = newQueue();
    queue.add('k');
    const key = await queue.get();
    for (let i = 0; i < 50; i++) queue.add('k');
    assert.equal(queue.length, 0, 'nothing queued while processing');
    queue.done(key!);
    assert.equal(queue.length, 1);
    assert.equal(await queue.get(), 'k');
    queue.done('k');
    assert.equal(queue.length, 0, 'no second follow-up');
  });

  it('grows the per-key backoff exponentially from 5 ms and caps it at 1000 s', () => {
    const { queue } = newQueue(new FakeClock(), { qps: 1e9, burst: 1e9 });
    const delays = Array.from({ length: 30 }, () => queue.addRateLimited('k'));
    assert.deepEqual(delays.slice(0, 5), [5, 10, 20, 40, 80]);
    assert.equal(Math.max(...delays), 1_000_000);
    assert.equal(delays.at(-1), 1_000_000);
    assert.equal(queue.numRequeues('k'), 30);
    queue.forget('k');
    assert.equal(queue.addRateLimited('k'), 5, 'forget resets the backoff');
  });

  it('keeps backoff per key', () => {
    const { queue } = newQueue(new FakeClock(), { qps: 1e9, burst: 1e9 });
    queue.addRateLimited('a');
    queue.addRateLimited('a');
    assert.equal(queue.addRateLimited('a'), 20);
    assert.equal(queue.addRateLimited('b'), 5);
  });

  it('delivers a rate-limited key only after its delay', async () => {
    const { queue, clock } = newQueue();
    queue.addRateLimited('k');
    queue.addRateLimited('k');
    assert.equal(queue.length, 0);
    await clock.advance(4);
    assert.equal(queue.length, 0);
    await clock.advance(1);
    assert.equal(queue.length, 1, 'the earlier (5 ms) schedule wins over the later (10 ms) one');
    assert.equal(await queue.get(), 'k');
    queue.done('k');
    await clock.advance(100);
    assert.equal(queue.length, 0, 'the superseded timer does not add the key again');
  });

  it('forget cancels a pending failure retry but keeps an explicit requeueAfter', async () => {
    const { queue, clock } = newQueue();
    queue.addRateLimited('failed');
    queue.forget('failed');
    queue.addAfter('requeued', 5);
    queue.forget('requeued');
    queue.addRateLimited('both');
    queue.addAfter('both', 1);
    queue.forget('both');
    await clock.advance(100);
    const delivered = [];
    while (queue.length > 0) delivered.push(await queue.get());
    assert.deepEqual(
      delivered.sort(),
      ['both', 'requeued'],
      'the retry of a key that then succeeded never fires',
    );
  });

  it('applies the overall token bucket: burst 100 free, then 10 per second', () => {
    const clock = new FakeClock();
    const { queue } = newQueue(clock);
    const delays = Array.from({ length: 110 }, (_, i) => queue.addRateLimited(`k${i}`));
    assert.ok(
      delays.slice(0, 100).every((d) => d === 5),
      'first 100 only pay their own 5 ms',
    );
    assert.equal(Math.round(delays[100]!), 100);
    assert.equal(Math.round(delays[109]!), 1000);
  });

  it('refills the token bucket over time', async () => {
    const clock = new FakeClock();
    const bucket = new TokenBucket(10, 2, clock);
    assert.equal(bucket.reserve(), 0);
    assert.equal(bucket.reserve(), 0);
    assert.equal(Math.round(bucket.reserve()), 100);
    await clock.advance(1000);
    assert.equal(bucket.reserve(), 0);
  });

  it('requeueAfter: addAfter delivers at the given time and keeps the earliest schedule', async () => {
    const { queue, clock } = newQueue();
    queue.addAfter('k', 1000);
    queue.addAfter('k', 300);
    queue.addAfter('k', 5000);
    await clock.advance(299);
    assert.equal(queue.length, 0);
    await clock.advance(1);
    assert.equal(queue.length, 1);
    assert.equal(await queue.get(), 'k');
    queue.done('k');
    await clock.advance(10_000);
    assert.equal(queue.length, 0);
  });

  it('shutDown releases waiting workers and rejects further adds', async () => {
    const { queue } = newQueue();
    const waiting = queue.get();
    queue.shutDown();
    assert.equal(await waiting, undefined);
    queue.add('k');
    assert.equal(queue.length, 0);
    assert.equal(await queue.get(), undefined);
  });

  it('get() resolves undefined when the worker signal aborts, without losing a later key', async () => {
    const { queue } = newQueue();
    const ac = new AbortController();
    const waiting = queue.get(ac.signal);
    ac.abort();
    assert.equal(await waiting, undefined);
    queue.add('k');
    assert.equal(await queue.get(), 'k');
  });

  it('whenIdle resolves once in-flight keys are done', async () => {
    const { queue } = newQueue();
    queue.add('a');
    await queue.get();
    let idle = false;
    const p = queue.whenIdle().then(() => {
      idle = true;
    });
    await settle();
    assert.equal(idle, false);
    queue.done('a');
    await p;
    assert.equal(idle, true);
  });

  it('records workqueue metrics', async () => {
    const registry = new Registry();
    const clock = new FakeClock();
    const queue = new WorkQueue({ name: 'm', clock, metrics: runtimeMetrics(registry) });
    queue.add('a');
    queue.add('a');
    queue.add('b');
    const key = await queue.get();
    await clock.advance(250);
    queue.done(key!);
    queue.addRateLimited('a');
    const text = await registry.metrics();
    assert.match(text, /workqueue_adds_total\{name="m",controller="m"\} 2/);
    assert.match(text, /workqueue_depth\{name="m",controller="m"\} 1/);
    assert.match(text, /workqueue_retries_total\{name="m",controller="m"\} 1/);
    assert.match(text, /workqueue_work_duration_seconds_sum\{name="m",controller="m"\} 0.25/);
    assert.match(text, /workqueue_queue_duration_seconds_count\{name="m",controller="m"\} 1/);
  });

  it('publishes a depth of 0 before anything is queued, and while idle workers take keys straight from add()', async () => {
    const registry = new Registry();
    const queue = new WorkQueue({ name: 'idle', clock: new FakeClock(), metrics: runtimeMetrics(registry) });
    assert.match(await registry.metrics(), /workqueue_depth\{name="idle",controller="idle"\} 0/);
    const waiting = queue.get();
    queue.add('a');
    assert.equal(await waiting, 'a');
    assert.match(await registry.metrics(), /workqueue_depth\{name="idle",controller="idle"\} 0/);
  });
});
