// The image runs lib/operator.js, the bundle of lib/main.js (scripts/bundle-operator.ts, ADR 0011). It must hold the
// whole operator: a dependency left outside the bundle would be resolved from node_modules at run time, loading the
// many small modules the bundle exists to avoid, or failing where node_modules is absent (the bundling script also
// refuses any import esbuild left external that is not one of Node's built-in modules). Needs `npm run build`
// (scripts/test.sh builds lib/ before the unit tier).
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { fatalLine } from '../../support/fatal-log.ts';

const run = promisify(execFile);
const bundle = fileURLToPath(new URL('../../../lib/operator.js', import.meta.url));

describe('the operator bundle (lib/operator.js)', () => {
  it('exists after the build', () => {
    assert.ok(existsSync(bundle), 'lib/operator.js is missing: run `npm run build`');
  });

  it('runs alone: copied where no node_modules is, it starts and refuses a bad setting by name', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'operator-bundle-'));
    try {
      copyFileSync(bundle, join(dir, 'operator.js'));
      const run = spawnSync(process.execPath, [join(dir, 'operator.js')], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'loud' },
        encoding: 'utf8',
        timeout: 30_000,
      });
      assert.equal(run.status, 1, run.stderr);
      const fatal = fatalLine(run.stdout);
      assert.match(fatal?.err ?? '', /LOG_LEVEL: "loud" is not one of/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('loads no file from node_modules when imported', async () => {
    const probe = `
import { registerHooks } from 'node:module';
const outside = [];
registerHooks({
  resolve(specifier, context, next) {
    const result = next(specifier, context);
    if (result.url.startsWith('file:') && result.url !== process.argv[1]) outside.push(result.url);
    return result;
  },
});
await import(process.argv[1]);
process.stdout.write(JSON.stringify(outside));
`;
    const { stdout } = await run(
      process.execPath,
      ['--input-type=module', '-e', probe, new URL(`file://${bundle}`).href],
      {
        env: { PATH: process.env.PATH ?? '' },
      },
    );
    assert.deepEqual(JSON.parse(stdout), []);
  });
});
