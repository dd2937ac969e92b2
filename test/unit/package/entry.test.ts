// The published entry point, as another project imports it: `import ... from 'sampledb-operator'` resolves through
// package.json "exports" to the compiled lib/ (built by `npm run build`, which scripts/test.sh runs first).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { App, Chart, Testing } from 'cdk8s';
import { KINDS } from '../../../src/api/identity.ts';

describe('package entry point', () => {
  it('exposes the constructs and the API from compiled JavaScript', async () => {
    const entry = await import('sampledb-operator');
    for (const name of [
      'SampleDbCrds',
      'SampleDbOperator',
      'SampleDb',
      'SampleDbBackup',
      'sampleDbCrd',
      'resolveSampleDbSpec',
    ]) {
      assert.equal(typeof (entry as Record<string, unknown>)[name], 'function', `${name} is exported`);
    }
    assert.match(import.meta.resolve('sampledb-operator'), /\/lib\/index\.js$/);
  });

  it('synthesizes from another app through the package', async () => {
    const { SampleDb, SampleDbCrds } = await import('sampledb-operator');
    const app = new App();
    const chart = new Chart(app, 'consumer');
    new SampleDbCrds(chart, 'crds');
    new SampleDb(chart, 'db', { spec: { version: '17', storage: { size: '2Gi' } } });
    const kinds = Testing.synth(chart).map((o) => o.kind);
    // One CustomResourceDefinition per kind of the API, then the database.
    assert.deepEqual(kinds, [
      ...Array.from({ length: Object.keys(KINDS).length }, () => 'CustomResourceDefinition'),
      'SampleDB',
    ]);
  });

  it('keeps the controller and Pulumi out of the constructs entry point', () => {
    // Walks the static import graph of lib/index.js: a cdk8s user must not need client-node or Pulumi.
    const seen = new Set<string>();
    const packages = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const [, specifier] of readFileSync(file, 'utf8').matchAll(
        /^(?:import|export)[^;]*?from ["']([^"']+)["']/gm,
      )) {
        if (specifier?.startsWith('.')) visit(resolve(dirname(file), specifier));
        else if (specifier)
          packages.add(
            specifier.startsWith('@')
              ? specifier.split('/').slice(0, 2).join('/')
              : (specifier.split('/')[0] ?? specifier),
          );
      }
    };
    visit(fileURLToPath(import.meta.resolve('sampledb-operator')));
    assert.ok(seen.size > 10, 'the walk followed the relative imports');
    assert.deepEqual([...packages].filter((p) => !p.startsWith('node:')).sort(), [
      '@sinclair/typebox',
      'ajv',
      'cdk8s',
      'cdk8s-plus-28',
      'constructs',
    ]);
  });
});
