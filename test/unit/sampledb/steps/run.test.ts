// runSteps and the Writer's declared modes, on a fake apiserver (../support/fake-apiserver.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger } from '../../../../src/runtime/index.ts';
import { resolveInstance } from '../../../../src/sampledb/instance.ts';
import { CONFIGMAPS } from '../../../../src/sampledb/resources.ts';
import type { Observation, Step } from '../../../../src/sampledb/steps/context.ts';
import { runSteps } from '../../../../src/sampledb/steps/run.ts';
import { Writer } from '../../../../src/sampledb/writer.ts';
import { sampleDb } from '../../../support/sampledb.ts';
import { FakeApiserver } from '../support/fake-apiserver.ts';

function context(api: FakeApiserver, signal = new AbortController().signal) {
  const { client, view, now } = api.operator();
  return {
    instance: resolveInstance(sampleDb()),
    view,
    write: new Writer(client),
    log: silentLogger,
    signal,
    now,
  };
}

const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'shop' } };

describe('runSteps (fake apiserver)', () => {
  it('hands each step what the earlier ones observed, collects conditions, and stops at the first halt', async () => {
    const seen: (keyof Observation)[][] = [];
    const record = (name: string, outcome: Awaited<ReturnType<Step['run']>>): Step => ({
      name,
      writes: [],
      async run({ observed }) {
        seen.push(Object.keys(observed) as (keyof Observation)[]);
        return outcome;
      },
    });
    const ready = { type: 'Extra', status: 'True' as const, reason: 'R', message: 'm' };
    const run = await runSteps(
      [
        record('a', { observed: { specErrors: [] } }),
        record('b', { conditions: [ready], requeueAfterMs: 50 }),
        record('c', { observed: { initJobPods: [] }, halt: true, requeueAfterMs: 70 }),
        record('d', { observed: { pod: {} } }),
      ],
      context(new FakeApiserver()),
      {},
    );
    assert.deepEqual(seen, [[], ['specErrors'], ['specErrors']]);
    assert.deepEqual(Object.keys(run.observed).sort(), ['initJobPods', 'specErrors']);
    assert.deepEqual(run.conditions, [ready]);
    assert.equal(run.requeueAfterMs, 50);
    assert.equal(run.haltedAt, 'c');
    assert.equal(run.aborted, false);
  });

  it('gives a step a Writer that refuses any mode the step did not declare', async () => {
    const api = new FakeApiserver();
    const sneaky: Step = {
      name: 'sneaky',
      writes: ['create-once'],
      async run({ write }) {
        await write.apply(CONFIGMAPS, configMap);
        return undefined;
      },
    };
    await assert.rejects(runSteps([sneaky], context(api), {}), /write mode "apply" is not declared/);
    assert.deepEqual(api.log, []);
  });

  it('create-once treats AlreadyExists as done and never overwrites', async () => {
    const api = new FakeApiserver();
    api.put(CONFIGMAPS, { ...configMap, data: { mine: 'yes' } });
    const { write } = context(api);
    assert.equal(
      await write.only(['create-once']).createOnce(CONFIGMAPS, { ...configMap, data: {} }),
      undefined,
    );
    assert.deepEqual(api.get(CONFIGMAPS, 'shop', 'x')?.data, { mine: 'yes' });
  });
});
