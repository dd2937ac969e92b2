// SampleDBDrill on a real apiserver, with the operator as real processes (its ServiceAccount, dist/'s RBAC, leader
// election): the admission rules; each guard rail a refusal with its reason, a condition and an Event; and the
// control flow of a run across an operator kill: the leader records the fault (kill-operator-leader: its own pod)
// and dies, the standby takes the Lease and finishes the run with its measurements. kwok leaves the drill's (and
// backups') pods to this test, which plays their kubelet with the results the scripts would report.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SampleDbDrillObject, SampleDbObject } from '../../../src/api/index.ts';
import type { KubeObject } from '../../../src/runtime/index.ts';
import { NAMESPACES, SAMPLEDB_DRILLS } from '../../../src/sampledb/resources.ts';
import { Gate } from '../support/kubelet.ts';
import { OperatorProcess } from '../support/operator.ts';
import { type E2eEnv, eventually, getOrUndefined, SAMPLEDBS, startE2eEnv } from './e2e-env.ts';

type Db = SampleDbObject & KubeObject;
type Drill = SampleDbDrillObject & KubeObject;

let env: E2eEnv;
const operators: OperatorProcess[] = [];
/** Drill pods wait for the gate of their Job (open unless a test holds it). */
const gates = new Map<string, Gate>();
const gateOf = (job: string) => {
  let g = gates.get(job);
  if (!g) {
    g = new Gate();
    g.open();
    gates.set(job, g);
  }
  return g;
};

const startOperator = (name: string) => {
  const operator = OperatorProcess.start({ kubeconfigPath: env.operatorKubeconfig, env: { POD_NAME: name } });
  operators.push(operator);
  return operator;
};

before(async () => {
  env = await startE2eEnv();
  env.kubelet.on(
    (pod) => pod.metadata.labels?.['app.kubernetes.io/component'] === 'drill',
    async (pod, kubelet) => {
      const job = pod.metadata.labels?.['job-name'] ?? '';
      await gateOf(job).wait();
      const message = job.endsWith('-canary')
        ? '{"canary":true}'
        : JSON.stringify({
            writableAtMs: Date.now(),
            failedWrites: 0,
            canaryPresent: true,
            replicasExpected: 0,
            replicasCaughtUp: 0,
            caughtUpAtMs: Date.now(),
          });
      await kubelet.finish(pod, 0, message);
    },
  );
  startOperator('operator-a');
});

after(async () => {
  await env?.stop();
});

const tail = () => operators.map((o, i) => `--- operator ${i} ---\n${o.tail(30)}`).join('\n');

async function readyDb(ns: string, name: string, spec: Record<string, unknown> = {}): Promise<void> {
  await env.http.create(SAMPLEDBS, {
    apiVersion: 'sampledb.io/v1alpha1',
    kind: 'SampleDB',
    metadata: { name, namespace: ns },
    spec: { version: '16', storage: { size: '1Gi' }, deletion: { policy: 'Delete' }, ...spec },
  } as Db);
  await eventually(
    `SampleDB ${name} Ready`,
    async () => {
      const db = await getOrUndefined<Db>(env.http, SAMPLEDBS, ns, name);
      return db?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') || undefined;
    },
    operators[0],
    90_000,
  );
}

const drill = (ns: string, name: string, spec: Record<string, unknown>) =>
  env.http.create(SAMPLEDB_DRILLS, {
    apiVersion: 'sampledb.io/v1alpha1',
    kind: 'SampleDBDrill',
    metadata: { name, namespace: ns },
    spec,
  } as Drill);

async function finished(ns: string, name: string, timeoutMs = 60_000): Promise<Drill> {
  return eventually(
    `drill ${name} finished`,
    async () => {
      const d = await getOrUndefined<Drill>(env.http, SAMPLEDB_DRILLS, ns, name);
      return d?.status?.runs?.[0] ? d : undefined;
    },
    undefined,
    timeoutMs,
  ).catch((err: unknown) => {
    throw new Error(`${String(err)}\n${tail()}`);
  });
}

