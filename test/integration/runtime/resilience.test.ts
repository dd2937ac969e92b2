import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ControlPlane, pollUntil } from '../../../src/envtest/index.ts';
import { CONFIG_MAPS } from '../../../src/runtime/kinds.ts';
import { isEffect, isReconcile, type LogLine, OperatorProcess, TestKube } from './helpers.ts';

// Real kube-apiserver + etcd (src/envtest); the operator under test is the fixture in ./fixtures, run as a child.

let plane: ControlPlane;

before(async () => {
  plane = await ControlPlane.start();
});

after(async () => {
  await plane?.stop();
});

async function setup(
  namespace: string,
  extra: Partial<ConstructorParameters<typeof OperatorProcess>[0]> = {},
) {
  const kube = new TestKube(plane, namespace);
  await kube.createNamespace();
  const start = () =>
    new OperatorProcess({
      kubeconfig: plane.kubeconfigPath,
      namespace,
      identity: `op-${namespace}`,
      ...extra,
    });
  return { kube, start };
}

/**
 * Resolves once `key` has been reconciled after its output's last write: the watch event of that write brings one
 * more (no-op) reconcile, and until it has run the count of reconciles is not final.
 */
async function settled(op: OperatorProcess, namespace: string, name: string): Promise<void> {
  const lastWrite = op.lines.findLastIndex((l) => isEffect(l) && l.key === `${namespace}/${name}-out`);
  await op.waitForLog(
    `${name} reconciled after its last write`,
    isReconcile(`${namespace}/${name}`),
    30_000,
    lastWrite + 1,
  );
}

/** Side effects that repeat an earlier one exactly (same key, same data): a stale read led to a second write. */
function duplicateEffects(lines: LogLine[]): string[] {
  const seen = new Set<string>();
  const dups: string[] = [];
  for (const l of lines.filter(isEffect)) {
    const id = `${l.effect} ${l.key} ${JSON.stringify(l.data ?? null)}`;
    if (seen.has(id)) dups.push(id);
    seen.add(id);
  }
  return dups;
}

