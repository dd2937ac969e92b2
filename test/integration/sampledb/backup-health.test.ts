// BackupHealthy on a real apiserver with the operator as a process: False when a scheduled backup is overdue (at the
// deadline, not at the next unrelated reconcile) or failed, True again after a completed backup. The FakeKubelet
// runs the backup pods: the real backup script against a real PostgreSQL, a failure, or held until the test says.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { SampleDbBackupObject, SampleDbObject } from '../../../src/api/index.ts';
import { EVENTS, type KubeObject } from '../../../src/runtime/index.ts';
import { Gate } from '../support/kubelet.ts';
import type { OperatorProcess } from '../support/operator.ts';
import { runScriptPod } from '../support/script-pod.ts';
import { BACKUPS, type E2eEnv, eventually, getOrUndefined, SAMPLEDBS, startE2eEnv } from './e2e-env.ts';

type Db = SampleDbObject & KubeObject;
type Backup = SampleDbBackupObject & KubeObject;
type Condition = {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string;
};
type Event = KubeObject & { reason?: string; note?: string; type?: string; regarding?: { name?: string } };

let env: E2eEnv;
let operator: OperatorProcess;
/**
 * Per namespace: what the FakeKubelet does with the pods of the n-th backup Job there (0-based); a Job retries a
 * failed pod, so a failing backup fails every pod of its Job.
 */
const plans = new Map<string, (n: number) => 'run' | 'fail' | Gate>();
const jobsSeen = new Map<string, string[]>();
const gates: Gate[] = [];

before(async () => {
  env = await startE2eEnv();
  env.pg.query('CREATE DATABASE app');
  env.pg.query('CREATE TABLE orders (id int PRIMARY KEY); INSERT INTO orders VALUES (1)', 'app');
  env.kubelet.on(
    (pod) => pod.metadata.labels?.['app.kubernetes.io/component'] === 'backup',
    async (pod, kubelet) => {
      const ns = pod.metadata.namespace ?? '';
      const job =
        pod.metadata.labels?.['batch.kubernetes.io/job-name'] ?? pod.metadata.labels?.['job-name'] ?? '';
      const seen = jobsSeen.get(ns) ?? [];
      if (!seen.includes(job)) seen.push(job);
      jobsSeen.set(ns, seen);
      const n = seen.indexOf(job);
      const plan = plans.get(ns)?.(n) ?? 'run';
      if (plan === 'fail') return kubelet.finish(pod, 1, 'pg_dump: error: connection to server failed');
      if (plan instanceof Gate) await plan.wait();
      const result = await runScriptPod(pod, kubelet.http, env.pg, env.volumesDir);
      await kubelet.finish(pod, result.code ?? 1, result.message);
    },
  );
  operator = env.startOperator();
});

after(async () => {
  for (const gate of gates) gate.open();
  await env?.stop();
});

async function createDb(ns: string): Promise<void> {
  await env.http.create(SAMPLEDBS, {
    apiVersion: 'sampledb.io/v1alpha1',
    kind: 'SampleDB',
    metadata: { name: 'orders', namespace: ns },
    spec: { version: '16', storage: { size: '1Gi' }, backup: { schedule: '* * * * *' } },
  } as Db);
}

const healthOf = async (ns: string) =>
  (
    (await getOrUndefined<Db>(env.http, SAMPLEDBS, ns, 'orders'))?.status?.conditions as
      | Condition[]
      | undefined
  )?.find((c) => c.type === 'BackupHealthy');

/** The Event of this reason on the SampleDB itself (not on one of its backups). */
const sampleDbEvent = (ns: string, reason: string) => async () =>
  (await env.http.list<Event>(EVENTS, { namespace: ns })).items.find(
    (e) =>
      e.reason === reason &&
      e.regarding?.name === 'orders' &&
      (e.regarding as { kind?: string }).kind === 'SampleDB',
  );

const completedAt = async (ns: string) =>
  (await env.http.list<Backup>(BACKUPS, { namespace: ns })).items
    .map((b) => (b.status?.phase === 'Completed' ? b.status.completedAt : undefined))
    .filter((t): t is string => !!t)
    .sort()
    .at(-1);

