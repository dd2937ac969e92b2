// src/app.ts follows the cdk8s CLI's conventions: `cdk8s synth --output DIR` writes to DIR (and leaves dist/ alone).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const cdk8s = join(root, 'node_modules/cdk8s-cli/bin/cdk8s');
const CHARTS = [
  '0000-sampledb-crds.k8s.yaml',
  '0001-sampledb-operator.k8s.yaml',
  '0002-sampledb-examples.k8s.yaml',
  '0003-sampledb-monitoring.k8s.yaml',
];

describe('cdk8s synth --output', () => {
  const scratch = mkdtemp(join(tmpdir(), 'sampledb-synth-'));
  after(async () => rm(await scratch, { recursive: true, force: true }));

  it('writes the charts to the directory it is given, not to dist/', async () => {
    const out = join(await scratch, 'manifests');
    const distTimes = await Promise.all(CHARTS.map(async (f) => (await stat(join(root, 'dist', f))).mtimeMs));
    await promisify(execFile)(process.execPath, [cdk8s, 'synth', '--output', out], {
      cwd: root,
      env: { ...process.env, CDK8S_CHECK_UPGRADE: 'false' },
    });
    assert.deepEqual((await readdir(out)).sort(), CHARTS);
    assert.match(await readFile(join(out, CHARTS[1]!), 'utf8'), /^kind: Deployment$/m);
    const afterTimes = await Promise.all(
      CHARTS.map(async (f) => (await stat(join(root, 'dist', f))).mtimeMs),
    );
    assert.deepEqual(afterTimes, distTimes, 'dist/ is not rewritten');
  });
});
