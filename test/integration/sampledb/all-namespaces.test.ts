// The all-namespaces install (a ClusterRole): the operator caches only the Secrets and ConfigMaps it manages (a label
// selector on those informers) and watches, one by one by name, the few of the user's that a spec names. Proven by
// the apiserver's audit log: every cluster-wide list/watch of Secrets or ConfigMaps it sent carries the selector,
// every other one names a single object, and it never read the unrelated Secret in another namespace. The user's
// Secret it watches by name still drives the SampleDB: a new password there reaches the binding within seconds
// (not at the 10-minute resync).
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Testing } from 'cdk8s';
import { SampleDbOperator } from '../../../src/constructs/index.ts';
import { ControlPlane, pollUntil, readAuditLog } from '../../../src/envtest/index.ts';
import { strictKubectl } from '../support/kubectl.ts';
import { crdManifests } from '../support/manifests.ts';
import { OperatorProcess } from '../support/operator.ts';
import { serviceAccountKubeconfig } from '../support/service-account.ts';

const SERVICE_ACCOUNT = 'system:serviceaccount:sampledb-system:sampledb-operator';
const SELECTOR = encodeURIComponent('app.kubernetes.io/managed-by=sampledb-operator');

let plane: ControlPlane;
let operator: OperatorProcess | undefined;

const kubectl = strictKubectl(() => plane);

const apply = (objects: object[]) =>
  kubectl(['apply', '--server-side', '-f', '-'], objects.map((o) => JSON.stringify(o)).join('\n'));

const secret = (namespace: string, name: string, stringData: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace },
  stringData,
});

before(async () => {
  plane = await ControlPlane.start({ workloads: true, auditLog: true });
  const chart = Testing.chart();
  new SampleDbOperator(chart, 'operator', { image: 'unused.test/operator:0' });
  const manifests = Testing.synth(chart).filter(
    (m) => !['Deployment', 'PodDisruptionBudget', 'Service'].includes(m.kind as string),
  );
  for (const namespace of ['apps', 'elsewhere']) await kubectl(['create', 'namespace', namespace]);
  await apply([...crdManifests(), ...manifests]);
  await kubectl(['wait', '--for=condition=Established', '--timeout=30s', 'crd/sampledbs.sampledb.io']);
  // Not the operator's business: it must never read these.
  await apply([
    secret('elsewhere', 'unrelated', { token: 'not-for-the-operator' }),
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'unrelated', namespace: 'elsewhere' },
      data: { a: 'b' },
    },
  ]);
  operator = OperatorProcess.start({
    kubeconfigPath: await serviceAccountKubeconfig(
      plane,
      { namespace: 'sampledb-system', name: 'sampledb-operator' },
      join(mkdtempSync(join(tmpdir(), 'all-ns-')), 'kubeconfig'),
    ),
  });
});

after(async () => {
  await operator?.kill();
  await plane?.stop();
});

const bindingPassword = async () => {
  const binding = JSON.parse(
    await kubectl(['get', 'secret', 'db-binding', '-n', 'apps', '-o', 'json']).catch(() => '{}'),
  );
  const encoded = binding.data?.password as string | undefined;
  return encoded ? Buffer.from(encoded, 'base64').toString('utf8') : undefined;
};

describe('all namespaces: Secrets and ConfigMaps by label, the referenced ones by name', {
  timeout: 240_000,
}, () => {
  it('a SampleDB with the user’s Secret and init SQL gets Ready, and a new password reaches the binding', async () => {
    await apply([
      secret('apps', 'app-creds', { username: 'app', password: 'first-password-0123456789' }),
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'schema', namespace: 'apps' },
        data: { 'init.sql': 'select 1;' },
      },
      {
        apiVersion: 'sampledb.io/v1alpha1',
        kind: 'SampleDB',
        metadata: { name: 'db', namespace: 'apps' },
        spec: {
          version: '16',
          storage: { size: '1Gi' },
          deletion: { policy: 'Delete' },
          bootstrap: { credentialsSecret: { name: 'app-creds' }, initSQL: { name: 'schema' } },
        },
      },
    ]);
    const failFast = () => (operator?.running ? undefined : operator?.tail());
    await pollUntil(
      'SampleDB Ready',
      async () => {
        const db = JSON.parse(await kubectl(['get', 'sdb', 'db', '-n', 'apps', '-o', 'json']));
        const ready = db.status?.conditions?.find((c: { type: string }) => c.type === 'Ready');
        return ready?.status === 'True' ? true : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500, failFast },
    );
    assert.equal(await bindingPassword(), 'first-password-0123456789');

    await apply([secret('apps', 'app-creds', { username: 'app', password: 'second-password-0123456789' })]);
    await pollUntil(
      'the new password in the binding',
      async () => ((await bindingPassword()) === 'second-password-0123456789' ? true : undefined),
      { timeoutMs: 60_000, intervalMs: 500, failFast },
    );
  });

  it('the audit log: cluster-wide Secret/ConfigMap list and watch only with the label selector, others by name', async () => {
    const events = (await readAuditLog(plane.auditLogPath!)).filter(
      (e) =>
        e.user.username === SERVICE_ACCOUNT &&
        ['secrets', 'configmaps'].includes(e.objectRef?.resource ?? '') &&
        ['list', 'watch', 'get'].includes(e.verb),
    );
    const clusterWide = events.filter((e) => !e.objectRef?.namespace);
    assert.ok(clusterWide.length > 0, 'the informers listed and watched');
    assert.deepEqual(
      clusterWide.filter((e) => !e.requestURI.includes(`labelSelector=${SELECTOR}`)).map((e) => e.requestURI),
      [],
      'every cluster-wide list/watch carries the managed-by selector',
    );
    const named = events.filter((e) => e.objectRef?.namespace);
    assert.deepEqual(
      [
        ...new Set(
          named.map((e) => `${e.objectRef?.resource} ${e.objectRef?.namespace}/${e.objectRef?.name}`),
        ),
      ].sort(),
      ['configmaps apps/schema', 'secrets apps/app-creds'],
      'besides its own, the operator read exactly the objects the spec names',
    );
    assert.deepEqual(
      events.filter((e) => e.objectRef?.namespace === 'elsewhere').map((e) => e.requestURI),
      [],
      'it never read the unrelated namespace',
    );
  });
});
