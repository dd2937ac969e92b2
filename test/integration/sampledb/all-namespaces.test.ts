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
import { accessesOf, accessKey, ControlPlane, pollUntil, readAuditLog } from '../../../src/envtest/index.ts';
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
    // What a user sees in `kubectl get events`: the children created and the SampleDB becoming Ready.
    const events = JSON.parse(await kubectl(['get', 'events.events.k8s.io', '-n', 'apps', '-o', 'json']))
      .items as Array<{ reason?: string; note?: string; regarding?: { kind?: string; name?: string } }>;
    const onDb = events.filter((e) => e.regarding?.kind === 'SampleDB' && e.regarding.name === 'db');
    const notes = onDb.map((e) => `${e.reason}: ${e.note}`);
    assert.ok(notes.includes('Created: Created StatefulSet db'), notes.join('\n'));
    assert.ok(notes.includes('Created: Created Secret db-binding'), notes.join('\n'));
    assert.equal(onDb.filter((e) => e.reason === 'Ready').length, 1, notes.join('\n'));

    await apply([secret('apps', 'app-creds', { username: 'app', password: 'second-password-0123456789' })]);
    await pollUntil(
      'the new password in the binding',
      async () => ((await bindingPassword()) === 'second-password-0123456789' ? true : undefined),
      { timeoutMs: 60_000, intervalMs: 500, failFast },
    );
  });

  it('a child the apiserver refuses (422): Failed with the apiserver message, an Event, and retries backing off', async () => {
    // An admission policy of the cluster's (not the operator's CRD) refuses StatefulSets in one namespace with
    // reason Invalid: the 422 the SampleDB's own admission cannot foresee.
    const message = 'StatefulSets are refused in this namespace (test policy)';
    await kubectl(['create', 'namespace', 'refusing']);
    await kubectl(['label', 'namespace', 'refusing', 'sampledb-test/refuse=statefulsets']);
    await apply([
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'refuse-statefulsets' },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: {
            resourceRules: [
              {
                apiGroups: ['apps'],
                apiVersions: ['v1'],
                operations: ['CREATE', 'UPDATE'],
                resources: ['statefulsets'],
              },
            ],
          },
          validations: [{ expression: 'false', message, reason: 'Invalid' }],
        },
      },
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicyBinding',
        metadata: { name: 'refuse-statefulsets' },
        spec: {
          policyName: 'refuse-statefulsets',
          validationActions: ['Deny'],
          matchResources: { namespaceSelector: { matchLabels: { 'sampledb-test/refuse': 'statefulsets' } } },
        },
      },
    ]);
    // The policy takes effect once the apiserver's policy informer has it: wait until a dry run is refused.
    const probe = JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'probe', namespace: 'refusing' },
      spec: {
        selector: { matchLabels: { a: 'b' } },
        template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
      },
    });
    await pollUntil(
      'the policy refuses StatefulSets',
      async () => {
        const result = await plane.kubectl(['create', '--dry-run=server', '-f', '-'], { input: probe });
        return result.code !== 0 && result.stderr.includes(message) ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    await apply([
      {
        apiVersion: 'sampledb.io/v1alpha1',
        kind: 'SampleDB',
        metadata: { name: 'db', namespace: 'refusing' },
        spec: { version: '16', storage: { size: '1Gi' }, deletion: { policy: 'Delete' } },
      },
    ]);
    const failFast = () => (operator?.running ? undefined : operator?.tail());
    const ready = await pollUntil(
      'the SampleDB Failed with the refusal',
      async () => {
        const db = JSON.parse(await kubectl(['get', 'sdb', 'db', '-n', 'refusing', '-o', 'json']));
        const condition = db.status?.conditions?.find((c: { type: string }) => c.type === 'Ready');
        return db.status?.phase === 'Failed' && condition?.reason === 'ChildRejected' ? condition : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500, failFast },
    );
    assert.ok(ready.message.includes(message), ready.message);
    const events = JSON.parse(await kubectl(['get', 'events.events.k8s.io', '-n', 'refusing', '-o', 'json']))
      .items as Array<{
      reason?: string;
      type?: string;
      note?: string;
      regarding?: { kind?: string; name?: string };
    }>;
    const rejected = events.filter((e) => e.reason === 'ChildRejected' && e.regarding?.kind === 'SampleDB');
    assert.equal(rejected.length, 1, 'one Event (repeats bump its series)');
    assert.equal(rejected[0]?.type, 'Warning');
    assert.ok(rejected[0]?.note?.includes(message));
    // Each retry waits longer than the one before.
    const delays = await pollUntil(
      'three failed reconciles',
      async () => {
        const found = (operator?.logs() ?? [])
          .filter((l) => l.msg === 'reconcile failed' && l.object === 'refusing/db')
          .map((l) => Number(l.retryInMs));
        return found.length >= 3 ? found : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, failFast },
    );
    assert.ok(delays[1]! > delays[0]! && delays[2]! > delays[1]!, `retry delays ${delays.join(', ')}`);
  });

  it('the audit log: cluster-wide Secret/ConfigMap list and watch only with the label selector, others by name', async () => {
    const all = await readAuditLog(plane.auditLogPath!);
    // Leader election ran under the synthesized Lease rules, and nothing the operator asked for was refused.
    const accesses = accessesOf(all, SERVICE_ACCOUNT);
    assert.ok(accesses.some((a) => a.resource === 'leases' && a.verb === 'update' && a.count > a.denied));
    assert.deepEqual(
      accesses.filter((a) => a.denied > 0).map(accessKey),
      [],
      'no request of the operator was refused',
    );
    const events = all.filter(
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
