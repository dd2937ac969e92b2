import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { windowState } from '../../../src/sampledb/upgrade/window.ts';

describe('windowState (spec.upgrade.maintenanceWindow)', () => {
  const sundays = { schedule: '0 2 * * SUN', duration: '4h' };
  it('is open without a window', () => {
    assert.deepEqual(windowState(undefined, new Date('2026-12-03T18:00:00Z')), { open: true });
  });
  it('is open from the start for the duration, and says when it opens next otherwise', () => {
    assert.deepEqual(windowState(sundays, new Date('2026-12-06T02:00:00Z')), { open: true });
    assert.deepEqual(windowState(sundays, new Date('2026-12-06T05:59:59Z')), { open: true });
    assert.deepEqual(windowState(sundays, new Date('2026-12-06T06:00:00Z')), {
      open: false,
      opensAt: '2026-12-13T02:00:00.000Z',
    });
    assert.deepEqual(windowState(sundays, new Date('2026-12-03T18:00:00Z')), {
      open: false,
      opensAt: '2026-12-06T02:00:00.000Z',
    });
  });
  it('reads the schedule in its time zone', () => {
    const berlin = { ...sundays, timezone: 'Europe/Berlin' };
    assert.deepEqual(windowState(berlin, new Date('2026-12-06T01:30:00Z')), { open: true });
    assert.equal(windowState(berlin, new Date('2026-12-06T00:30:00Z')).open, false);
  });
});
