// The chart's life on a real control plane, driven by a real helm: install (CRDs from crds/, the operator's objects,
// its pods admitted under PodSecurity `restricted`), the operator reconciling a SampleDB with exactly what the chart
// installed (its ServiceAccount's token, RBAC and the Deployment's environment; kwok runs no image, so the
// controller runs as a local process, as in the other end-to-end tests), an upgrade that changes the RBAC shape
// (all namespaces -> one watched namespace), and uninstall (everything gone but the CRDs and the databases).
// Its own control plane: it installs CRDs and cluster-wide objects and asserts what stays after uninstall.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LEADER_ELECTION_LEASE } from '../../../src/api/index.ts';
import { ControlPlane, freePorts, pollUntil } from '../../../src/envtest/index.ts';
import { CHART_DIR } from '../../../src/packaging/helm/chart.ts';
import { OperatorProcess } from '../support/operator.ts';
import { packagingTools, repoRoot, run } from '../support/packaging-tools.ts';
import { serviceAccountKubeconfig } from '../support/service-account.ts';

const { helm } = packagingTools();
const NAMESPACE = 'sampledb-system';
const APPS = 'shop';
const RELEASE = 'sampledb';
const SERVICE_ACCOUNT = `system:serviceaccount:${NAMESPACE}:sampledb-operator`;
const work = mkdtempSync(join(tmpdir(), 'helm-lifecycle-'));

let plane: ControlPlane;
let operator: OperatorProcess | undefined;

