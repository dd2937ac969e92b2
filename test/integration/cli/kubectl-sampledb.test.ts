// `kubectl sampledb` on a real kube-apiserver, run the way users run it: kubectl finds `kubectl-sampledb` on PATH
// and hands it the arguments and the environment (KUBECONFIG, with the context's namespace). No operator runs: the
// test writes the status the operator would report, through the status subresource, and checks what each command
// shows or creates.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sharedCluster, testNamespace } from '../support/cluster.ts';
import { installableCrds } from '../support/manifests.ts';

const cluster = await sharedCluster();
const bin = fileURLToPath(new URL('../../../src/cli/kubectl-sampledb.ts', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'kubectl-sampledb-'));
after(() => rmSync(work, { recursive: true, force: true }));

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function exec(file: string, args: readonly string[], env: Record<string, string>): Promise<Result> {
  return new Promise((resolve) => {
    execFile(file, args, { env: { ...process.env, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

async function kubectlOk(args: string[]): Promise<string> {
  const result = await cluster.kubectl(args);
  assert.equal(result.code, 0, `kubectl ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

// At top level, so its deletion hook runs after the whole file.
const namespace = await testNamespace(cluster, 'cli');
let kubeconfig: string;
let pluginPath: string;

/** `kubectl sampledb <args>` through kubectl's plugin lookup, the kubeconfig's context pointing at the namespace. */
const plugin = (...args: string[]) =>
  exec(join(cluster.binDir, 'kubectl'), ['sampledb', ...args], {
    KUBECONFIG: kubeconfig,
    PATH: `${pluginPath}:${process.env.PATH ?? ''}`,
  });

/** Writes status as the operator would (through the status subresource). */
const patchStatus = (status: Record<string, unknown>) =>
  kubectlOk([
    'patch',
    'sampledb',
    'orders',
    '-n',
    namespace,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({ status }),
  ]);

before(async () => {
  await cluster.kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], {
    input: installableCrds()
      .map((m) => JSON.stringify(m))
      .join('\n'),
  });
  await kubectlOk(['wait', '--for=condition=Established', '--timeout=60s', 'crd/sampledbs.sampledb.io']);
  await kubectlOk([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd/sampledbbackups.sampledb.io',
  ]);
  await kubectlOk([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd/sampledbrestores.sampledb.io',
  ]);
  // A kubeconfig of the user's: its current context names the namespace, as `kubens` would leave it.
  kubeconfig = join(work, 'kubeconfig');
  writeFileSync(kubeconfig, await kubectlOk(['config', 'view', '--raw']));
  const setNs = await exec(
    join(cluster.binDir, 'kubectl'),
    ['config', 'set-context', '--current', `--namespace=${namespace}`],
    {
      KUBECONFIG: kubeconfig,
    },
  );
  assert.equal(setNs.code, 0, setNs.stderr);
  // The plugin as npm installs it: an executable named kubectl-sampledb on PATH.
  pluginPath = join(work, 'bin');
  mkdirSync(pluginPath);
  writeFileSync(
    join(pluginPath, 'kubectl-sampledb'),
    `#!/bin/sh\nexec '${process.execPath}' '${bin}' "$@"\n`,
  );
  chmodSync(join(pluginPath, 'kubectl-sampledb'), 0o755);
});

describe('kubectl sampledb against the control plane', { timeout: 120_000 }, () => {
  it('is found by kubectl and prints help per command', async () => {
    const usage = await plugin('--help');
    assert.equal(usage.code, 0, usage.stderr);
    assert.match(usage.stdout, /Usage: kubectl sampledb <command>/);
    const help = await plugin('switchover', '--help');
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /sampledb\.io\/switchover-to/);
    const bad = await plugin('restore', 'orders');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /error: restore needs --backup <backup>/);
  });

  it('status shows what the operator reports, in the context namespace', async () => {
    const created = await cluster.kubectl(['apply', '-n', namespace, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'sampledb.io/v1alpha1',
        kind: 'SampleDB',
        metadata: { name: 'orders' },
        spec: { version: '17', instances: 2, storage: { size: '1Gi' } },
      }),
    });
    assert.equal(created.code, 0, created.stderr);
    const empty = await plugin('status', 'orders');
    assert.equal(empty.code, 0, empty.stderr);
    assert.match(empty.stdout, new RegExp(`^Name: +${namespace}/orders$`, 'm'));
    assert.match(empty.stdout, /^Phase: +\(not reported yet\)$/m);

    await patchStatus({
      phase: 'Ready',
      currentVersion: '17.2',
      lastBackup: { name: 'orders-nightly', completionTime: '2026-12-03T09:00:00Z' },
      replication: {
        primary: 'orders-0',
        term: 1,
        instances: [
          { name: 'orders-0', role: 'primary', ready: true },
          { name: 'orders-1', role: 'replica', ready: true, streaming: true, lagBytes: 0 },
        ],
      },
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Available',
          message: 'accepting connections',
          lastTransitionTime: '2026-12-03T09:00:00Z',
        },
      ],
    });
    const shown = await plugin('status', 'orders');
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^Phase: +Ready$/m);
    assert.match(shown.stdout, /^Version: +17 \(running 17\.2\)$/m);
    assert.match(shown.stdout, /^Last backup: +orders-nightly completed 2026-12-03T09:00:00Z/m);
    assert.match(shown.stdout, /primary orders-0, term 1/);
    assert.match(shown.stdout, /^ {2}orders-0 +primary \(elected\) +yes +- +-$/m);
    assert.match(shown.stdout, /^ {2}orders-1 +replica +yes +yes +0 B$/m);
    assert.match(shown.stdout, /^ {2}Ready +True +Available +\S+ +accepting connections$/m);

    const missing = await plugin('status', 'nope');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, new RegExp(`error: SampleDB "nope" not found in namespace "${namespace}"`));
    // -n wins over the context's namespace; --kubeconfig over KUBECONFIG (run without kubectl here).
    const elsewhere = await exec(
      process.execPath,
      [bin, 'status', 'orders', '-n', 'default', '--kubeconfig', kubeconfig],
      {
        KUBECONFIG: '/nonexistent',
      },
    );
    assert.equal(elsewhere.code, 1);
    assert.match(elsewhere.stderr, /SampleDB "orders" not found in namespace "default"/);
  });

  it('backup and restore create the objects the operator acts on', async () => {
    const generated = await plugin('backup', 'orders');
    assert.equal(generated.code, 0, generated.stderr);
    const name = /^sampledbbackup\.sampledb\.io\/(orders-\w+) created$/m.exec(generated.stdout)?.[1];
    assert.ok(name, generated.stdout);
    const backup = JSON.parse(
      await kubectlOk(['get', 'sampledbbackup', name, '-n', namespace, '-o', 'json']),
    );
    assert.deepEqual(backup.spec.sampleDB, { name: 'orders' });

    const named = await plugin('backup', 'orders', '--name', 'orders-manual');
    assert.equal(named.code, 0, named.stderr);
    const again = await plugin('backup', 'orders', '--name', 'orders-manual');
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^error: conflict: .*already exists/m);
    const noDb = await plugin('backup', 'nope');
    assert.equal(noDb.code, 1);
    assert.match(noDb.stderr, /SampleDB "nope" not found/);

    const restored = await plugin('restore', 'orders', '--backup', 'orders-manual');
    assert.equal(restored.code, 0, restored.stderr);
    const restoreName = /^sampledbrestore\.sampledb\.io\/(orders-restore-\w+) created$/m.exec(
      restored.stdout,
    )?.[1];
    assert.ok(restoreName, restored.stdout);
    const restore = JSON.parse(
      await kubectlOk(['get', 'sampledbrestore', restoreName, '-n', namespace, '-o', 'json']),
    );
    assert.deepEqual(restore.spec, { sampleDB: { name: 'orders' }, backup: { name: 'orders-manual' } });
  });

  it('drill creates a SampleDBDrill (once, or on a schedule the API checks) and refuses an unknown kind', async () => {
    const once = await plugin('drill', 'orders', '--kind', 'kill-replica');
    assert.equal(once.code, 0, once.stderr);
    const name = /^sampledbdrill\.sampledb\.io\/(orders-kill-replica-\w+) created/m.exec(once.stdout)?.[1];
    assert.ok(name, once.stdout);
    const drill = JSON.parse(await kubectlOk(['get', 'sampledbdrill', name, '-n', namespace, '-o', 'json']));
    assert.deepEqual(drill.spec, { sampleDB: { name: 'orders' }, kind: 'kill-replica', historyLimit: 5 });
    const weekly = await plugin(
      'drill',
      'orders',
      '--kind=restore-check',
      '--schedule',
      '0 4 * * 1',
      '--name',
      'weekly',
    );
    assert.equal(weekly.code, 0, weekly.stderr);
    const scheduled = JSON.parse(
      await kubectlOk(['get', 'sampledbdrill', 'weekly', '-n', namespace, '-o', 'json']),
    );
    assert.equal(scheduled.spec.schedule, '0 4 * * 1');
    const badCron = await plugin('drill', 'orders', '--kind', 'restore-check', '--schedule', '0 25 * * *');
    assert.equal(badCron.code, 1);
    assert.match(badCron.stderr, /^error: refused by the API: .*spec\.schedule/m);
    const badKind = await plugin('drill', 'orders', '--kind', 'unplug');
    assert.equal(badKind.code, 2);
    assert.match(badKind.stderr, /unknown drill kind "unplug"/);
    const help = await plugin('drill', '--help');
    assert.equal(help.code, 0);
    assert.match(help.stdout, /sampledb\.io\/drills=allowed/);
  });

  it('switchover sets the annotation for an instance and refuses anything else', async () => {
    const refused = await plugin('switchover', 'orders', '--to', 'orders-7');
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      /"orders-7" is not an instance of SampleDB "orders" \(instances: orders-0, orders-1\)/,
    );
    const primary = await plugin('switchover', 'orders', '--to', 'orders-0');
    assert.equal(primary.code, 1);
    assert.match(primary.stderr, /"orders-0" is already the primary/);
    const done = await plugin('switchover', 'orders', '--to', 'orders-1');
    assert.equal(done.code, 0, done.stderr);
    const db = JSON.parse(await kubectlOk(['get', 'sampledb', 'orders', '-n', namespace, '-o', 'json']));
    assert.equal(db.metadata.annotations['sampledb.io/switchover-to'], 'orders-1');
  });

  it('psql refuses without a binding Secret, then runs psql with its credentials and a forwarded port', async () => {
    const early = await plugin('psql', 'orders');
    assert.equal(early.code, 1);
    assert.match(early.stderr, /SampleDB "orders" reports no binding Secret yet/);
    await kubectlOk([
      'create',
      'secret',
      'generic',
      'orders-binding',
      '-n',
      namespace,
      '--from-literal=username=app',
      '--from-literal=password=not-printed',
      '--from-literal=database=appdb',
    ]);
    await patchStatus({ binding: { name: 'orders-binding' } });
    // A stand-in psql that reports what it was given (kwok pods have no PostgreSQL behind a port-forward).
    const fakePsql = join(work, 'fake-psql');
    writeFileSync(
      fakePsql,
      '#!/bin/sh\necho "user=$PGUSER db=$PGDATABASE host=$PGHOST port=$PGPORT password-set=$([ -n "$PGPASSWORD" ] && echo yes)"\nexit 3\n',
    );
    chmodSync(fakePsql, 0o755);
    const result = await exec(join(cluster.binDir, 'kubectl'), ['sampledb', 'psql', 'orders'], {
      KUBECONFIG: kubeconfig,
      PATH: `${pluginPath}:${process.env.PATH ?? ''}`,
      PSQL: fakePsql,
    });
    assert.equal(result.code, 3, `psql's exit code is the plugin's: ${result.stderr}`);
    assert.match(result.stdout, /^user=app db=appdb host=127\.0\.0\.1 port=\d+ password-set=yes$/m);
    assert.doesNotMatch(result.stdout + result.stderr, /not-printed/);
  });
});
