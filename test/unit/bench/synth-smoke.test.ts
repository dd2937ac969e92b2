// Keeps bench/synth.bench.ts working (a tiny N, one round); its figures belong to `npm run bench:synth`, not here.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

describe('the synthesis benchmark (smoke)', () => {
  it('synthesizes the constructs and the plain baseline and writes its result', () => {
    const run = spawnSync(process.execPath, ['bench/synth.bench.ts'], {
      encoding: 'utf8',
      env: { ...process.env, BENCH_CONSTRUCTS: '3', BENCH_ROUNDS: '1', CDK8S_CHECK_UPGRADE: 'false' },
    });
    assert.equal(run.status, 0, run.stderr);
    const file = /wrote (\S+)/.exec(run.stdout)?.[1];
    assert.ok(file, run.stdout);
    const result = JSON.parse(readFileSync(file, 'utf8'));
    // The CRDs and the operator's objects, plus one object per SampleDb.
    assert.ok(result.objects > 3, `objects: ${result.objects}`);
    assert.equal(result.constructs, 3);
    assert.ok(result.ratio > 0);
  });
});
