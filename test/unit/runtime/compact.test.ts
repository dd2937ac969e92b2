import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { objectOf, sharedTimestamp } from '../../../src/runtime/compact.ts';

describe('objectOf', () => {
  it('reads as Object.fromEntries would: keys in order, values, JSON, prototype', () => {
    const labels = { app: 'db' };
    const cases: [string, unknown][][] = [
      [
        ['name', 'a'],
        ['namespace', 'ns'],
        ['uid', 'u'],
        ['resourceVersion', '1'],
        ['labels', labels],
      ],
      // The same keys again (the layout reused), then other keys and another order, then the first ones once more.
      [
        ['name', 'b'],
        ['namespace', 'ns'],
        ['uid', 'v'],
        ['resourceVersion', '2'],
        ['labels', {}],
      ],
      [
        ['uid', 'w'],
        ['name', 'c'],
        ['generation', 3],
        ['finalizers', ['f']],
        ['deletionTimestamp', undefined],
      ],
      [
        ['name', 'd'],
        ['namespace', 'ns'],
        ['uid', 'x'],
        ['resourceVersion', '4'],
        ['labels', labels],
      ],
      [],
      [
        ['a"b\\c', 1],
        ['', null],
        ['ключ', true],
      ],
    ];
    for (const entries of cases) {
      const built = objectOf(entries);
      const expected = Object.fromEntries(entries);
      assert.deepEqual(Object.keys(built), Object.keys(expected));
      assert.deepEqual(built, expected);
      assert.equal(JSON.stringify(built), JSON.stringify(expected));
      assert.equal(Object.getPrototypeOf(built), Object.prototype);
    }
    assert.equal(objectOf(cases[0]!).labels, labels, 'values are held, not copied');
  });

  it('makes objects that do not share state: writing one leaves the next alone', () => {
    const first = objectOf([
      ['a', 1],
      ['b', 2],
    ]);
    first.a = 'changed';
    first.extra = true;
    assert.deepEqual(
      objectOf([
        ['a', 3],
        ['b', 4],
      ]),
      { a: 3, b: 4 },
    );
  });

  it('keeps __proto__ an own property, as Object.fromEntries does', () => {
    const built = objectOf([
      ['__proto__', { polluted: true }],
      ['x', 1],
    ]);
    assert.equal(Object.getPrototypeOf(built), Object.prototype);
    assert.deepEqual(Object.keys(built), ['__proto__', 'x']);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});

describe('sharedTimestamp', () => {
  it('returns an equal string, also past the window of recent values', () => {
    for (let i = 0; i < 200; i++) {
      const value = `2026-12-07T13:${String(i % 60).padStart(2, '0')}:${String(i).padStart(2, '0')}Z`;
      assert.equal(sharedTimestamp(value), value);
      assert.equal(sharedTimestamp(`${value}`), value);
    }
  });
});
