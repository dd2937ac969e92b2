// Scenario 8: `npm run dev -- --node real` brings the examples from dist/ up as real databases, and a user connects
// the two ways the README shows: `kubectl port-forward` with psql on the machine, and `kubectl run` a psql client.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { pollUntil } from '../../../src/envtest/index.ts';
import { command } from '../../../src/envtest/real-node/host.ts';
import { AttachedCluster } from '../../integration/support/cluster.ts';
import { nodeWaitVariable } from '../support/cluster.ts';
import { kubectlOk, waitReady } from '../support/sampledb.ts';

const repoRoot = join(import.meta.dirname, '../../..');
const CLIENT_ATTEMPTS = 30;
// One attempt a second (psql fails at once when refused), at most CLIENT_ATTEMPTS; prints which attempt connected.
const CLIENT_SCRIPT = [
  `for attempt in $(seq 1 ${CLIENT_ATTEMPTS}); do`,
  '  if out=$(psql "$URI" -X -At -c "SELECT count(*) FROM orders" 2>&1); then',
  '    echo "$out"; echo "connected on attempt $attempt"; exit 0',
  '  fi',
  '  echo "attempt $attempt: $out" >&2; sleep 1',
  'done',
  'exit 1',
].join('\n');
const stateDir = mkdtempSync(join(tmpdir(), 'sampledb-dev-'));
let output = '';
const dev: ChildProcess = spawn(
  process.execPath,
  [
    join(repoRoot, 'scripts/dev.ts'),
    '--node',
    'real',
    '--wait-for-node',
    process.env[nodeWaitVariable] ?? '0',
  ],
  { cwd: repoRoot, env: { ...process.env, SAMPLEDB_STATE_DIR: stateDir }, stdio: ['ignore', 'pipe', 'pipe'] },
);
for (const stream of [dev.stdout, dev.stderr])
  stream?.on('data', (chunk: Buffer) => (output += chunk.toString()));
const exited = once(dev, 'exit');
after(async () => {
  if (dev.exitCode === null) {
    dev.kill('SIGTERM');
    await exited;
  }
  rmSync(stateDir, { recursive: true, force: true });
});

describe('npm run dev -- --node real', { timeout: 15 * 60_000 }, () => {
  test('runs the examples as real databases that a user can connect to', async () => {
    await pollUntil(
      'dev ready',
      async () => (output.includes('Ctrl-C stops everything') ? true : undefined),
      {
        timeoutMs: 10 * 60_000,
        intervalMs: 500,
        failFast: () => (dev.exitCode !== null ? `npm run dev exited:\n${output.slice(-4000)}` : undefined),
      },
    );
    const binDir = /PATH=([^:\s]+):/.exec(output)?.[1];
    assert.ok(binDir, output);
    const cluster = Object.assign(new AttachedCluster(join(stateDir, 'kubeconfig'), binDir), {
      operatorImage: '',
    });
    for (const name of ['minimal', 'orders'])
      await waitReady(cluster, 'sampledb-examples', name, { timeoutMs: 300_000 });

    // 1. kubectl port-forward, and psql on this machine with the binding Secret's credentials.
    const secret = (key: string) =>
      kubectlOk(cluster, [
        'get',
        'secret',
        'minimal-binding',
        '-n',
        'sampledb-examples',
        '-o',
        `jsonpath={.data.${key}}`,
      ]).then((b64) => Buffer.from(b64, 'base64').toString());
    const [user, password, database] = await Promise.all([
      secret('username'),
      secret('password'),
      secret('database'),
    ]);
    const forward = spawn(join(binDir, 'kubectl'), [
      `--kubeconfig=${cluster.kubeconfigPath}`,
      '-n',
      'sampledb-examples',
      'port-forward',
      'svc/minimal',
      ':5432',
    ]);
    try {
      let forwarded = '';
      forward.stdout.on('data', (chunk: Buffer) => (forwarded += chunk.toString()));
      const port = await pollUntil('port-forward', async () => /127\.0\.0\.1:(\d+)/.exec(forwarded)?.[1], {
        timeoutMs: 30_000,
        intervalMs: 100,
      });
      const psql = await command('sh', [
        '-c',
        `PGPASSWORD="$1" psql -X -At -h 127.0.0.1 -p ${port} -U "$2" -d "$3" -c 'SHOW server_version'`,
        'psql',
        password,
        user,
        database,
      ]);
      assert.match(psql.stdout.trim(), /^17\.\d+/);
    } finally {
      forward.kill();
    }

    // 2. kubectl run a psql client in the cluster, by the Service's DNS name. Ready means the Service's EndpointSlice
    // lists the pod; the node's kube-proxy then programs the route on its own, so a client started in that moment
    // can be refused once (seen in CI on a loaded machine). The client retries, as applications do, for a bounded
    // time, and the database pod must be the same, never restarted, so the retry covers routing and nothing else.
    const databasePod = () =>
      kubectlOk(cluster, [
        'get',
        'pod',
        'orders-0',
        '-n',
        'sampledb-examples',
        '-o',
        'jsonpath={.metadata.uid}/{.status.containerStatuses[?(@.name=="postgres")].restartCount}',
      ]);
    const podBefore = await databasePod();
    const run = await cluster.kubectl([
      'run',
      'psql-client',
      '-n',
      'sampledb-examples',
      '--restart=Never',
      '--image=localhost/postgres:15',
      '--overrides',
      JSON.stringify({
        spec: {
          securityContext: { runAsNonRoot: true, runAsUser: 999, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'psql-client',
              image: 'localhost/postgres:15',
              command: ['sh', '-c', CLIENT_SCRIPT],
              env: [{ name: 'URI', valueFrom: { secretKeyRef: { name: 'orders-binding', key: 'uri' } } }],
              securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
            },
          ],
        },
      }),
    ]);
    assert.equal(run.code, 0, run.stderr);
    // Detached and then read: an attached `kubectl run` can miss the output of a client that exits at once.
    await pollUntil(
      'the psql client finished',
      async () => {
        const phase = await kubectlOk(cluster, [
          'get',
          'pod',
          'psql-client',
          '-n',
          'sampledb-examples',
          '-o',
          'jsonpath={.status.phase}',
        ]);
        return phase === 'Succeeded' || phase === 'Failed' ? phase : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 300 },
    );
    const logs = await kubectlOk(cluster, ['logs', 'psql-client', '-n', 'sampledb-examples']);
    const diagnostics = async () =>
      `client log:\n${logs}\n${(await cluster.kubectl(['get', 'pods,endpointslices,events', '-n', 'sampledb-examples', '-o', 'wide'])).stdout}`;
    assert.match(logs, /^0$/m, `the orders table from the example initSQL exists\n${await diagnostics()}`);
    assert.equal(await databasePod(), podBefore, 'the database pod was neither replaced nor restarted');
    const attempts = /^connected on attempt (\d+)$/m.exec(logs)?.[1];
    console.log(`DEV CLIENT: connected through the Service on attempt ${attempts} of ${CLIENT_ATTEMPTS}`);

    dev.kill('SIGTERM');
    const [code] = await exited;
    assert.equal(code, 0, output.slice(-2000));
  });
});
