// The Pulumi stack for real: the pulumi CLI and the Kubernetes provider built from Go (scripts/build-pulumi.sh), a
// local file backend, the shared control plane. `pulumi up` with a prebuilt image, the operator (src/main.ts, run as
// a process) reconciles the stack's SampleDB, a second `pulumi up` changes nothing, `pulumi destroy` removes all.
//
// Driven through the Automation API with the stack program inline (the same `stackProgram` Pulumi.yaml's main
// exports): the CLI then talks to this process as its language runtime, so no pulumi-language-nodejs binary is
// needed — its Go module is not served here (docs/adr/0004-pulumi.md).
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Stack } from '@pulumi/pulumi/automation/index.js';
import { freePorts, pollUntil } from '../../../src/envtest/index.ts';
import {
  awaitPulumiBuild,
  localStack,
  missingPulumiBinaries,
  pulumiBinDir,
  SKIP_PULUMI_VARIABLE,
} from '../../support/pulumi.ts';
import { sharedCluster, type TestCluster } from '../support/cluster.ts';
import { installableCrds } from '../support/manifests.ts';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const SKIP_VARIABLE = SKIP_PULUMI_VARIABLE;
await awaitPulumiBuild();
const binDir = pulumiBinDir();
const missing = missingPulumiBinaries(binDir);
const OPERATION_TIMEOUT_MS = 8 * 60_000;

if (missing.length > 0 && process.env[SKIP_VARIABLE] === '1') {
  const reason = `${missing.join(', ')} not built in ${binDir} and ${SKIP_VARIABLE}=1: run scripts/build-pulumi.sh`;
  process.stdout.write(`pulumi e2e skipped: ${reason}\n`);
  test('pulumi stack end to end', { skip: reason }, () => {});
} else {
  await run();
}

async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  if (port === undefined) throw new Error('no free port');
  return port;
}

