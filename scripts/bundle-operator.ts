// Bundles the operator (lib/main.js, after tsc) into one minified ES module, lib/operator.js, which the image runs.
// Why (ADR 0011): Node keeps every loaded module's record and source; the operator's graph is about 1,400 modules
// (TypeBox alone about 930), and one tree-shaken, minified file takes about 18 MB less resident memory at start.
// `node lib/main.js` still works and is what the tests of lib/ start; the bundle is checked by
// test/unit/package/operator-bundle.test.ts and runs as the real Deployment in the e2e tier.
import { existsSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

// The compiled library's directory: lib/ (npm run build), or where the image build put tsc's output.
const lib = process.argv[2] ?? 'lib';
// As in the checkout and the image, package.json sits beside lib/: main.js reads its version from it, and its
// "type": "module" is what makes esbuild import CommonJS packages as Node does (module.exports as the default).
if (!existsSync(join(lib, '..', 'package.json')))
  throw new Error(
    `bundle: ${join(lib, '..', 'package.json')} is missing: copy package.json beside ${lib} first`,
  );
const started = Date.now();
const result = await build({
  entryPoints: [join(lib, 'main.js')],
  outfile: join(lib, 'operator.js'),
  bundle: true,
  minify: true,
  // Class and function names stay: logs and errors name them (ConflictError, ApiError).
  keepNames: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  // CommonJS dependencies (pino, prom-client) call require() for Node's built-ins.
  banner: {
    js: "import{createRequire as __sdbRequire}from'node:module';const require=__sdbRequire(import.meta.url);",
  },
  // lib/ may be built outside the checkout (scripts/build-images.sh, the image test): packages come from this one.
  nodePaths: [fileURLToPath(new URL('../node_modules', import.meta.url))],
  legalComments: 'eof',
  sourcemap: 'linked',
  metafile: true,
  logLevel: 'warning',
});
// Everything but Node's own modules is inside: node_modules is not needed to run it.
const builtins = new Set(builtinModules);
const outside = Object.values(result.metafile.outputs)
  .flatMap((o) => o.imports)
  .filter((i) => i.external && !i.path.startsWith('node:') && !builtins.has(i.path.split('/')[0] ?? ''));
if (outside.length > 0)
  throw new Error(`bundle: left outside lib/operator.js: ${outside.map((i) => i.path).join(', ')}`);
const inputs = Object.keys(result.metafile.inputs).length;
const bytes = Object.values(result.metafile.outputs).find((o) => o.entryPoint)?.bytes ?? 0;
console.log(
  `bundle: ${join(lib, 'operator.js')} from ${inputs} modules, ${(bytes / 2 ** 20).toFixed(2)} MiB, in ${Date.now() - started} ms`,
);