describe('BackupHealthy (operator process, ServiceAccount RBAC)', { concurrency: true }, () => {
  it('turns False (NoRecentBackup) at twice the interval after the last backup, with Events, True again after one completes', async () => {
    const ns = await env.namespace('overdue');
    const held = new Gate();
    gates.push(held);
    plans.set(ns, (n) => (n === 0 ? 'run' : held));
    await createDb(ns);

    // Every minute: the first slot's backup completes, the next ones wait behind a held pod.
    const last = await eventually(
      'the first scheduled backup Completed',
      () => completedAt(ns),
      operator,
      110_000,
    );
    const deadline = Date.parse(last) + 2 * 60_000;
    const healthy = await healthOf(ns);
    assert.equal(healthy?.status, 'True', JSON.stringify(healthy));

    // Reported at the deadline. The requeue that makes it so is pinned by the unit tests (backup-health.test.ts):
    // this poll does not tell the fix from its absence, since on the revert the transition also came within 10 s of
    // the deadline in one run (some other reconcile came near it); it checks the condition, message and timing.
    const overdue = await eventually(
      'BackupHealthy False at the overdue deadline',
      async () => {
        const c = await healthOf(ns);
        return c?.status === 'False' ? c : undefined;
      },
      operator,
      Math.max(10_000, deadline - Date.now() + 20_000),
    );
    assert.equal(overdue.reason, 'NoRecentBackup');
    assert.match(overdue.message, /No backup completed in the last 2m \(twice the schedule's interval\)/);
    assert.ok(overdue.message.includes(new Date(Date.parse(last)).toISOString()), overdue.message);
    // In whole seconds on the apiserver's clock: at the deadline, not at the next minute's reconcile.
    assert.ok(
      Date.parse(overdue.lastTransitionTime) - deadline <= 10_000,
      `${overdue.lastTransitionTime} ${last}`,
    );
    // Heard without reading the status: a Warning Event on the SampleDB with the reason and message.
    const warned = await eventually(
      'a BackupsUnhealthy Event on the SampleDB',
      sampleDbEvent(ns, 'BackupsUnhealthy'),
      operator,
    );
    assert.equal(warned.type, 'Warning');
    assert.equal(warned.note, `NoRecentBackup: ${overdue.message}`);

    held.open();
    const again = await eventually(
      'BackupHealthy True after the held backup completed',
      async () => {
        const c = await healthOf(ns);
        return c?.status === 'True' ? c : undefined;
      },
      operator,
      60_000,
    );
    assert.equal(again.reason, 'BackupsHealthy');
    assert.match(again.message, /^The last backup completed at /);
    const recovered = await eventually(
      'a BackupsHealthyAgain Event on the SampleDB',
      sampleDbEvent(ns, 'BackupsHealthyAgain'),
      operator,
    );
    assert.equal(recovered.type, 'Normal');
  });

  it('turns False (LatestBackupFailed) with BackupFailed and BackupsUnhealthy Events when a scheduled backup fails, True after the next completes', async () => {
    const ns = await env.namespace('failed');
    plans.set(ns, (n) => (n === 0 ? 'fail' : 'run'));
    await createDb(ns);

    const failed = await eventually(
      'BackupHealthy False: the latest scheduled backup failed',
      async () => {
        const c = await healthOf(ns);
        return c?.status === 'False' ? c : undefined;
      },
      operator,
      110_000,
    );
    assert.equal(failed.reason, 'LatestBackupFailed');
    assert.match(failed.message, /^The latest scheduled backup orders-\d{12} failed: /);
    const name = /backup (orders-\d{12})/.exec(failed.message)?.[1] ?? '';
    const event = await eventually(
      `a BackupFailed Event on ${name}`,
      async () =>
        (await env.http.list<Event>(EVENTS, { namespace: ns })).items.find(
          (e) => e.reason === 'BackupFailed' && e.regarding?.name === name,
        ),
      operator,
    );
    assert.equal(event.type, 'Warning');
    const warned = await eventually(
      'a BackupsUnhealthy Event on the SampleDB',
      sampleDbEvent(ns, 'BackupsUnhealthy'),
      operator,
    );
    assert.equal(warned.type, 'Warning');
    assert.match(
      warned.note ?? '',
      /^LatestBackupFailed: The latest scheduled backup orders-\d{12} failed: /,
    );

    const again = await eventually(
      'BackupHealthy True after the next scheduled backup completed',
      async () => {
        const c = await healthOf(ns);
        return c?.status === 'True' ? c : undefined;
      },
      operator,
      110_000,
    );
    assert.equal(again.reason, 'BackupsHealthy');
  });
});
