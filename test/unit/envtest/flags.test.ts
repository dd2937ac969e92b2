import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergeFlags } from '../../../src/envtest/flags.ts';

test('an extra flag replaces the default of the same name and keeps the others', () => {
  assert.deepEqual(mergeFlags(['--a=1', '--b=2', '--c'], ['--b=3', '--d=4']), [
    '--a=1',
    '--c',
    '--b=3',
    '--d=4',
  ]);
});

test('a flag whose name is a prefix of another does not replace it', () => {
  assert.deepEqual(mergeFlags(['--watch-cache=true', '--watch-cache-sizes=x'], ['--watch-cache=false']), [
    '--watch-cache-sizes=x',
    '--watch-cache=false',
  ]);
});
