// The Dockerfile cannot be built here (no Docker engine), so its rules are checked as text and its CMD is run on the
// build's lib/; the files it copies are started the way its entrypoint would by test/integration/deploy/image.test.ts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { operatorObjects } from '../../../src/deploy/manifests.ts';
import { fatalLine } from '../../support/fatal-log.ts';
import { copiesOf, execForm, instructionsOf, parseDockerfile } from './dockerfile-parser.ts';

const root = new URL('../../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');
const stages = parseDockerfile(read('Dockerfile'));
const final = stages.at(-1);

interface PodSpec {
  securityContext: { runAsUser: number };
  containers: {
    securityContext: { readOnlyRootFilesystem: boolean };
    volumeMounts: { mountPath: string }[];
  }[];
}
function operatorPodSpec(): PodSpec {
  const deployment = operatorObjects({}).find((o) => o.kind === 'Deployment') as unknown as {
    spec: { template: { spec: PodSpec } };
  };
  return deployment.spec.template.spec;
}

describe('Dockerfile', () => {
  test('is multi-stage, and every stage is Node 24', () => {
    assert.ok(stages.length >= 2, 'a build stage and a runtime stage');
    for (const stage of stages) {
      assert.match(stage.from, /^(node:24[.-]|gcr\.io\/distroless\/nodejs24-)/, `${stage.from} is Node 24`);
    }
    assert.ok(final);
    assert.equal(
      instructionsOf(final, 'RUN').length,
      0,
      'nothing is installed or compiled in the runtime stage',
    );
  });

  test('runs as the non-root user the Deployment expects', () => {
    assert.ok(final);
    const users = instructionsOf(final, 'USER');
    assert.equal(users.length, 1);
    const [uid, gid] = (users[0]?.args ?? '').split(':');
    assert.ok(
      uid && /^\d+$/.test(uid) && Number(uid) !== 0,
      'a numeric, non-zero uid (runAsNonRoot can check it)',
    );
    assert.equal(Number(uid), operatorPodSpec().securityContext.runAsUser);
    assert.equal(Number(gid), operatorPodSpec().securityContext.runAsUser);
    assert.match(final.from, /:nonroot$/);
  });

  test('ships production dependencies only', () => {
    assert.ok(final);
    const nodeModules = copiesOf(final).find((c) => c.sources.some((s) => s.endsWith('node_modules')));
    assert.ok(nodeModules?.from, 'node_modules comes from an earlier stage');
    const depsStage = stages.find((s) => s.name === nodeModules.from);
    assert.ok(depsStage);
    const runs = instructionsOf(depsStage, 'RUN').map((r) => r.args);
    assert.ok(
      runs.some((r) => /\bnpm ci\b.*--omit=dev/.test(r)),
      'npm ci --omit=dev',
    );
    for (const stage of stages) {
      for (const run of instructionsOf(stage, 'RUN')) assert.doesNotMatch(run.args, /\bnpm (install|i)\b/);
    }
    const fromContext = copiesOf(final).filter((c) => c.from === undefined);
    assert.deepEqual(
      fromContext.flatMap((c) => c.sources),
      ['package.json'],
      'only package.json from the context; the rest is built',
    );
  });

  test('works with a read-only root filesystem: the Deployment mounts the only writable path', () => {
    assert.ok(final);
    assert.equal(instructionsOf(final, 'VOLUME').length, 0);
    const container = operatorPodSpec().containers[0];
    assert.equal(container?.securityContext.readOnlyRootFilesystem, true);
    assert.deepEqual(
      container?.volumeMounts.map((m) => m.mountPath),
      ['/tmp'],
    );
    const workdir = instructionsOf(final, 'WORKDIR').at(-1)?.args;
    assert.equal(workdir, '/app');
  });

  test('starts node on the bundled composition root, which reads the environment and refuses a bad setting', () => {
    assert.ok(final);
    const entrypoint = execForm(instructionsOf(final, 'ENTRYPOINT').at(-1)?.args ?? '[]');
    const cmd = execForm(instructionsOf(final, 'CMD').at(-1)?.args ?? '[]');
    assert.match(entrypoint[0] ?? '', /\/node$/);
    // lib/operator.js: the bundle of lib/main.js (scripts/bundle-operator.ts, ADR 0011), which `npm run build` writes.
    // Node's flags first (ADR 0011: a small young generation, optimize for size), then the script.
    assert.deepEqual(cmd, ['--max-semi-space-size=1', '--optimize-for-size', 'lib/operator.js']);
    const build = JSON.parse(read('tsconfig.build.json')) as { compilerOptions: { outDir: string } };
    assert.equal(build.compilerOptions.outDir, 'lib');
    // The CMD as the image runs it (from WORKDIR, the build's lib/ and package.json beside it): the controller's
    // composition root, which checks its settings before it touches a cluster and exits 1 naming the variable.
    const run = spawnSync(process.execPath, cmd, {
      cwd: fileURLToPath(root),
      env: { PATH: process.env.PATH, LOG_LEVEL: 'loud' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(run.status, 1, run.stderr);
    const fatal = fatalLine(run.stdout);
    assert.equal(fatal?.msg, 'sampledb-operator failed');
    assert.match(fatal?.err ?? '', /LOG_LEVEL: "loud" is not one of debug, info, warn, error/);
  });

  test('.dockerignore lets in exactly what the COPY instructions read from the context', () => {
    const ignore = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    assert.equal(ignore[0], '*', 'everything is excluded first');
    const allowed = ignore.filter((l) => l.startsWith('!')).map((l) => l.slice(1).replace(/\/$/, ''));
    const copied = stages
      .flatMap((s) => copiesOf(s))
      .filter((c) => c.from === undefined)
      .flatMap((c) => c.sources.map((s) => s.replace(/\/$/, '')));
    assert.deepEqual([...new Set(copied)].sort(), [...allowed].sort());
  });
});
