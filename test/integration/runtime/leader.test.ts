import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type AuditEvent, ControlPlane, pollUntil, readAuditLog } from '../../../src/envtest/index.ts';
import { type LogLine, OperatorProcess, TestKube } from './helpers.ts';

// Real kube-apiserver + etcd (with its audit log); operators are child processes electing on one Lease (defaults
// 15 s / 10 s / 2 s), each sending the User-Agent runtime-test/<identity>.

let plane: ControlPlane;

before(async () => {
  plane = await ControlPlane.start({ auditLog: true });
});

after(async () => {
  await plane?.stop();
});

const becameLeader = (l: LogLine) => l.msg === 'became leader';
const reconciled = (l: LogLine) => l.msg === 'reconcile';
const timeOf = (l: LogLine) => Date.parse(String(l.time));
const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
const slowEffect = (l: LogLine) => l.msg === 'effect' && l.key === 'fencing/slow-out';
const receivedAt = (e: AuditEvent) => Date.parse(e.requestReceivedTimestamp ?? e.stageTimestamp ?? '');
const byAgent = (agent: string) => (e: AuditEvent) => e.userAgent === agent && e.stage === 'ResponseComplete';
const candidates = (namespace: string, leaseName: string) => (identity: string) =>
  new OperatorProcess({ kubeconfig: plane.kubeconfigPath, namespace, identity, leaseName });

describe('leader election across processes', { timeout: 300_000 }, () => {
  it('runs exactly one reconciler; takes over after SIGKILL within lease + 2 s and after SIGTERM within 2 s', async () => {
    const namespace = 'election';
    const kube = new TestKube(plane, namespace);
    await kube.createNamespace();
    const start = candidates(namespace, 'runtime-test');
    const a = start('a');
    let b: OperatorProcess | undefined;
    let c: OperatorProcess | undefined;
    try {
      await a.waitForLog('a leads', becameLeader, 30_000);
      b = start('b');
      await b.waitForLog('b synced', (l) => l.msg === 'cache synced', 30_000);
      for (let i = 0; i < 5; i++) await kube.putSource(`s${i}`, { v: '1' });
      await kube.waitConverged(30_000);
      assert.ok(a.count(reconciled) > 0);
      assert.equal(b.count(reconciled), 0, 'the standby must not reconcile');
      assert.equal(b.count(becameLeader), 0);

      const killedAt = Date.now();
      a.kill('SIGKILL');
      const bLeads = await b.waitForLog('b takes over', becameLeader, 30_000);
      const afterKill = timeOf(bLeads) - killedAt;
      console.log(`# takeover after SIGKILL: ${afterKill} ms (bound 17000)`);
      assert.ok(afterKill <= 17_000, `takeover took ${afterKill} ms`);

      c = start('c');
      await c.waitForLog('c synced', (l) => l.msg === 'cache synced', 30_000);
      await kube.putSource('s0', { v: '2' });
      await kube.waitConverged(30_000);
      assert.equal(c.count(reconciled), 0, 'the new standby must not reconcile');

      const terminatedAt = Date.now();
      b.kill('SIGTERM');
      const cLeads = await c.waitForLog('c takes over', becameLeader, 30_000);
      const afterTerm = timeOf(cLeads) - terminatedAt;
      console.log(`# takeover after SIGTERM: ${afterTerm} ms (bound 2000)`);
      assert.deepEqual(await b.exited, { code: 0, signal: null });
      assert.ok(afterTerm <= 2_000, `takeover took ${afterTerm} ms`);
      const firstReconcileOfC = c.find(reconciled);
      if (firstReconcileOfC) assert.ok(timeOf(firstReconcileOfC) >= timeOf(cLeads));

      await kube.putSource('s1', { v: '3' });
      await kube.waitConverged(30_000);
      assert.ok(c.count(reconciled) > 0, 'the new leader reconciles');
    } finally {
      await Promise.all([a.stop(), b?.stop(), c?.stop()]);
      await kube.close();
    }
  });

  // SIGSTOP the leader past its lease, let the standby take over, SIGCONT the old leader with work in flight that
  // ignores its abort signal (the fixture's `slow` source): the apiserver's audit log, telling the processes apart
  // by User-Agent, must show no write from the old leader received after the takeover.
  it('the old leader sends no write after the standby took over, though its in-flight work keeps trying', async () => {
    const namespace = 'fencing';
    const kube = new TestKube(plane, namespace);
    await kube.createNamespace();
    const start = candidates(namespace, 'fencing-test');
    const a = start('old');
    let b: OperatorProcess | undefined;
    try {
      await a.waitForLog('a leads', becameLeader, 30_000);
      b = start('new');
      await b.waitForLog('b synced', (l) => l.msg === 'cache synced', 30_000);
      await kube.putSource('slow', { slow: 'true' });
      // a is inside the slow reconcile, writing every 100 ms.
      await pollUntil('a writes in flight', async () => (a.count(slowEffect) >= 5 ? true : undefined), {
        timeoutMs: 30_000,
        intervalMs: 50,
      });

      a.kill('SIGSTOP');
      const bLeads = await b.waitForLog('b takes over', becameLeader, 40_000);
      await b.waitForLog('b writes', slowEffect, 30_000);
      const resumeFrom = a.lines.length;
      a.kill('SIGCONT');
      // The in-flight work resumes and writes at once. The old leader notices its loss and stops its workers (after
      // waiting up to the renew deadline for the work, which ignores its signal).
      await a.waitForLog('a stops its workers', (l) => l.msg === 'workers stopped', 30_000, resumeFrom);

      // The audit log is written before the answer (blocking mode): what was answered is in the file.
      const events = await readAuditLog(plane.auditLogPath!);
      const takeover = events.find(
        (e) =>
          byAgent('runtime-test/new')(e) &&
          e.objectRef?.resource === 'leases' &&
          WRITE_VERBS.has(e.verb) &&
          (e.responseStatus?.code ?? 0) < 300,
      );
      assert.ok(takeover, 'the audit log shows b writing the Lease');
      const aWrites = events.filter((e) => byAgent('runtime-test/old')(e) && WRITE_VERBS.has(e.verb));
      assert.ok(
        aWrites.some((e) => e.objectRef?.name === 'slow-out'),
        'the audit log tells the processes apart: a wrote slow-out before it was stopped',
      );
      const late = aWrites.filter((e) => receivedAt(e) >= receivedAt(takeover));
      assert.deepEqual(
        late.map((e) => `${e.requestReceivedTimestamp} ${e.verb} ${e.requestURI} ${e.responseStatus?.code}`),
        [],
        `writes from the old leader after b took over at ${takeover.requestReceivedTimestamp}`,
      );
      assert.ok(
        events.some(
          (e) =>
            byAgent('runtime-test/new')(e) &&
            e.objectRef?.name === 'slow-out' &&
            receivedAt(e) > receivedAt(takeover),
        ),
        'the new leader carries on with the work',
      );
      // Each write was refused before it was sent: by the write fence.
      const fenced = a.find(
        (l) => l.msg === 'reconcile failed' && String(l.err).includes('WriteFencedError'),
        resumeFrom,
      );
      assert.ok(fenced, 'the old leader logs its refused write');
      console.log(`# b led at ${bLeads.time}; a fenced: ${String(fenced.err).slice(0, 200)}`);
    } finally {
      await Promise.all([a.stop(), b?.stop()]);
      await kube.close();
    }
  });
});
