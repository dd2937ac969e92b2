// The drill controller on the fake apiserver (no controllers run there: the test plays the Job controller, the
// kubelet and the SampleDB controller's view of the failover). A kill-primary run goes end to end, and the operator
// is "killed" at every single write in turn (the write does not happen, the next reconcile starts from a fresh
// cache): the run still ends Succeeded with the same target, the primary is deleted by its uid only, and the pod the
// StatefulSet re-creates under the same name is never hit.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { SampleDbDrillObject, SampleDbObject } from '../../../../src/api/index.ts';
import { silentLogger } from '../../../../src/runtime/index.ts';
import { SampleDbDrillReconciler } from '../../../../src/sampledb/drill/reconciler.ts';
import { JOBS, NAMESPACES, PODS, SAMPLEDB_DRILLS, SAMPLEDBS } from '../../../../src/sampledb/resources.ts';
import { sampleDb } from '../../../support/sampledb.ts';
import { Crash, FakeApiserver } from '../support/fake-apiserver.ts';
import { finishedJob, finishedJobPod } from '../support/job-pod.ts';

const REQ = { namespace: 'shop', name: 'failover' };
const rc = () => ({ signal: new AbortController().signal, log: silentLogger, reconcileID: 't', retries: 0 });
const LABELS = {
  'app.kubernetes.io/name': 'sampledb',
  'app.kubernetes.io/instance': 'orders',
  'app.kubernetes.io/component': 'database',
  'app.kubernetes.io/managed-by': 'sampledb-operator',
};

const pod = (name: string, uid: string, ready: boolean): V1Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'shop', uid, labels: LABELS },
  status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});

function dbStatus(primary: string, ready: boolean, primaryAvailable: boolean): SampleDbObject['status'] {
  const at = '2026-02-01T00:00:00Z';
  const c = (type: string, ok: boolean) => ({
    type,
    status: ok ? ('True' as const) : ('False' as const),
    reason: ok ? 'Fine' : 'Down',
    message: '',
    lastTransitionTime: at,
  });
  return {
    conditions: [c('Ready', ready), c('PrimaryAvailable', primaryAvailable), c('ReplicasReady', ready)],
    replication: {
      primary,
      term: 1,
      instances: [
        { name: 'orders-0', role: primary === 'orders-0' ? 'primary' : 'replica', ready },
        { name: 'orders-1', role: primary === 'orders-1' ? 'primary' : 'replica', ready: true },
      ],
    },
  } as SampleDbObject['status'];
}

function world(): FakeApiserver {
  const api = new FakeApiserver();
  api.put(NAMESPACES, {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'shop', namespace: '', labels: { 'sampledb.io/drills': 'allowed' } },
  });
  api.put(SAMPLEDBS, { ...sampleDb({ instances: 2 }), status: dbStatus('orders-0', true, true) });
  api.put(PODS, pod('orders-0', 'original-0', true));
  api.put(PODS, pod('orders-1', 'original-1', true));
  api.put(SAMPLEDB_DRILLS, {
    apiVersion: 'sampledb.io/v1alpha1',
    kind: 'SampleDBDrill',
    metadata: { name: 'failover', namespace: 'shop', generation: 1 },
    spec: { sampleDB: { name: 'orders' }, kind: 'kill-primary', historyLimit: 5 },
  } as SampleDbDrillObject);
  return api;
}

/** One tick of everything that is not the operator: Jobs run, the StatefulSet re-creates, the failover shows. */
function tick(api: FakeApiserver, now: Date): void {
  for (const job of api.list(JOBS) as V1Job[]) {
    if (job.status?.succeeded) continue;
    const probe = job.metadata?.name?.endsWith('-probe');
    const message = probe
      ? JSON.stringify({
          writableAtMs: now.getTime(),
          failedWrites: 7,
          canaryPresent: true,
          replicasExpected: 1,
          replicasCaughtUp: 1,
          caughtUpAtMs: now.getTime() + 300,
        })
      : '{"canary":true}';
    const stored = api.put(JOBS, finishedJob(job, 0, now));
    const finished = finishedJobPod(stored, 0, message, now);
    api.put(PODS, { ...finished, status: { ...finished.status, phase: 'Succeeded' } });
  }
  const zero = api.get(PODS, 'shop', 'orders-0');
  if (!zero) {
    api.note('statefulset re-creates orders-0');
    api.put(PODS, pod('orders-0', 'recreated-0', false));
    const db = api.get(SAMPLEDBS, 'shop', 'orders') as SampleDbObject;
    api.put(SAMPLEDBS, { ...db, status: dbStatus('orders-0', false, false) });
  } else if (
    zero.metadata?.uid === 'recreated-0' &&
    api.list(JOBS).some((j) => j.metadata.name?.endsWith('-probe'))
  ) {
    api.put(PODS, pod('orders-0', 'recreated-0', true));
    const db = api.get(SAMPLEDBS, 'shop', 'orders') as SampleDbObject;
    api.put(SAMPLEDBS, { ...db, status: dbStatus('orders-1', true, true) });
  }
}