async function eventReasons(ns: string, name: string): Promise<string[]> {
  const out = await env.kubectl(['get', 'events.events.k8s.io', '-n', ns, '-o', 'json']);
  const items = (JSON.parse(out) as { items: Array<{ reason?: string; regarding?: { name?: string } }> })
    .items;
  return items.filter((e) => e.regarding?.name === name).map((e) => e.reason ?? '');
}

async function allowDrills(ns: string): Promise<void> {
  await env.http.patch(
    NAMESPACES,
    { namespace: '', name: ns },
    { metadata: { labels: { 'sampledb.io/drills': 'allowed' } } },
    'merge',
  );
}

describe('SampleDBDrill on the control plane', { timeout: 400_000 }, () => {
  it('admission: an unknown kind, a bad schedule and a changed kind are refused with the field named', async () => {
    const ns = await env.namespace('drill-api');
    const refused = async (spec: Record<string, unknown>, pattern: RegExp) => {
      const result = await env
        .kubectl(
          ['create', '-f', '-'],
          JSON.stringify({
            apiVersion: 'sampledb.io/v1alpha1',
            kind: 'SampleDBDrill',
            metadata: { name: 'x', namespace: ns },
            spec,
          }),
        )
        .then(
          () => '',
          (err: unknown) => String(err),
        );
      assert.match(result, pattern);
    };
    await refused(
      { sampleDB: { name: 'orders' }, kind: 'unplug' },
      /spec\.kind: Unsupported value: "unplug"/,
    );
    await refused(
      { sampleDB: { name: 'orders' }, kind: 'kill-primary', schedule: '0 25 * * *' },
      /spec\.schedule: Invalid value/,
    );
    await refused(
      { sampleDB: { name: 'orders' }, kind: 'kill-primary', historyLimit: 50 },
      /spec\.historyLimit/,
    );
    await drill(ns, 'ok', { sampleDB: { name: 'orders' }, kind: 'kill-primary', schedule: '@weekly' });
    const changed = await env
      .kubectl([
        'patch',
        'sampledbdrill',
        'ok',
        '-n',
        ns,
        '--type=merge',
        '-p',
        JSON.stringify({ spec: { kind: 'kill-replica' } }),
      ])
      .then(
        () => '',
        (err: unknown) => String(err),
      );
    assert.match(changed, /spec\.sampleDB and spec\.kind are immutable/);
  });

  it('refuses a namespace without the label, then each guard rail, with the reason, a condition and an Event', async () => {
    const ns = await env.namespace('drill-guard');
    await readyDb(ns, 'orders');
    await drill(ns, 'unlabelled', { sampleDB: { name: 'orders' }, kind: 'restore-check' });
    const unlabelled = await finished(ns, 'unlabelled');
    assert.equal(unlabelled.status?.phase, 'Refused');
    assert.equal(unlabelled.status?.runs?.[0]?.reason, 'NamespaceNotAllowed');
    const condition = unlabelled.status?.conditions?.find((c) => c.type === 'LastRunSucceeded');
    assert.equal(condition?.status, 'False');
    assert.equal(condition?.reason, 'NamespaceNotAllowed');
    assert.match(condition?.message ?? '', /sampledb\.io\/drills=allowed/);
    await eventually(
      'DrillRefused Event',
      async () => (await eventReasons(ns, 'unlabelled')).includes('DrillRefused') || undefined,
    );

    await allowDrills(ns);
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['one-instance', { sampleDB: { name: 'orders' }, kind: 'kill-primary' }, 'WouldLeaveNoHealthyInstance'],
      ['replica', { sampleDB: { name: 'orders' }, kind: 'kill-replica' }, 'WouldLeaveNoHealthyInstance'],
      ['isolate', { sampleDB: { name: 'orders' }, kind: 'isolate-primary' }, 'WouldLeaveNoHealthyInstance'],
      ['fill', { sampleDB: { name: 'orders' }, kind: 'fill-disk' }, 'WouldLeaveNoHealthyInstance'],
      ['missing', { sampleDB: { name: 'nope' }, kind: 'restore-check' }, 'SampleDBNotFound'],
      ['no-backup', { sampleDB: { name: 'orders' }, kind: 'restore-check' }, 'NoCompletedBackup'],
    ];
    for (const [name, spec] of cases) await drill(ns, name, spec);
    for (const [name, , reason] of cases) {
      const d = await finished(ns, name);
      assert.equal(d.status?.runs?.[0]?.result, 'Refused', name);
      assert.equal(d.status?.runs?.[0]?.reason, reason, name);
      assert.equal(d.status?.runs?.[0]?.target, undefined, `${name}: nothing was hit`);
    }

    // A backup that is running (kwok leaves its pod to this test, which never finishes it).
    await env.kubectl(
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'sampledb.io/v1alpha1',
        kind: 'SampleDBBackup',
        metadata: { name: 'orders-manual', namespace: ns },
        spec: { sampleDB: { name: 'orders' } },
      }),
    );
    await drill(ns, 'during-backup', { sampleDB: { name: 'orders' }, kind: 'kill-operator-leader' });
    assert.equal((await finished(ns, 'during-backup')).status?.runs?.[0]?.reason, 'BackupInProgress');
  });

  it('a run survives the leader being killed after it recorded the fault; another drill meanwhile is refused', async () => {
    const ns = await env.namespace('drill-leader');
    await allowDrills(ns);
    await readyDb(ns, 'orders');
    const standby = startOperator('operator-b');
    const canaryGate = new Gate();
    gates.set('leader-r1-canary', canaryGate);
    await drill(ns, 'leader', { sampleDB: { name: 'orders' }, kind: 'kill-operator-leader' });
    await eventually(
      'the run writes its canary',
      async () => {
        const d = await getOrUndefined<Drill>(env.http, SAMPLEDB_DRILLS, ns, 'leader');
        return d?.status?.current?.step === 'canary' || undefined;
      },
      operators[0],
    );
    // While it runs, a second drill on the same SampleDB is refused.
    await drill(ns, 'second', { sampleDB: { name: 'orders' }, kind: 'restore-check' });
    assert.equal((await finished(ns, 'second')).status?.runs?.[0]?.reason, 'DrillInProgress');

    canaryGate.open();
    const injected = await eventually(
      'the fault recorded before it is sent',
      async () => {
        const d = await getOrUndefined<Drill>(env.http, SAMPLEDB_DRILLS, ns, 'leader');
        return d?.status?.current?.step === 'inject' ? d : undefined;
      },
      operators[0],
    );
    assert.equal(injected.status?.current?.target, 'operator-a');
    assert.ok(injected.status?.current?.injectedAt);
    // Here the operator runs as a process, not a pod: the test delivers the fault the deletion would.
    await operators[0]?.kill();
    const done = await finished(ns, 'leader', 120_000);
    const run = done.status?.runs?.[0];
    assert.equal(run?.result, 'Succeeded', JSON.stringify(done.status));
    assert.equal(run?.reason, 'Recovered');
    assert.equal(run?.target, 'operator-a');
    assert.equal(run?.canaryPresent, true);
    assert.equal(run?.writableSeconds, 0);
    // The standby saw the fault when it took the Lease: after the old leader's last renewal, within its duration.
    assert.ok((run?.detectSeconds ?? -1) >= 0 && (run?.detectSeconds ?? 99) < 60, JSON.stringify(run));
    assert.equal(done.status?.phase, 'Succeeded');
    assert.equal(done.status?.current, undefined);
    const reasons = await eventReasons(ns, 'leader');
    // Not DrillFaultInjected: the leader that injects is the one killed here, and it may die between recording the
    // fault in the status (what the run resumes from) and sending that Event (seen in a CI run of 2026-12-04).
    for (const reason of ['DrillStarted', 'DrillFaultDetected', 'DrillSucceeded'])
      assert.ok(reasons.includes(reason), `${reason} in ${reasons.join(', ')}`);
    assert.ok(standby.running, 'the standby finished the run');
  });
});
