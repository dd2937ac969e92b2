// The namespace-scoped install: SampleDbOperator({ watchNamespaces }) synthesizes a Role per namespace and no
// cluster-wide rights on namespaced resources; the operator (a real process, authenticated as its ServiceAccount)
// runs one watch per namespace, reconciles SampleDBs there, and leaves other namespaces alone.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Testing } from 'cdk8s';
import { SampleDbOperator } from '../../../src/constructs/index.ts';
import { ControlPlane, pollUntil } from '../../../src/envtest/index.ts';
import { crdManifests } from '../support/manifests.ts';
import { OperatorProcess } from '../support/operator.ts';
import { serviceAccountKubeconfig } from '../support/service-account.ts';

const WATCHED = ['team-a', 'team-b'];
const UNWATCHED = 'team-c';
const SERVICE_ACCOUNT = 'system:serviceaccount:sampledb-system:sampledb-operator';

let plane: ControlPlane;
let operator: OperatorProcess | undefined;

async function kubectl(args: string[], input?: string): Promise<string> {
  const result = await plane.kubectl(args, input === undefined ? {} : { input });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

const operatorKubeconfig = () =>
  serviceAccountKubeconfig(
    plane,
    { namespace: 'sampledb-system', name: 'sampledb-operator' },
    join(mkdtempSync(join(tmpdir(), 'watch-ns-')), 'kubeconfig'),
  );

const sampleDb = (namespace: string) =>
  JSON.stringify({
    apiVersion: 'sampledb.io/v1alpha1',
    kind: 'SampleDB',
    metadata: { name: 'db', namespace },
    spec: { version: '16', storage: { size: '1Gi' }, deletion: { policy: 'Delete' } },
  });

before(async () => {
  plane = await ControlPlane.start({ workloads: true });
  const chart = Testing.chart();
  new SampleDbOperator(chart, 'operator', { image: 'unused.test/operator:0', watchNamespaces: WATCHED });
  // RBAC, ServiceAccount and namespaces exactly as synthesized; the controller runs as a local process instead.
  const manifests = Testing.synth(chart).filter(
    (m) => !['Deployment', 'PodDisruptionBudget', 'Service'].includes(m.kind as string),
  );
  for (const namespace of [...WATCHED, UNWATCHED]) await kubectl(['create', 'namespace', namespace]);
  await kubectl(
    ['apply', '--server-side', '-f', '-'],
    [...crdManifests(), ...manifests].map((m) => JSON.stringify(m)).join('\n'),
  );
  await kubectl(['wait', '--for=condition=Established', '--timeout=30s', 'crd/sampledbs.sampledb.io']);
  operator = OperatorProcess.start({
    kubeconfigPath: await operatorKubeconfig(),
    env: { WATCH_NAMESPACES: WATCHED.join(',') },
  });
});

after(async () => {
  await operator?.kill();
  await plane?.stop();
});

describe('watchNamespaces: Role-scoped RBAC and one watch per namespace', { timeout: 180_000 }, () => {
  it('has no cluster-wide rights on SampleDBs or Secrets', async () => {
    for (const [verb, resource] of [
      ['list', 'sampledbs.sampledb.io'],
      ['watch', 'secrets'],
    ]) {
      const result = await plane.kubectl([
        'auth',
        'can-i',
        verb!,
        resource!,
        '--all-namespaces',
        `--as=${SERVICE_ACCOUNT}`,
      ]);
      assert.equal(result.stdout.trim(), 'no', `${verb} ${resource} across namespaces`);
    }
    const inWatched = await plane.kubectl([
      'auth',
      'can-i',
      'list',
      'sampledbs.sampledb.io',
      '-n',
      'team-a',
      `--as=${SERVICE_ACCOUNT}`,
    ]);
    assert.equal(inWatched.stdout.trim(), 'yes');
  });

  it('reconciles SampleDBs in every watched namespace to Ready and leaves the others alone', async () => {
    for (const namespace of [...WATCHED, UNWATCHED])
      await kubectl(['create', '-f', '-'], sampleDb(namespace));
    for (const namespace of WATCHED) {
      await pollUntil(
        `SampleDB in ${namespace} Ready`,
        async () => {
          const db = JSON.parse(await kubectl(['get', 'sdb', 'db', '-n', namespace, '-o', 'json']));
          const ready = db.status?.conditions?.find((c: { type: string }) => c.type === 'Ready');
          return ready?.status === 'True' ? true : undefined;
        },
        {
          timeoutMs: 120_000,
          intervalMs: 500,
          failFast: () => (operator?.running ? undefined : operator?.tail()),
        },
      );
      await kubectl(['get', 'statefulset', 'db', '-n', namespace]);
    }
    const unwatched = JSON.parse(await kubectl(['get', 'sdb', 'db', '-n', UNWATCHED, '-o', 'json']));
    assert.equal(unwatched.status, undefined, 'no status written outside the watched namespaces');
    assert.deepEqual(unwatched.metadata.finalizers ?? [], []);
    const statefulSets = await plane.kubectl(['get', 'statefulsets', '-n', UNWATCHED, '-o', 'name']);
    assert.equal(statefulSets.stdout.trim(), '');
    const forbidden = operator?.lines.filter((line) => /forbidden/i.test(line)) ?? [];
    assert.deepEqual(forbidden, [], 'the operator never asked for more than its Roles allow');
  });
});
