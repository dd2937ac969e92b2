import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ControlPlane, pollUntil } from '../../../src/envtest/index.ts';
import type { KubeObject } from '../../../src/runtime/index.ts';
import { EVENTS } from '../../../src/runtime/kinds.ts';
import { isEffect, isReconcile, type LogLine, OperatorProcess, TestKube } from './helpers.ts';

// A reconciler that throws on a malformed object (the fixture throws on data.poison=true) must not crash the
// process or spin: the key backs off exponentially, the error surfaces as one deduplicated Warning Event, other
// keys keep being served, and fixing the object ends the retries.

const events = EVENTS;
const FAILURES = 8;

const isFailure = (object: string) => (l: LogLine) => l.msg === 'reconcile failed' && l.object === object;
interface Event extends KubeObject {
  reason?: string;
  note?: string;
  type?: string;
  regarding?: { name?: string };
  series?: { count: number };
}

let plane: ControlPlane;
before(async () => {
  plane = await ControlPlane.start();
});
after(async () => {
  await plane?.stop();
});

describe('a reconciler that throws on bad input', { timeout: 120_000 }, () => {
  it('backs off, reports the error once as an Event, keeps serving other keys, and recovers', async () => {
    const kube = new TestKube(plane, 'bad-input');
    await kube.createNamespace();
    const op = new OperatorProcess({
      kubeconfig: plane.kubeconfigPath,
      namespace: 'bad-input',
      identity: 'op-bad',
    });
    try {
      await kube.putSource('poisoned', { poison: 'true' });
      await kube.putSource('healthy', { v: '1' });

      // The healthy key converges while the poisoned one fails.
      await pollUntil(
        'healthy output',
        async () => op.find((l) => isEffect(l) && l.key === 'bad-input/healthy-out'),
        { timeoutMs: 30_000, intervalMs: 50 },
      );
      // The per-key backoff, as each failure announces it: doubling from 5 ms (a hot loop would retry at once),
      // and each retry waiting at least as long as announced.
      await pollUntil(
        `${FAILURES} failures`,
        async () => (op.count(isFailure('bad-input/poisoned')) >= FAILURES ? true : undefined),
        { timeoutMs: 30_000, intervalMs: 50 },
      );
      assert.ok(op.running, 'the process is still running');
      const failures = op.lines.filter(isFailure('bad-input/poisoned')).slice(0, FAILURES);
      const delays = failures.map((l) => l.retryInMs as number);
      assert.deepEqual(
        delays,
        delays.map((_, i) => 5 * 2 ** i),
        `retry delays ${delays.join(', ')} ms`,
      );
      const times = failures.map((l) => Date.parse(String(l.time)));
      for (let i = 1; i < FAILURES; i++) {
        const waited = times[i]! - times[i - 1]!;
        // Log timestamps have millisecond resolution, and a line is written just after its retry is scheduled.
        assert.ok(
          waited >= delays[i - 1]! - 2,
          `attempt ${i + 1} came ${waited} ms after a ${delays[i - 1]} ms backoff`,
        );
      }
      console.log(`bad input: retry delays ${delays.join(', ')} ms`);

      const warnings = await pollUntil(
        'ReconcileError event',
        async () => {
          const list = await kube.http.list<Event>(events, { namespace: 'bad-input' });
          const found = list.items.filter(
            (e) => e.reason === 'ReconcileError' && e.regarding?.name === 'poisoned',
          );
          return found.length > 0 ? found : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      assert.equal(warnings.length, 1, 'repeated failures are one Event with a series, not one Event each');
      assert.equal(warnings[0]?.type, 'Warning');
      assert.match(warnings[0]?.note ?? '', /malformed source: poison=true/);

      // Fixing the object ends the retries: the fixed reconcile writes the output, whose watch event brings one
      // more (no-op) reconcile, and the retry the last failure announced is cancelled. Wait past the moment that
      // retry was due, then count.
      const lastFailure = op.lines.filter(isFailure('bad-input/poisoned')).at(-1)!;
      const retryDue = Date.parse(String(lastFailure.time)) + (lastFailure.retryInMs as number);
      await kube.putSource('poisoned', { poison: 'false' });
      const fixed = await pollUntil(
        'poisoned output after the fix',
        async () => {
          const i = op.lines.findIndex((l) => isEffect(l) && l.key === 'bad-input/poisoned-out');
          return i >= 0 ? i : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 50 },
      );
      await op.waitForLog(
        'the no-op reconcile of its own write',
        isReconcile('bad-input/poisoned'),
        30_000,
        fixed + 1,
      );
      await pollUntil(
        'the cancelled retry was due',
        async () => (Date.now() > retryDue + 500 ? true : undefined),
        {
          timeoutMs: 60_000,
          intervalMs: 100,
        },
      );
      const afterFix = op.lines.slice(fixed + 1);
      assert.equal(afterFix.filter(isFailure('bad-input/poisoned')).length, 0, 'no failure once fixed');
      assert.equal(
        afterFix.filter(isReconcile('bad-input/poisoned')).length,
        1,
        'one reconcile after the fix (of its own write), no retry',
      );
    } finally {
      await op.stop();
      await kube.close();
    }
  });
});
