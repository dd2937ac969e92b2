// Scenarios 2 and 3: a SampleDB becomes Ready with a real PostgreSQL; a client pod connects through the Service's
// DNS name with the binding Secret's credentials and keeps rows; edits (a parameter, resources, a larger volume)
// roll out and show in the server.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { pollUntil } from '../../src/envtest/index.ts';
import { e2eSetup } from './support/cluster.ts';
import {
  apply,
  kubectlJson,
  kubectlOk,
  runClient,
  SEED_SQL,
  sampleDb,
  sql,
  statusOf,
  waitReady,
} from './support/sampledb.ts';

const { cluster, namespace } = await e2eSetup('e2e-db');
const name = 'shop';
const PLUGIN = fileURLToPath(new URL('../../src/cli/kubectl-sampledb.ts', import.meta.url));
// The PostgreSQL client of this machine (install-system-deps.sh installs it).
const PSQL_BIN = process.env.PSQL ?? 'psql';

/** Size and free space of the data volume as the database pod sees it. */
async function dataVolumeBytes(): Promise<number> {
  const out = await kubectlOk(cluster, [
    'exec',
    '-n',
    namespace,
    `${name}-0`,
    '--',
    'df',
    '-B1',
    '--output=size',
    '/var/lib/postgresql/data',
  ]);
  return Number(out.trim().split('\n').at(-1));
}

/** Patches the SampleDB and waits until the change has rolled out: its generation observed, the pod updated, Ready. */
const patchSampleDb = (patch: object) =>
  kubectlOk(cluster, [
    'patch',
    'sampledb',
    name,
    '-n',
    namespace,
    '--type=merge',
    '-p',
    JSON.stringify(patch),
  ]);

async function rollOut(patch: object): Promise<void> {
  await patchSampleDb(patch);
  const db = await kubectlJson<{ metadata: { generation: number } }>(cluster, [
    'get',
    'sampledb',
    name,
    '-n',
    namespace,
  ]);
  await pollUntil(
    `the change to ${name} rolled out`,
    async () => {
      const status = await statusOf(cluster, namespace, name);
      const ready = status.conditions?.find((c) => c.type === 'Ready');
      const sts = await kubectlJson<{
        metadata: { generation?: number };
        status: {
          observedGeneration?: number;
          currentRevision?: string;
          updateRevision?: string;
          readyReplicas?: number;
          updatedReplicas?: number;
        };
      }>(cluster, ['get', 'statefulset', name, '-n', namespace]);
      // The StatefulSet controller must have seen the new template first: until then the old revision is both
      // current and update revision, and the old pod is Ready, so the rollout would look done before it began.
      const rolled =
        sts?.status.observedGeneration === sts?.metadata.generation &&
        sts?.status.currentRevision === sts?.status.updateRevision &&
        sts?.status.readyReplicas === 1 &&
        sts?.status.updatedReplicas === 1;
      return ready?.status === 'True' && ready.observedGeneration === db?.metadata.generation && rolled
        ? true
        : undefined;
    },
    { timeoutMs: 180_000, intervalMs: 500 },
  );
}

