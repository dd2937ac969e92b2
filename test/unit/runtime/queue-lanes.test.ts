import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WorkQueue } from '../../../src/runtime/queue.ts';
import { FakeClock, settle } from './fake-clock.ts';

// The work queue's two lanes, on a fake clock: `first` keys are handed out before `rest` keys, and the queue's
// guarantees (dedup, one worker per key, one follow-up, rate limiting) hold across lanes.

function newQueue(clock = new FakeClock()) {
  return { clock, queue: new WorkQueue({ name: 'lanes', clock, qps: 1e9, burst: 1e9 }) };
}

async function drain(queue: WorkQueue): Promise<string[]> {
  const out: string[] = [];
  while (queue.length > 0) {
    const key = (await queue.get())!;
    out.push(key);
    queue.done(key);
  }
  return out;
}

describe('WorkQueue lanes', () => {
  it('hands out every first key before any rest key, each lane in arrival order', async () => {
    const { queue } = newQueue();
    queue.add('r1');
    queue.add('f1', { lane: 'first' });
    queue.add('r2', { lane: 'rest' });
    queue.add('f2', { lane: 'first' });
    assert.equal(queue.length, 4);
    assert.deepEqual(await drain(queue), ['f1', 'f2', 'r1', 'r2']);
  });

  it('moves a waiting rest key to the first lane and hands it out once', async () => {
    const { queue } = newQueue();
    queue.add('a');
    queue.add('b');
    queue.add('b', { lane: 'first' });
    assert.equal(queue.length, 2, 'still one entry per key');
    assert.deepEqual(await drain(queue), ['b', 'a']);
    assert.equal(queue.length, 0);
  });

  it('keeps a first key first when it is added again for the rest lane', async () => {
    const { queue } = newQueue();
    queue.add('a');
    queue.add('b', { lane: 'first' });
    queue.add('b');
    assert.deepEqual(await drain(queue), ['b', 'a']);
  });

  it('does not hand out a promoted key again from the entry it left in the rest lane', async () => {
    const { queue } = newQueue();
    queue.add('x');
    queue.add('k');
    queue.add('k', { lane: 'first' });
    assert.equal(await queue.get(), 'k');
    queue.done('k');
    // k waits again, now behind x in the rest lane; its old entry ahead of x must not serve it a second time.
    queue.add('k');
    assert.deepEqual(await drain(queue), ['x', 'k']);
  });

  it('never hands a key in the first lane to a second worker while it is processed', async () => {
    const { queue } = newQueue();
    queue.add('a', { lane: 'first' });
    assert.equal(await queue.get(), 'a');
    queue.add('a', { lane: 'first' });
    queue.add('b');
    const second = await queue.get();
    assert.equal(second, 'b', 'a is busy, so the next worker gets b');
    let third: string | undefined = 'not yet';
    const pending = queue.get().then((k) => {
      third = k;
    });
    await settle();
    assert.equal(third, 'not yet');
    queue.done('a');
    await pending;
    assert.equal(third, 'a', 'the one follow-up of a, once it is done');
  });

  it('re-queues the follow-up of a processed key in the lane it was added for', async () => {
    const { queue } = newQueue();
    queue.add('a');
    assert.equal(await queue.get(), 'a');
    queue.add('a', { lane: 'first' });
    queue.add('b');
    queue.done('a');
    assert.deepEqual(await drain(queue), ['a', 'b']);
  });

  it('puts rate-limited and delayed re-adds in the rest lane, after their delay', async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ name: 'lanes', clock, qps: 1, burst: 1 });
    queue.add('f', { lane: 'first' });
    assert.equal(await queue.get(), 'f');
    queue.done('f');
    queue.addRateLimited('f'); // the bucket's one token: per-key delay 5 ms
    queue.addRateLimited('g'); // bucket empty: 1 s
    await clock.advance(5);
    assert.equal(queue.length, 1);
    queue.add('n', { lane: 'first' });
    assert.deepEqual(await drain(queue), ['n', 'f']);
    await clock.advance(994);
    assert.equal(queue.length, 0, 'g still waits for the token bucket');
    await clock.advance(1);
    assert.deepEqual(await drain(queue), ['g']);
  });

  it('drops both lanes on shutdown', async () => {
    const { queue } = newQueue();
    queue.add('a', { lane: 'first' });
    queue.add('b');
    queue.shutDown();
    assert.equal(queue.length, 0);
    assert.equal(await queue.get(), undefined);
  });
});
