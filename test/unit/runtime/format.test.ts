// The runtime's one error formatter and its two time formats.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeError } from '../../../src/runtime/errors.ts';
import { metaTime, microTime } from '../../../src/runtime/time.ts';

describe('describeError', () => {
  it('names the error class and its message', () => {
    assert.equal(describeError(new TypeError('bad')), 'TypeError: bad');
    class StallError extends Error {
      override name = 'StallError';
    }
    assert.equal(describeError(new StallError('silent')), 'StallError: silent');
  });

  it('writes anything else thrown as a string', () => {
    assert.equal(describeError('plain'), 'plain');
    assert.equal(describeError(42), '42');
    assert.equal(describeError(undefined), 'undefined');
  });

  it('gives the stack only when asked', () => {
    const err = new Error('boom');
    assert.match(describeError(err, { stack: true }), /^Error: boom\n\s+at /);
    assert.equal(describeError(err), 'Error: boom');
    assert.equal(describeError('x', { stack: true }), 'x');
  });
});

describe('time formats', () => {
  const t = new Date('2025-03-04T05:06:07.891Z');
  it('metav1.Time has second precision', () => assert.equal(metaTime(t), '2025-03-04T05:06:07Z'));
  it('metav1.MicroTime has microsecond precision', () =>
    assert.equal(microTime(t), '2025-03-04T05:06:07.891000Z'));
});
