import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Backoff, exponentialDelay } from '../../../src/runtime/backoff.ts';

describe('Backoff', () => {
  it('stays within [ceiling * (1 - jitter), ceiling] for any random draw', () => {
    for (const r of [0, 0.25, 0.5, 0.999999]) {
      const b = new Backoff({ initialMs: 100, maxMs: 1000, factor: 2, jitter: 0.5 }, () => r);
      const ceilings = [100, 200, 400, 800, 1000, 1000];
      for (const ceiling of ceilings) {
        const d = b.next();
        assert.ok(
          d <= ceiling && d >= ceiling * 0.5,
          `delay ${d} outside [${ceiling / 2}, ${ceiling}] (r=${r})`,
        );
      }
    }
  });

  it('is exactly the ceiling without jitter and restarts after reset', () => {
    const b = new Backoff({ initialMs: 10, maxMs: 50, factor: 3, jitter: 0 });
    assert.deepEqual([b.next(), b.next(), b.next(), b.next()], [10, 30, 50, 50]);
    b.reset();
    assert.equal(b.next(), 10);
  });

  it('spreads delays with the real random source', () => {
    const draws = new Set(
      Array.from({ length: 20 }, () => new Backoff({ initialMs: 1000, jitter: 0.5 }).next()),
    );
    assert.ok(draws.size > 1, 'jitter must vary between clients');
    for (const d of draws) assert.ok(d >= 500 && d <= 1000);
  });
});

describe('exponentialDelay', () => {
  it('grows by the factor from the initial delay and stops at the cap', () => {
    const schedule = { initialMs: 5, maxMs: 100, factor: 2 };
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5, 6].map((n) => exponentialDelay(n, schedule)),
      [5, 10, 20, 40, 80, 100, 100],
    );
  });

  it('treats a negative count as no failure, and stays finite for a huge one', () => {
    assert.equal(exponentialDelay(-3, { initialMs: 7, maxMs: 70, factor: 2 }), 7);
    assert.equal(exponentialDelay(5000, { initialMs: 7, maxMs: 70, factor: 2 }), 70);
  });
});
