// The drill's status and metrics from a finished run: history newest first and cut to spec.historyLimit, the phase of
// a one-off drill is its result while a scheduled one goes back to Scheduled, a refused scheduled slot is taken, and
// the gauges carry the newest run's measurements.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DrillRun, SampleDbDrillObject } from '../../../../src/api/index.ts';
import { DRILL_METRICS, drillSamples } from '../../../../src/sampledb/drill/metrics.ts';
import { drillStatus } from '../../../../src/sampledb/drill/status.ts';

const NOW = new Date('2026-12-04T03:00:00Z');
const run = (n: number, more: Partial<DrillRun> = {}): DrillRun => ({
  run: n,
  result: 'Succeeded',
  reason: 'Recovered',
  message: 'ok',
  startedAt: '2026-12-04T02:59:00Z',
  finishedAt: '2026-12-04T03:00:00Z',
  ...more,
});
const drill = (
  spec: Partial<SampleDbDrillObject['spec']> = {},
  runs: DrillRun[] = [],
): SampleDbDrillObject => ({
  apiVersion: 'sampledb.io/v1alpha1',
  kind: 'SampleDBDrill',
  metadata: { name: 'd', namespace: 'shop', generation: 1 },
  spec: { sampleDB: { name: 'orders' }, kind: 'kill-primary', ...spec },
  status: { runs, runCount: runs.length },
});

describe('drillStatus', () => {
  it('keeps the newest runs first, at most historyLimit, and a one-off drill takes its result as phase', () => {
    const previous = [run(3), run(2), run(1)];
    const status = drillStatus(
      drill({ historyLimit: 2 }, previous),
      { kind: 'finish', run: run(4) },
      NOW,
      undefined,
    );
    assert.deepEqual(
      status.runs?.map((r) => r.run),
      [4, 3],
    );
    assert.equal(status.phase, 'Succeeded');
    assert.equal(status.runCount, 4);
    assert.equal(status.current, undefined);
    const condition = status.conditions?.find((c) => c.type === 'LastRunSucceeded');
    assert.equal(condition?.status, 'True');
  });

  it('a scheduled drill is Scheduled again after a run, with the refused slot taken and the next one shown', () => {
    const refused = run(1, { result: 'Refused', reason: 'SampleDBNotReady' });
    const next = new Date('2026-12-11T04:00:00Z');
    const status = drillStatus(
      drill({ schedule: '0 4 * * 4' }),
      { kind: 'finish', run: refused, slot: '2026-12-04T04:00:00Z' },
      NOW,
      next,
    );
    assert.equal(status.phase, 'Scheduled');
    assert.equal(status.lastSlot, '2026-12-04T04:00:00Z');
    assert.equal(status.nextRunAt, '2026-12-11T04:00:00Z');
    assert.equal(status.conditions?.find((c) => c.type === 'LastRunSucceeded')?.reason, 'SampleDBNotReady');
  });
});

describe('drill metrics', () => {
  it('exports the newest run: success and its measurements, and the run count', () => {
    const samples = drillSamples([
      drill({}, [run(2, { writableSeconds: 3.4, detectSeconds: 1.2 }), run(1, { result: 'Failed' })]),
    ]);
    const value = (name: string) => samples.find((s) => s.name === name)?.value;
    assert.equal(value(DRILL_METRICS.lastSuccess), 1);
    assert.equal(value(DRILL_METRICS.writableSeconds), 3.4);
    assert.equal(value(DRILL_METRICS.detectSeconds), 1.2);
    assert.equal(value(DRILL_METRICS.restoreSeconds), undefined);
    assert.equal(value(DRILL_METRICS.runs), 2);
    assert.deepEqual(samples[0]?.labels, {
      namespace: 'shop',
      sampledbdrill: 'd',
      sampledb: 'orders',
      kind: 'kill-primary',
    });
  });
});
