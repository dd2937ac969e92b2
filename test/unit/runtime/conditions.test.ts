import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  conditionsEqual,
  findCondition,
  isConditionTrue,
  mergeConditions,
  removeCondition,
  setCondition,
} from '../../../src/runtime/conditions.ts';
import { metaTime } from '../../../src/runtime/time.ts';

const t0 = new Date('2025-01-01T00:00:00.123Z');
const t1 = new Date('2025-01-01T01:00:00Z');

describe('conditions', () => {
  it('adds a condition stamped with the current time at second precision', () => {
    const list = setCondition(undefined, { type: 'Ready', status: 'False', reason: 'Init', message: '' }, t0);
    assert.deepEqual(list, [
      {
        type: 'Ready',
        status: 'False',
        reason: 'Init',
        message: '',
        lastTransitionTime: '2025-01-01T00:00:00Z',
      },
    ]);
    assert.equal(metaTime(t0), '2025-01-01T00:00:00Z');
  });

  it('keeps lastTransitionTime when only reason, message or generation change', () => {
    const a = setCondition([], { type: 'Ready', status: 'False', reason: 'A', message: 'x' }, t0);
    const b = setCondition(
      a,
      { type: 'Ready', status: 'False', reason: 'B', message: 'y', observedGeneration: 4 },
      t1,
    );
    assert.equal(b[0]?.lastTransitionTime, metaTime(t0));
    assert.equal(b[0]?.reason, 'B');
    assert.equal(b[0]?.observedGeneration, 4);
  });

  it('moves lastTransitionTime when the status changes', () => {
    const a = setCondition([], { type: 'Ready', status: 'False', reason: 'A', message: '' }, t0);
    const b = setCondition(a, { type: 'Ready', status: 'True', reason: 'Up', message: '' }, t1);
    assert.equal(b[0]?.lastTransitionTime, metaTime(t1));
    assert.equal(isConditionTrue(b, 'Ready'), true);
  });

  it('does not mutate its input and leaves other types alone', () => {
    const a = setCondition([], { type: 'A', status: 'True', reason: 'r', message: '' }, t0);
    const b = setCondition(a, { type: 'B', status: 'True', reason: 'r', message: '' }, t0);
    assert.equal(a.length, 1);
    assert.deepEqual(
      b.map((c) => c.type),
      ['A', 'B'],
    );
    assert.deepEqual(
      removeCondition(b, 'A').map((c) => c.type),
      ['B'],
    );
    assert.equal(findCondition(b, 'C'), undefined);
  });

  it('merges in order and compares as the apiserver stores them', () => {
    const a = mergeConditions(
      [],
      [
        { type: 'Ready', status: 'False', reason: 'A', message: '' },
        { type: 'Ready', status: 'True', reason: 'B', message: '' },
      ],
      t0,
    );
    assert.equal(a.length, 1);
    assert.equal(a[0]?.reason, 'B');
    const same = setCondition(a, { type: 'Ready', status: 'True', reason: 'B', message: '' }, t1);
    assert.equal(conditionsEqual(a, same), true, 'a repeated set is a no-op');
    const differs = setCondition(a, { type: 'Ready', status: 'True', reason: 'C', message: '' }, t1);
    assert.equal(conditionsEqual(a, differs), false);
  });
});