describe('runtime on a real apiserver', { timeout: 600_000 }, () => {
  it('reconciles every change made around several apiserver restarts, without duplicate side effects', async () => {
    const { kube, start } = await setup('restarts');
    const names = Array.from({ length: 12 }, (_, i) => `s${i}`);
    for (const n of names) await kube.putSource(n, { round: '0' });
    const op = start();
    try {
      await kube.waitConverged(30_000);
      const live = new Set(names);
      for (let round = 1; round <= 3; round++) {
        // Changes just before the outage: the watch may or may not have delivered them when it breaks.
        for (const n of [...live].slice(0, 4))
          await kube.putSource(n, { round: String(round), when: 'before' });
        const victim = [...live].at(-1)!;
        await kube.deleteSource(victim);
        live.delete(victim);
        await plane.restartApiserver();
        // Changes right after: the operator is probably still backing off or resuming.
        for (const n of [...live].slice(2, 6))
          await kube.putSource(n, { round: String(round), when: 'after' });
        const born = `new${round}`;
        await kube.putSource(born, { round: String(round) });
        live.add(born);
      }
      await kube.waitConverged(60_000);
      assert.deepEqual(duplicateEffects(op.lines), []);
      const deletes = op.lines.filter((l) => isEffect(l) && l.effect === 'delete').map((l) => l.key);
      // Convergence proved every removed source's output is gone. A delete whose response was lost in the restart
      // is retried, finds 404 and logs nothing, so the log holds at most one delete per removed source, never more.
      assert.ok(
        deletes.length <= 3 && new Set(deletes).size === deletes.length,
        `deletes: ${deletes.join(', ')}`,
      );
      assert.equal(op.running, true);
      op.kill('SIGTERM');
      assert.deepEqual(await op.exited, { code: 0, signal: null });
    } finally {
      await op.stop();
      await kube.close();
    }
  });

  it('detects a hung watch (SIGSTOPped apiserver), fails /readyz meanwhile, and recovers', async () => {
    // The server closes each watch after 3 s, so 6 s of silence can only mean a hung connection.
    const { kube, start } = await setup('stall', {
      timeoutSeconds: 3,
      stallTimeoutMs: 6_000,
      requestTimeoutMs: 6_000,
    });
    await kube.putSource('a', { v: '1' });
    const op = start();
    try {
      await kube.waitConverged(30_000);
      assert.equal((await op.readyz()).status, 200);
      const mark = op.lines.length;
      plane.pauseApiserver();
      let notReady: { status: number; body: string };
      try {
        await op.waitForLog('stall detected', (l) => l.msg === 'watch stalled; restarting', 20_000, mark);
        notReady = await op.readyz();
      } finally {
        plane.resumeApiserver();
      }
      assert.equal(notReady.status, 500);
      assert.match(notReady.body, /\[-\]watches-live failed: stalled: configmaps/);
      await pollUntil(
        'readyz ok again',
        async () => ((await op.readyz()).status === 200 ? true : undefined),
        {
          timeoutMs: 30_000,
          intervalMs: 200,
        },
      );
      await kube.putSource('a', { v: '2' });
      await kube.waitConverged(30_000);
    } finally {
      await op.stop();
      await kube.close();
    }
  });

  it('coalesces 1,000 rapid updates of one object into a bounded number of reconciles', async () => {
    const { kube, start } = await setup('burst');
    await kube.putSource('hot', { i: '0' });
    const op = start();
    try {
      await kube.waitConverged(30_000);
      const before = op.count(isReconcile('burst/hot'));
      const updates = 1000;
      let next = 1;
      const writer = async () => {
        while (next <= updates) {
          const i = next++;
          await kube.http.patch(
            CONFIG_MAPS,
            { namespace: 'burst', name: 'hot' },
            { data: { i: String(i) } },
            'merge',
          );
        }
      };
      await Promise.all(Array.from({ length: 16 }, writer));
      // Concurrent writers: the final value is whichever patch landed last, so compare with the source.
      await kube.waitConverged(60_000);
      await settled(op, 'burst', 'hot');
      const reconciles = op.count(isReconcile('burst/hot')) - before;
      const applies = op.count((l) => isEffect(l) && l.key === 'burst/hot-out') - 1;
      console.log(`# 1000 rapid updates -> ${reconciles} reconciles, ${applies} writes of the output`);
      assert.ok(reconciles >= 1);
      // At most one reconcile per delivered change (watch events for the source and for our own output writes).
      assert.ok(reconciles <= updates + applies + 1, `${reconciles} reconciles for ${updates} updates`);
      assert.ok(applies <= reconciles);
    } finally {
      await op.stop();
      await kube.close();
    }
  });

  it('makes zero writes over two resync periods once converged', async () => {
    const resyncPeriodMs = 3_000;
    const { kube, start } = await setup('quiet', { resyncPeriodMs });
    for (let i = 0; i < 10; i++) await kube.putSource(`q${i}`, { v: String(i) });
    const op = start();
    try {
      await kube.waitConverged(30_000);
      for (let i = 0; i < 10; i++) await settled(op, 'quiet', `q${i}`);
      const reconcilesBefore = op.count((l) => l.msg === 'reconcile');
      const writesBefore = await kube.mutatingRequests(['configmaps', 'events']);
      // Two resyncs of the 10 sources: the window ends when they have happened, not after a guessed time.
      await pollUntil(
        'two resync periods',
        async () => (op.count((l) => l.msg === 'reconcile') - reconcilesBefore >= 20 ? true : undefined),
        { timeoutMs: 10 * resyncPeriodMs, intervalMs: 100 },
      );
      const writesAfter = await kube.mutatingRequests(['configmaps', 'events']);
      const resynced = op.count((l) => l.msg === 'reconcile') - reconcilesBefore;
      console.log(`# quiet window: ${resynced} resync reconciles, ${writesAfter - writesBefore} writes`);
      assert.ok(resynced >= 20, `two resyncs of 10 sources expected, saw ${resynced} reconciles`);
      assert.equal(writesAfter - writesBefore, 0);
    } finally {
      await op.stop();
      await kube.close();
    }
  });
});
