// Generates the Helm chart (charts/sampledb-operator/), the OLM bundle (bundle/) and docs/helm-values.md from the
// constructs (src/packaging).
//   node scripts/package.ts           rewrite them
//   node scripts/package.ts --check   fail if any of them is stale (CI runs this, like synth.sh --check for dist/)
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedFiles } from '../src/packaging/index.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');

function filesUnder(dir: string): string[] {
  try {
    return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => relative(root, join(e.parentPath, e.name)));
  } catch {
    return [];
  }
}

const { trees, files } = generatedFiles();
const stale: string[] = [];
for (const [path, content] of files) {
  let current: string | undefined;
  try {
    current = readFileSync(join(root, path), 'utf8');
  } catch {
    current = undefined;
  }
  if (current === content) continue;
  stale.push(current === undefined ? `${path} (missing)` : path);
  if (!check) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}
for (const tree of trees) {
  for (const path of filesUnder(tree)) {
    if (files.has(path)) continue;
    stale.push(`${path} (not generated any more)`);
    if (!check) rmSync(join(root, path));
  }
}

if (check) {
  if (stale.length > 0) {
    console.error(`packages are stale: run 'npm run package' and commit the result\n  ${stale.join('\n  ')}`);
    process.exit(1);
  }
  console.log(`${trees.join(', ')} and ${files.size} files are fresh`);
} else {
  console.log(stale.length > 0 ? `rewrote:\n  ${stale.join('\n  ')}` : 'nothing changed');
}
