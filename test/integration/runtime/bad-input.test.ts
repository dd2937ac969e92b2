import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ControlPlane, pollUntil } from '../../../src/envtest/index.ts';
import type { KubeObject } from '../../../src/runtime/index.ts';
import { EVENTS } from '../../../src/runtime/kinds.ts';
import { isEffect, isReconcile, OperatorProcess, sleep, TestKube } from './helpers.ts';

// A reconciler that throws on a malformed object (the fixture throws on data.poison=true) must not crash the
// process or spin: the key backs off exponentially, the error surfaces as one deduplicated Warning Event, other
// keys keep being served, and fixing the object ends the retries.

const events = EVENTS;
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
      await op.waitForLog('first failure', isReconcile('bad-input/poisoned'), 30_000);
      const windowStart = op.count(isReconcile('bad-input/poisoned'));
      await sleep(4_000);
      const attempts = op.count(isReconcile('bad-input/poisoned')) - windowStart;
      assert.ok(op.running, 'the process is still running');
      // Per-key backoff doubles from 5 ms: a 4 s window holds about a dozen attempts, a hot loop thousands.
      assert.ok(attempts >= 1 && attempts <= 15, `${attempts} attempts in 4 s`);
      console.log(`bad input: ${attempts} reconcile attempts of the poisoned key in a 4 s window`);

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

      // Fixing the object ends the retries.
      await kube.putSource('poisoned', { poison: 'false' });
      await pollUntil(
        'poisoned output after the fix',
        async () => op.find((l) => isEffect(l) && l.key === 'bad-input/poisoned-out'),
        { timeoutMs: 30_000, intervalMs: 50 },
      );
      // Our own write of the output is watched and reconciled once more (a no-op); then it is quiet.
      await sleep(1_000);
      const afterFix = op.count(isReconcile('bad-input/poisoned'));
      await sleep(2_000);
      assert.equal(
        op.count(isReconcile('bad-input/poisoned')),
        afterFix,
        'no more retries once it succeeded',
      );
    } finally {
      await op.stop();
      await kube.close();
    }
  });
});
