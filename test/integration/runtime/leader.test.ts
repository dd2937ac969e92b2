import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ControlPlane } from '../../../src/envtest/index.ts';
import { type LogLine, OperatorProcess, TestKube } from './helpers.ts';

// Real kube-apiserver + etcd; operators are child processes electing on one Lease (defaults 15 s / 10 s / 2 s).

let plane: ControlPlane;

before(async () => {
  plane = await ControlPlane.start();
});

after(async () => {
  await plane?.stop();
});

const becameLeader = (l: LogLine) => l.msg === 'became leader';
const reconciled = (l: LogLine) => l.msg === 'reconcile';
const timeOf = (l: LogLine) => Date.parse(String(l.time));

describe('leader election across processes', { timeout: 300_000 }, () => {
  it('runs exactly one reconciler; takes over after SIGKILL within lease + 2 s and after SIGTERM within 2 s', async () => {
    const namespace = 'election';
    const kube = new TestKube(plane, namespace);
    await kube.createNamespace();
    const start = (identity: string) =>
      new OperatorProcess({
        kubeconfig: plane.kubeconfigPath,
        namespace,
        identity,
        leaseName: 'runtime-test',
      });
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
});
