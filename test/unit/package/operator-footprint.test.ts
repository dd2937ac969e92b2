// The operator process must not load @kubernetes/client-node: its KubeConfig pulls in the whole generated API,
// about 100 MB of RSS of a process that otherwise needs far less (ADR 0010, docs/performance.md). Types from it
// are fine (erased); a value import anywhere in the operator's module graph fails this test.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../../', import.meta.url));

// Records every package module the import resolves to; src/main.ts runs nothing when it is imported.
const probe = `
import { registerHooks } from 'node:module';
const loaded = new Set();
registerHooks({
  resolve(specifier, context, next) {
    const result = next(specifier, context);
    const at = result.url.lastIndexOf('/node_modules/');
    if (at >= 0) loaded.add(result.url.slice(at + 14).split('/').slice(0, 2).join('/'));
    return result;
  },
});
await import(process.argv[1]);
process.stdout.write(JSON.stringify([...loaded].sort()));
`;

async function packagesLoadedBy(entry: string): Promise<string[]> {
  const { stdout } = await run(
    process.execPath,
    ['--input-type=module', '-e', probe, new URL(entry, `file://${root}`).href],
    { cwd: root, maxBuffer: 1 << 20 },
  );
  return JSON.parse(stdout) as string[];
}

describe('the operator process footprint', () => {
  it('src/main.ts loads no @kubernetes/client-node module (and the probe sees packages at all)', async () => {
    const loaded = await packagesLoadedBy('src/main.ts');
    assert.ok(
      loaded.some((p) => p.startsWith('pino')),
      `the probe saw no packages: ${loaded.join(', ')}`,
    );
    assert.deepEqual(
      loaded.filter((p) => p.startsWith('@kubernetes/')),
      [],
    );
  });

  it('the probe does see client-node where it is loaded (src/cli/main.ts)', async () => {
    const loaded = await packagesLoadedBy('src/cli/main.ts');
    assert.ok(loaded.includes('@kubernetes/client-node'), loaded.join(', '));
  });
});