async function kubectl(args: string[], input?: string): Promise<string> {
  const result = await plane.kubectl(args, input === undefined ? {} : { input });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

const exists = async (args: string[]) => (await plane.kubectl(['get', ...args, '-o', 'name'])).code === 0;

async function helmRun(args: string[]) {
  const result = await run(helm, [...args, '--kubeconfig', plane.kubeconfigPath], {
    env: {
      HELM_CACHE_HOME: join(work, 'cache'),
      HELM_CONFIG_HOME: join(work, 'config'),
      HELM_DATA_HOME: join(work, 'data'),
    },
  });
  assert.equal(result.code, 0, `helm ${args.join(' ')}:\n${result.stdout}${result.stderr}`);
  return result.stdout;
}

/** The controller container's environment as the chart installed it, with what the kubelet would fill in. */
async function deploymentEnvironment(): Promise<Record<string, string>> {
  const deployment = JSON.parse(
    await kubectl(['get', 'deployment', 'sampledb-operator', '-n', NAMESPACE, '-o', 'json']),
  );
  const env: Record<string, string> = {};
  for (const v of deployment.spec.template.spec.containers[0].env as Array<{
    name: string;
    value?: string;
    valueFrom?: { fieldRef?: { fieldPath: string } };
  }>) {
    const field = v.valueFrom?.fieldRef?.fieldPath;
    env[v.name] =
      field === 'metadata.namespace'
        ? NAMESPACE
        : field === 'metadata.name'
          ? 'helm-test-operator'
          : (v.value ?? '');
  }
  return env;
}

/** Starts the controller with the chart's identity and settings (free ports instead of 8080/8081 on this machine). */
async function startOperator(): Promise<OperatorProcess> {
  const [metrics, health] = await freePorts(2);
  return OperatorProcess.start({
    kubeconfigPath: await serviceAccountKubeconfig(
      plane,
      { namespace: NAMESPACE, name: 'sampledb-operator' },
      join(work, 'operator.kubeconfig'),
    ),
    env: { ...(await deploymentEnvironment()), METRICS_PORT: String(metrics), HEALTH_PORT: String(health) },
  });
}

async function createReadySampleDb(name: string): Promise<void> {
  await kubectl(
    ['create', '-f', '-'],
    JSON.stringify({
      apiVersion: 'sampledb.io/v1alpha1',
      kind: 'SampleDB',
      metadata: { name, namespace: APPS },
      spec: { version: '16', storage: { size: '1Gi' }, deletion: { policy: 'Delete' } },
    }),
  );
  await pollUntil(
    `SampleDB ${name} Ready`,
    async () => {
      const db = JSON.parse(await kubectl(['get', 'sdb', name, '-n', APPS, '-o', 'json']));
      const ready = db.status?.conditions?.find((c: { type: string }) => c.type === 'Ready');
      return ready?.status === 'True' ? true : undefined;
    },
    {
      timeoutMs: 120_000,
      intervalMs: 500,
      failFast: () => (operator?.running ? undefined : operator?.tail()),
    },
  );
}

/** Lines where the apiserver refused the operator something (Leases included: the elector lists and watches its own). */
const refusals = (o: OperatorProcess | undefined) =>
  (o?.lines ?? []).filter((line) => /forbidden/i.test(line));

before(async () => {
  plane = await ControlPlane.start({ workloads: true });
  // As the chart README says: the release namespace, labelled restricted, before helm install.
  await kubectl(['create', 'namespace', NAMESPACE]);
  await kubectl(['label', 'namespace', NAMESPACE, 'pod-security.kubernetes.io/enforce=restricted']);
  await kubectl(['create', 'namespace', APPS]);
});

after(async () => {
  await operator?.kill();
  await plane?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('helm install, upgrade and uninstall on the control plane', { timeout: 420_000 }, () => {
  it('installs the CRDs from crds/ and the operator, whose pods pass PodSecurity restricted', async () => {
    assert.equal(await exists(['crd', 'sampledbs.sampledb.io']), false, 'a fresh control plane');
    await helmRun([
      'install',
      RELEASE,
      join(repoRoot, CHART_DIR),
      '-n',
      NAMESPACE,
      '--wait',
      '--timeout',
      '120s',
    ]);
    await kubectl([
      'wait',
      '--for=condition=Established',
      '--timeout=30s',
      'crd/sampledbs.sampledb.io',
      'crd/sampledbbackups.sampledb.io',
      'crd/sampledbrestores.sampledb.io',
    ]);
    const deployment = JSON.parse(
      await kubectl(['get', 'deployment', 'sampledb-operator', '-n', NAMESPACE, '-o', 'json']),
    );
    assert.equal(deployment.status.readyReplicas, 2, 'both replicas admitted and ready (kwok)');
    assert.equal(deployment.metadata.labels['app.kubernetes.io/managed-by'], 'Helm');
    assert.equal(deployment.metadata.annotations['meta.helm.sh/release-name'], RELEASE);
    for (const object of [
      ['clusterrole', 'sampledb-operator'],
      ['clusterrolebinding', 'sampledb-operator'],
      ['validatingadmissionpolicy', 'sampledb-operator-deletion-protection'],
      ['serviceaccount', 'sampledb-operator', '-n', NAMESPACE],
      ['service', 'sampledb-operator-metrics', '-n', NAMESPACE],
    ]) {
      assert.ok(await exists(object), object.join(' '));
    }
    const releases = JSON.parse(await helmRun(['list', '-n', NAMESPACE, '-o', 'json']));
    assert.equal(releases[0]?.status, 'deployed');
  });

  it('runs an operator that reconciles a SampleDB with the installed ServiceAccount, RBAC and settings', async () => {
    operator = await startOperator();
    await createReadySampleDb('orders');
    assert.ok(await exists(['statefulset', 'orders', '-n', APPS]));
    // The chart turns leader election on: this process holds the Lease through the chart's leader-election Role.
    const lease = JSON.parse(
      await kubectl(['get', 'lease', LEADER_ELECTION_LEASE, '-n', NAMESPACE, '-o', 'json']),
    );
    assert.equal(lease.spec.holderIdentity, 'helm-test-operator');
    assert.deepEqual(refusals(operator), [], 'the installed RBAC allows what the operator does');
  });

  it('upgrades with a changed value: one watched namespace replaces the cluster-wide role', async () => {
    const canI = async (scope: string[]) =>
      (
        await plane.kubectl([
          'auth',
          'can-i',
          'list',
          'sampledbs.sampledb.io',
          ...scope,
          `--as=${SERVICE_ACCOUNT}`,
        ])
      ).stdout.trim();
    const before = await canI(['--all-namespaces']);
    assert.equal(before, 'yes');
    await helmRun([
      'upgrade',
      RELEASE,
      join(repoRoot, CHART_DIR),
      '-n',
      NAMESPACE,
      '--reuse-values',
      '--set',
      `watchNamespaces={${APPS}}`,
      '--set',
      'logLevel=debug',
      '--wait',
      '--timeout',
      '120s',
    ]);
    const env = await deploymentEnvironment();
    assert.equal(env.WATCH_NAMESPACES, APPS);
    assert.equal(env.LOG_LEVEL, 'debug');
    assert.equal(await exists(['clusterrole', 'sampledb-operator']), false, 'the cluster-wide role is gone');
    assert.ok(await exists(['clusterrole', 'sampledb-operator-cluster-read']));
    assert.ok(await exists(['role', 'sampledb-operator', '-n', APPS]));
    assert.equal(await canI(['--all-namespaces']), 'no');
    assert.equal(await canI(['-n', APPS]), 'yes');
    const history = JSON.parse(await helmRun(['history', RELEASE, '-n', NAMESPACE, '-o', 'json']));
    assert.equal(history.at(-1)?.revision, 2);

    // The controller restarted with the upgraded settings still reconciles in the namespace it may watch.
    await operator?.stop();
    operator = await startOperator();
    await createReadySampleDb('invoices');
    assert.deepEqual(refusals(operator), [], 'the upgraded Role allows what the operator does');
  });

  it('uninstalls everything but the CRDs (helm keeps crds/) and the databases', async () => {
    await operator?.stop();
    await helmRun(['uninstall', RELEASE, '-n', NAMESPACE, '--wait', '--timeout', '120s']);
    for (const object of [
      ['deployment', 'sampledb-operator', '-n', NAMESPACE],
      ['serviceaccount', 'sampledb-operator', '-n', NAMESPACE],
      ['clusterrole', 'sampledb-operator-cluster-read'],
      ['role', 'sampledb-operator', '-n', APPS],
      ['validatingadmissionpolicy', 'sampledb-operator-deletion-protection'],
    ]) {
      await pollUntil(
        `${object.join(' ')} removed`,
        async () => ((await exists(object)) ? undefined : true),
        {
          timeoutMs: 30_000,
        },
      );
    }
    assert.ok(await exists(['crd', 'sampledbs.sampledb.io']), 'CRDs from crds/ stay');
    assert.ok(await exists(['sdb', 'orders', '-n', APPS]), 'SampleDBs are not deleted by an uninstall');
    assert.equal((await helmRun(['list', '-n', NAMESPACE, '-o', 'json'])).trim(), '[]');
  });
});
