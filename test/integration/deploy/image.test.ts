// The controller image cannot be built here (no Docker engine). This proves the next best thing: the files the
// Dockerfile's runtime stage copies (tsc output, production dependencies from the lockfile, package.json) start the
// way its ENTRYPOINT + CMD would — same working directory and command, the Deployment's environment, the
// Deployment's non-root uid, the app files read-only — and serve /healthz against a real apiserver.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { operatorObjects } from '../../../src/deploy/manifests.ts';
import { freePorts, pollUntil } from '../../../src/envtest/index.ts';
import { copiesOf, execForm, instructionsOf, parseDockerfile } from '../../unit/deploy/dockerfile-parser.ts';
import { sharedCluster, testNamespace } from '../support/cluster.ts';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const NODE = process.execPath;
const cluster = await sharedCluster();

interface LockPackage {
  dev?: boolean;
  link?: boolean;
}

/** What `npm ci --omit=dev` installs: every lockfile entry not marked dev, copied without its nested node_modules. */
function copyProductionDependencies(target: string): string[] {
  const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockPackage>;
  };
  const installed: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.dev || entry.link) continue;
    cpSync(join(repoRoot, path), join(target, path), {
      recursive: true,
      filter: (source) => !source.slice(join(repoRoot, path).length).includes('node_modules'),
    });
    installed.push(path);
  }
  return installed;
}

async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  if (port === undefined) throw new Error('no free port');
  return port;
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

function makeReadOnly(path: string): void {
  const stat = statSync(path);
  if (stat.isDirectory()) {
    for (const entry of readdirSync(path)) makeReadOnly(join(path, entry));
    chmodSync(path, 0o555);
  } else chmodSync(path, stat.mode & 0o111 ? 0o555 : 0o444);
}

const stages = parseDockerfile(readFileSync(join(repoRoot, 'Dockerfile'), 'utf8'));
const runtime = stages.at(-1);
assert.ok(runtime);

const work = mkdtempSync(join(tmpdir(), 'sampledb-image-'));
chmodSync(work, 0o755);
let controller: ChildProcess | undefined;
after(() => {
  controller?.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

test('the files the image copies start as its entrypoint would and serve /healthz', {
  timeout: 240_000,
}, async () => {
  const app = join(work, 'app');
  mkdirSync(app);
  // The build stage: tsc -p tsconfig.build.json and the bundle, written where the runtime stage copies it from.
  const tsc = spawnSync(
    NODE,
    [
      join(repoRoot, 'node_modules/typescript/bin/tsc'),
      '-p',
      'tsconfig.build.json',
      '--outDir',
      join(app, 'lib'),
    ],
    {
      cwd: repoRoot,
      encoding: 'utf8',
    },
  );
  assert.equal(tsc.status, 0, `the image's tsc step fails:\n${tsc.stdout}${tsc.stderr}`);
  // The bundle reads package.json beside lib/, as the Dockerfile's build stage has it.
  cpSync(join(repoRoot, 'package.json'), join(app, 'package.json'));
  const bundle = spawnSync(NODE, [join(repoRoot, 'scripts/bundle-operator.ts'), join(app, 'lib')], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  assert.equal(bundle.status, 0, `the image's bundle step fails:\n${bundle.stdout}${bundle.stderr}`);

  // The runtime stage's COPY instructions, each mapped to what the build and deps stages produce.
  const produced: Record<string, () => void> = {
    'deps:/app/node_modules': () => copyProductionDependencies(app),
    'build:/src/lib': () => {},
    'context:package.json': () => cpSync(join(repoRoot, 'package.json'), join(app, 'package.json')),
  };
  for (const copy of copiesOf(runtime)) {
    for (const source of copy.sources) {
      const key = `${copy.from ?? 'context'}:${source}`;
      const make = produced[key];
      assert.ok(make, `the test knows how to produce ${key}`);
      make();
    }
  }
  const installed = readdirSync(join(app, 'node_modules'));
  assert.ok(installed.includes('@kubernetes'), 'runtime dependencies are there');
  for (const devOnly of ['typescript', 'cdk8s', '@pulumi', '@biomejs']) {
    assert.ok(!installed.includes(devOnly), `${devOnly} (a devDependency) is not`);
  }

  const workdir = instructionsOf(runtime, 'WORKDIR').at(-1)?.args;
  const cmd = execForm(instructionsOf(runtime, 'CMD').at(-1)?.args ?? '[]');
  const [uid, gid] = (instructionsOf(runtime, 'USER').at(-1)?.args ?? '').split(':');
  assert.equal(workdir, '/app');
  makeReadOnly(app);
  const before = listFiles(app);

  // The Deployment's environment, with the downward-API values the kubelet would fill in.
  const namespace = await testNamespace(cluster, 'image');
  const deployment = operatorObjects({}).find((o) => o.kind === 'Deployment') as unknown as {
    spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } };
  };
  const healthPort = await freePort();
  const metricsPort = await freePort();
  const env: Record<string, string> = {};
  for (const v of deployment.spec.template.spec.containers[0]?.env ?? []) env[v.name] = v.value ?? '';
  Object.assign(env, {
    POD_NAME: 'sampledb-operator-image-test',
    POD_NAMESPACE: namespace,
    HEALTH_PORT: String(healthPort),
    METRICS_PORT: String(metricsPort),
    NODE_ENV: 'production',
    KUBECONFIG: join(work, 'kubeconfig'),
    HOME: '/nonexistent',
  });
  writeFileSync(join(work, 'kubeconfig'), readFileSync(cluster.kubeconfigPath), { mode: 0o444 });

  // ENTRYPOINT is node; run it as the image's USER, in its WORKDIR.
  controller = spawn('setpriv', [`--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--', NODE, ...cmd], {
    cwd: app,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  controller.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  controller.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => controller?.on('exit', (code) => resolve(code)));
  let exitCode: number | null | undefined;
  void exited.then((code) => (exitCode = code));

  await pollUntil(
    'controller /healthz',
    async () => ((await fetch(`http://127.0.0.1:${healthPort}/healthz`)).ok ? true : undefined),
    {
      timeoutMs: 90_000,
      intervalMs: 250,
      failFast: () => (exitCode !== undefined ? `exited with ${exitCode}:\n${output}` : undefined),
    },
  );
  assert.match(output, /sampledb-operator starting/);

  controller.kill('SIGTERM');
  const code = await Promise.race([
    exited,
    new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 45_000)),
  ]);
  assert.equal(code, 0, `SIGTERM ends it cleanly:\n${output}`);
  assert.deepEqual(listFiles(app), before, 'nothing was written under the app directory');
  // The CMD is node's flags, then the script: lib/operator.js.
  assert.equal(dirname(join(app, cmd.at(-1) ?? '')), join(app, 'lib'));
});