describe('a SampleDB on a real node', () => {
  it('becomes Ready with a real server that a client reaches by DNS name with the binding credentials', async () => {
    await apply(cluster, [sampleDb(namespace, name, { version: '15', storage: { size: '1Gi' } })]);
    const status = await waitReady(cluster, namespace, name);
    const client = await runClient(
      cluster,
      namespace,
      name,
      // The binding's URI names <service>.<namespace>.svc: cluster DNS, then kube-proxy's ClusterIP.
      `getent hosts ${name}.${namespace}.svc.cluster.local && psql "$URI" -X -q -At -v ON_ERROR_STOP=1 <<'SQL'\n${SEED_SQL}\nSELECT count(*) FROM orders;\nSHOW server_version;\nSQL`,
    );
    assert.equal(client.phase, 'Succeeded', client.logs);
    const lines = client.logs.trim().split('\n');
    assert.match(lines[0] ?? '', /^10\.9[6-9]\.|^10\.1[01][0-9]\./, 'a ClusterIP from the Service range');
    assert.equal(lines.at(-2), '500');
    const serverVersion = (lines.at(-1) ?? '').split(' ')[0];
    assert.match(serverVersion ?? '', /^15\.\d+$/);
    assert.equal(status.currentVersion, serverVersion, 'status.currentVersion is what the server reports');
  });

  it("kubectl sampledb psql: the machine's psql reaches it through the plugin's port-forward, as the owner", async () => {
    // The plugin as npm installs it (an executable kubectl-sampledb on PATH), and the real psql of this machine:
    // the port-forward goes through the kubelet and containerd to the pod's network namespace.
    const work = mkdtempSync(join(tmpdir(), 'e2e-psql-'));
    try {
      const plugin = join(work, 'kubectl-sampledb');
      writeFileSync(plugin, `#!/bin/sh\nexec '${process.execPath}' '${PLUGIN}' "$@"\n`);
      chmodSync(plugin, 0o755);
      const run = spawnSync(join(cluster.binDir, 'kubectl'), ['sampledb', 'psql', name, '-n', namespace], {
        input: 'SELECT current_user, count(*) FROM orders;\nSHOW server_version;\n',
        env: {
          PATH: `${work}:${process.env.PATH ?? ''}`,
          KUBECONFIG: cluster.kubeconfigPath,
          PSQL: PSQL_BIN,
        },
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
      const binding = await kubectlJson<{ data: Record<string, string> }>(cluster, [
        'get',
        'secret',
        `${name}-binding`,
        '-n',
        namespace,
      ]);
      const owner = Buffer.from(binding?.data.username ?? '', 'base64').toString('utf8');
      const password = Buffer.from(binding?.data.password ?? '', 'base64').toString('utf8');
      assert.match(
        run.stdout,
        new RegExp(`\\b${owner}\\b\\s*\\|\\s*500\\b`),
        'the owner, and the rows seeded above',
      );
      assert.match(run.stdout, /\b15\.\d+\b/, 'the server version');
      assert.ok(
        password.length > 0 && !`${run.stdout}${run.stderr}`.includes(password),
        'the password is not printed',
      );
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });

  it('rolls out a parameter change that SHOW reports', async () => {
    await rollOut({ spec: { postgresql: { parameters: { work_mem: '12MB' } } } });
    assert.equal(await sql(cluster, namespace, name, 'SHOW work_mem;'), '12MB');
  });

  it('rolls out new resources: the pod gets them and shared_buffers follows the memory limit', async () => {
    await rollOut({ spec: { resources: { requests: { memory: '512Mi' }, limits: { memory: '512Mi' } } } });
    const pod = await kubectlJson<{
      spec: { containers: { resources: { limits?: Record<string, string> } }[] };
    }>(cluster, ['get', 'pod', `${name}-0`, '-n', namespace]);
    assert.equal(pod?.spec.containers[0]?.resources.limits?.memory, '512Mi');
    assert.equal(await sql(cluster, namespace, name, 'SHOW shared_buffers;'), '128MB');
    assert.equal(await sql(cluster, namespace, name, 'SELECT count(*) FROM orders;'), '500');
  });

  it('grows the file system the database sees when spec.storage.size grows, without a restart', async () => {
    const before = await dataVolumeBytes();
    const started = await kubectlJson<{ status: { startTime: string } }>(cluster, [
      'get',
      'pod',
      `${name}-0`,
      '-n',
      namespace,
    ]);
    await patchSampleDb({ spec: { storage: { size: '2Gi' } } });
    const after = await pollUntil(
      'the data file system grows',
      async () => {
        const size = await dataVolumeBytes();
        return size > before + 2 ** 29 ? size : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    assert.ok(after > 1.9 * 2 ** 30, `grown to ${after} bytes`);
    const status = await statusOf(cluster, namespace, name);
    assert.equal(status.conditions?.find((c) => c.type === 'StorageResized')?.status, 'True');
    const pod = await kubectlJson<{ status: { startTime: string } }>(cluster, [
      'get',
      'pod',
      `${name}-0`,
      '-n',
      namespace,
    ]);
    assert.equal(pod?.status.startTime, started?.status.startTime, 'the same pod: grown online');
  });
});