async function kubectlJson(
  cluster: TestCluster,
  args: string[],
): Promise<Record<string, unknown> | undefined> {
  const result = await cluster.kubectl([...args, '-o', 'json']);
  if (result.code !== 0) {
    if (/NotFound|not found/.test(result.stderr)) return undefined;
    throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  }
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

async function gone(cluster: TestCluster, args: string[]): Promise<boolean> {
  return (await kubectlJson(cluster, args)) === undefined;
}

async function run(): Promise<void> {
  assert.deepEqual(
    missing,
    [],
    `pulumi binaries missing in ${binDir}: run scripts/build-pulumi.sh (or set ${SKIP_VARIABLE}=1 to skip this test)`,
  );
  const cluster = await sharedCluster();
  const suffix = randomBytes(3).toString('hex');
  const namespace = `sampledb-pulumi-${suffix}`;
  const appNamespace = `pulumi-apps-${suffix}`;
  const imageRef = `registry.example.com/platform/sampledb-operator@sha256:${'5e'.repeat(32)}`;
  const work = mkdtempSync(join(tmpdir(), 'sampledb-pulumi-'));
  const log: string[] = [];
  const onOutput = (out: string) => log.push(out);
  const tail = () => log.join('').slice(-6000);

  const crdsBefore = await kubectlJson(cluster, ['get', 'crd', 'sampledbs.sampledb.io']);
  let stack: Stack | undefined;
  let destroyed = false;
  let operator: ChildProcess | undefined;

  after(async () => {
    operator?.kill('SIGKILL');
    if (stack && !destroyed) {
      await stack.destroy({ onOutput, signal: AbortSignal.timeout(OPERATION_TIMEOUT_MS) }).catch(() => {});
    }
    // Other test files share the cluster: put back the CRDs they may have installed before this file.
    if (crdsBefore) {
      await cluster.kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], {
        input: installableCrds()
          .map((m) => JSON.stringify(m))
          .join('\n'),
      });
    }
    rmSync(work, { recursive: true, force: true });
  });

  describe('pulumi stack end to end', { timeout: 30 * 60_000 }, () => {
    test('the CLI reads Pulumi.yaml and every key of both example stack files', () => {
      // A copy: `pulumi stack init` writes an encryption salt into the stack file.
      const project = join(work, 'project');
      mkdirSync(project);
      for (const file of ['Pulumi.yaml', 'Pulumi.dev.yaml', 'Pulumi.prod.yaml']) {
        copyFileSync(join(repoRoot, file), join(project, file));
      }
      const env = {
        ...process.env,
        PATH: `${binDir}:${process.env.PATH ?? ''}`,
        PULUMI_HOME: join(work, 'cli-home'),
        PULUMI_BACKEND_URL: `file://${work}`,
        PULUMI_CONFIG_PASSPHRASE: 'e2e-only-passphrase',
        PULUMI_SKIP_UPDATE_CHECK: 'true',
      };
      const pulumi = (args: string[]) => {
        const result = spawnSync(join(binDir, 'pulumi'), [...args, '--non-interactive'], {
          cwd: project,
          env,
          encoding: 'utf8',
          timeout: 60_000,
        });
        assert.equal(result.status, 0, `pulumi ${args.join(' ')}: ${result.stderr}`);
        return result.stdout;
      };
      for (const stackName of ['dev', 'prod']) {
        pulumi(['stack', 'init', stackName]);
        const config = JSON.parse(pulumi(['config', '--stack', stackName, '--json'])) as Record<
          string,
          { value?: string }
        >;
        const keys = Object.keys(config).filter((k) => k.startsWith('sampledb-operator:'));
        assert.ok(keys.includes('sampledb-operator:image'), `${stackName}: ${keys.join(', ')}`);
        assert.ok(keys.includes('sampledb-operator:instances'));
        assert.equal(
          JSON.parse(config['sampledb-operator:replicas']?.value ?? 'null'),
          stackName === 'dev' ? 1 : 2,
        );
      }
    });

    test('pulumi up (image.build false) creates CRDs, RBAC, the operator and the instance', async () => {
      const config = {
        namespace,
        image: { build: false, ref: imageRef },
        replicas: 1,
        logLevel: 'debug',
        watchNamespaces: [],
        resources: { requests: { cpu: '10m', memory: '64Mi' }, limits: { memory: '128Mi' } },
        instances: [
          {
            name: 'orders',
            namespace: appNamespace,
            spec: {
              version: '16',
              storage: { size: '1Gi' },
              deletion: { policy: 'Delete', protection: false },
            },
          },
        ],
        createNamespaces: true,
        retainCrdsOnDelete: false,
      };
      const created = await localStack({
        work,
        stackName: 'e2e',
        kubeconfig: cluster.kubeconfigPath,
        config,
        binDir,
      });
      stack = created;

      const up = await created
        .up({ onOutput, signal: AbortSignal.timeout(OPERATION_TIMEOUT_MS) })
        .catch((err: unknown) => assert.fail(`pulumi up failed: ${String(err)}\n${tail()}`));
      assert.equal(up.summary.result, 'succeeded', tail());
      assert.equal(up.outputs.namespace?.value, namespace);
      assert.equal(up.outputs.image?.value, imageRef);
      assert.equal(up.outputs.imageDigest?.value, `sha256:${'5e'.repeat(32)}`);
      assert.equal(up.outputs.deploymentName?.value, 'sampledb-operator');
      assert.deepEqual(up.outputs.instances?.value, {
        [`${appNamespace}/orders`]: {
          namespace: appNamespace,
          name: 'orders',
          host: `orders.${appNamespace}.svc`,
          port: 5432,
          bindingSecretName: 'orders-binding',
        },
      });
      assert.ok(
        Object.values(up.outputs).every((o) => !o.secret),
        'no output is a secret',
      );

      for (const crd of ['sampledbs.sampledb.io', 'sampledbbackups.sampledb.io']) {
        const object = (await kubectlJson(cluster, ['get', 'crd', crd])) as {
          status: { conditions: { type: string; status: string }[] };
        };
        assert.ok(
          object.status.conditions.some((c) => c.type === 'Established' && c.status === 'True'),
          `${crd} is established`,
        );
      }
      assert.ok(await kubectlJson(cluster, ['get', 'clusterrole', 'sampledb-operator']));
      assert.ok(await kubectlJson(cluster, ['get', 'clusterrolebinding', 'sampledb-operator']));
      assert.ok(await kubectlJson(cluster, ['-n', namespace, 'get', 'serviceaccount', 'sampledb-operator']));
      assert.ok(
        await kubectlJson(cluster, ['-n', namespace, 'get', 'role', 'sampledb-operator-leader-election']),
      );
      const deployment = (await kubectlJson(cluster, [
        '-n',
        namespace,
        'get',
        'deployment',
        'sampledb-operator',
      ])) as {
        spec: { replicas: number; template: { spec: { containers: { image: string }[] } } };
        status: { availableReplicas?: number };
      };
      assert.equal(deployment.spec.template.spec.containers[0]?.image, imageRef, 'pinned to the digest');
      assert.equal(deployment.spec.replicas, 1);
      assert.equal(deployment.status.availableReplicas, 1, 'pulumi waited for the rollout');
      const instance = (await kubectlJson(cluster, ['-n', appNamespace, 'get', 'sampledb', 'orders'])) as {
        spec: { version: string };
      };
      assert.equal(instance.spec.version, '16');
    });

    test('the operator, run as a process against the same apiserver, reconciles the stack-created SampleDB', async (t) => {
      if (!stack) return t.skip('pulumi up failed');
      const healthPort = await freePort();
      const metricsPort = await freePort();
      operator = spawn(process.execPath, [join(repoRoot, 'src/main.ts')], {
        env: {
          ...process.env,
          KUBECONFIG: cluster.kubeconfigPath,
          WATCH_NAMESPACES: appNamespace,
          LEADER_ELECTION: 'false',
          LOG_LEVEL: 'info',
          HEALTH_PORT: String(healthPort),
          METRICS_PORT: String(metricsPort),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      operator.stdout?.on('data', (c: Buffer) => (output += c.toString()));
      operator.stderr?.on('data', (c: Buffer) => (output += c.toString()));
      let exited: number | null | undefined;
      operator.on('exit', (code) => (exited = code));
      const statefulSet = await pollUntil(
        'the StatefulSet of the stack-created SampleDB',
        () => kubectlJson(cluster, ['-n', appNamespace, 'get', 'statefulset', 'orders']),
        {
          timeoutMs: 120_000,
          intervalMs: 1000,
          failFast: () =>
            exited !== undefined ? `operator exited with ${exited}:\n${output.slice(-4000)}` : undefined,
        },
      );
      assert.ok(statefulSet);
      const status = await pollUntil(
        'the SampleDB status',
        async () => {
          const object = (await kubectlJson(cluster, ['-n', appNamespace, 'get', 'sampledb', 'orders'])) as {
            status?: { conditions?: unknown[] };
          };
          return object.status?.conditions?.length ? object.status : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 1000 },
      );
      assert.ok(status.conditions?.length, 'the operator wrote status conditions');
    });

    test('a second pulumi up changes nothing', async (t) => {
      if (!stack) return t.skip('pulumi up failed');
      const up = await stack
        .up({ onOutput, expectNoChanges: true, signal: AbortSignal.timeout(OPERATION_TIMEOUT_MS) })
        .catch((err: unknown) =>
          assert.fail(`second pulumi up reported changes or failed: ${String(err)}\n${tail()}`),
        );
      const changes = Object.entries(up.summary.resourceChanges ?? {}).filter(
        ([op, n]) => op !== 'same' && n > 0,
      );
      assert.deepEqual(changes, [], tail());
      assert.ok((up.summary.resourceChanges?.same ?? 0) > 15, 'every resource was compared and is the same');
    });

    test('pulumi destroy removes everything', async (t) => {
      if (!stack) return t.skip('pulumi up failed');
      const result = await stack
        .destroy({ onOutput, signal: AbortSignal.timeout(OPERATION_TIMEOUT_MS) })
        .catch((err: unknown) => assert.fail(`pulumi destroy failed: ${String(err)}\n${tail()}`));
      destroyed = true;
      assert.equal(result.summary.result, 'succeeded');
      operator?.kill('SIGTERM');
      assert.ok(await gone(cluster, ['get', 'namespace', namespace]), 'operator namespace deleted');
      assert.ok(await gone(cluster, ['get', 'namespace', appNamespace]), 'instance namespace deleted');
      assert.ok(await gone(cluster, ['get', 'crd', 'sampledbs.sampledb.io']), 'CRD deleted');
      assert.ok(await gone(cluster, ['get', 'crd', 'sampledbbackups.sampledb.io']), 'CRD deleted');
      assert.ok(await gone(cluster, ['get', 'clusterrole', 'sampledb-operator']), 'ClusterRole deleted');
      assert.ok(
        await gone(cluster, ['get', 'validatingadmissionpolicy', 'sampledb-operator-deletion-protection']),
        'admission policy deleted',
      );
      const remaining = await stack.exportStack();
      assert.deepEqual((remaining.deployment as { resources?: unknown[] }).resources ?? [], []);
    });
  });
}
