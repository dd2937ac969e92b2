// What `npm pack` puts in the package, as npm itself lists it (a dry run of the tarball, lib/ built by scripts/test.sh
// first): the compiled library with its types and self-contained source maps, dist/, the Helm chart, the OLM bundle,
// README and LICENSE; no sources, tests, scripts or compiled code that no entry point reaches.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { generatedFiles } from '../../../src/packaging/index.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  exports: Record<string, string | { types: string; default: string }>;
  bin: Record<string, string>;
};

function packedFiles(): string[] {
  assert.ok(existsSync(join(root, 'lib/index.js')), 'lib/ is built (npm run build)');
  const pack = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: root,
    encoding: 'utf8',
  });
  assert.equal(pack.status, 0, pack.stderr);
  const [tarball] = JSON.parse(pack.stdout) as Array<{ files: Array<{ path: string }> }>;
  return (tarball?.files ?? []).map((f) => f.path).sort();
}

const files = packedFiles();
const shipped = new Set(files);

/**
 * lib/ modules reachable from the package's exports through static imports, of the code or of its types: a module
 * that holds only types compiles to an empty .js that its users' .d.ts files need beside its .d.ts.
 */
function reachableFromExports(): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file) || !shipped.has(file)) return;
    seen.add(file);
    for (const source of [file, file.replace(/\.js$/, '.d.ts')]) {
      if (!shipped.has(source)) continue;
      for (const [, specifier] of readFileSync(join(root, source), 'utf8').matchAll(
        /^(?:import|export)[^;]*?from ["'](\.[^"']+)["']/gm,
      )) {
        // Declarations keep the sources' .ts specifiers; the module is the .js beside them.
        visit(normalize(join(dirname(file), (specifier as string).replace(/\.ts$/, '.js'))));
      }
    }
  };
  for (const target of Object.values(packageJson.exports)) {
    if (typeof target !== 'string') visit(normalize(target.default));
  }
  // The executables (kubectl-sampledb) are entry points too.
  for (const target of Object.values(packageJson.bin)) visit(normalize(target));
  return seen;
}

describe('npm package contents', () => {
  it('holds the library, its types, dist/, the chart, the bundle, README and LICENSE', () => {
    for (const [entry, target] of Object.entries(packageJson.exports)) {
      if (typeof target === 'string') continue;
      assert.ok(shipped.has(normalize(target.default)), `${entry}: ${target.default}`);
      assert.ok(shipped.has(normalize(target.types)), `${entry}: ${target.types}`);
    }
    for (const [bin, target] of Object.entries(packageJson.bin)) {
      assert.ok(shipped.has(normalize(target)), `bin ${bin}: ${target}`);
      assert.match(
        readFileSync(join(root, target), 'utf8'),
        /^#!\/usr\/bin\/env node\n/,
        `bin ${bin} starts with a shebang`,
      );
    }
    for (const file of [
      'package.json',
      'README.md',
      'LICENSE',
      'dist/0000-sampledb-crds.k8s.yaml',
      'dist/0001-sampledb-operator.k8s.yaml',
      'dist/0003-sampledb-monitoring.k8s.yaml',
      'monitoring/grafana-dashboard.json',
    ]) {
      assert.ok(shipped.has(file), file);
    }
    // Every generated chart and bundle file, nothing missing.
    for (const path of generatedFiles().files.keys()) {
      if (path.startsWith('charts/') || path.startsWith('bundle/')) assert.ok(shipped.has(path), path);
    }
  });

  it('holds nothing else: no sources, tests, scripts, or compiled code no entry point reaches', () => {
    const allowed =
      /^(lib\/.*\.(js|d\.ts|js\.map)|dist\/[^/]+\.k8s\.yaml|monitoring\/grafana-dashboard\.json|charts\/.+|bundle\/.+|package\.json|README\.md|LICENSE)$/;
    assert.deepEqual(
      files.filter((f) => !allowed.test(f)),
      [],
    );
    const reachable = reachableFromExports();
    const unreachable = files.filter((f) => f.endsWith('.js') && f.startsWith('lib/') && !reachable.has(f));
    assert.deepEqual(unreachable, [], 'compiled files that no export imports');
    for (const file of files) {
      const twin = file.replace(/\.d\.ts$|\.js\.map$/, '.js');
      assert.ok(shipped.has(twin), `${file} belongs to ${twin}`);
    }
  });

  it('ships source maps that carry their sources (the .ts files are not in the package)', () => {
    for (const file of files.filter((f) => f.endsWith('.js.map'))) {
      const map = JSON.parse(readFileSync(join(root, file), 'utf8')) as {
        sources: string[];
        sourcesContent?: string[];
      };
      assert.equal(map.sourcesContent?.length, map.sources.length, `${file} has its sources inline`);
    }
  });
});