async function drive(api: FakeApiserver): Promise<{ drill: SampleDbDrillObject; crashes: number }> {
  let clock = Date.parse('2026-02-01T00:00:00Z');
  let crashes = 0;
  for (let i = 0; i < 60; i++) {
    const now = () => new Date(clock);
    const { client, view } = api.operator(now);
    const reconciler = new SampleDbDrillReconciler({
      client,
      view,
      now,
      operator: { leaderElection: true, identity: 'operator-a', namespace: 'sampledb-system' },
    });
    try {
      await reconciler.reconcile(REQ, rc());
    } catch (err) {
      if (!(err instanceof Crash)) throw err;
      crashes++;
    }
    clock += 1000;
    tick(api, new Date(clock));
    const drill = api.get(SAMPLEDB_DRILLS, 'shop', 'failover') as SampleDbDrillObject;
    if (drill.status?.runs?.[0] && !drill.status.current) return { drill, crashes };
  }
  throw new Error(`no run finished: ${JSON.stringify(api.get(SAMPLEDB_DRILLS, 'shop', 'failover')?.status)}`);
}

describe('drill controller on the fake apiserver', () => {
  it('runs kill-primary end to end: canary, the primary deleted by uid, probe, measured, Jobs expired', async () => {
    const api = world();
    const { drill } = await drive(api);
    const run = drill.status?.runs?.[0];
    assert.equal(run?.result, 'Succeeded', JSON.stringify(run));
    assert.equal(run?.target, 'orders-0');
    assert.equal(run?.canaryPresent, true);
    assert.equal(run?.failedWrites, 7);
    assert.ok((run?.detectSeconds ?? -1) >= 0);
    assert.ok((run?.writableSeconds ?? 0) > 0);
    assert.equal(run?.replicationSeconds, 0.3);
    assert.equal(drill.status?.phase, 'Succeeded');
    assert.equal(api.get(PODS, 'shop', 'orders-0')?.metadata.uid, 'recreated-0');
    assert.deepEqual(
      api.list(JOBS).map((j) => (j as V1Job).spec?.ttlSecondsAfterFinished),
      [0, 0],
      'the run’s Jobs are handed to the TTL controller once their results are in the status',
    );
    const reasons = api.events.map((e) => (e as { reason?: string }).reason);
    for (const r of ['DrillStarted', 'DrillFaultInjected', 'DrillFaultDetected', 'DrillSucceeded'])
      assert.ok(reasons.includes(r), `${r} in ${reasons.join(', ')}`);
    // The fault is recorded before it is sent.
    const writes = api.log.filter((w) => w.verb !== 'note').map((w) => `${w.verb} ${w.plural}/${w.name}`);
    const deletion = writes.indexOf('delete pods/orders-0');
    assert.ok(deletion > 0 && writes[deletion - 1] === 'status sampledbdrills/failover', writes.join('\n'));
  });

  it('an operator killed at any write resumes the run: same target, same outcome, the new pod never hit', async () => {
    const clean = world();
    await drive(clean);
    const total = clean.log.filter((w) => w.verb !== 'note').length;
    for (let n = 1; n <= total; n++) {
      const api = world();
      api.crashAt = n;
      const { drill, crashes } = await drive(api);
      const run = drill.status?.runs?.[0];
      assert.equal(crashes, 1, `crash ${n}`);
      assert.equal(run?.result, 'Succeeded', `crash at write ${n}: ${JSON.stringify(run)}`);
      assert.equal(run?.target, 'orders-0', `crash ${n}`);
      assert.equal(drill.status?.runCount, 1, `crash ${n}: one run`);
      assert.equal(api.get(PODS, 'shop', 'orders-0')?.metadata.uid, 'recreated-0', `crash ${n}`);
    }
  });
});
