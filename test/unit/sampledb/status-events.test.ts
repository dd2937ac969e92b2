import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SampleDbStatus } from '../../../src/api/index.ts';
import { statusEvents } from '../../../src/sampledb/status-events.ts';

const status = (phase: string, ready: string, reason: string, message = ''): SampleDbStatus =>
  ({
    phase,
    endpoint: 'orders.shop.svc:5432',
    conditions: [
      { type: 'Ready', status: ready, reason, message, lastTransitionTime: '2026-01-01T00:00:00Z' },
    ],
  }) as unknown as SampleDbStatus;

describe('statusEvents', () => {
  it('announces becoming Ready once, not a Ready status written again', () => {
    const ready = status('Ready', 'True', 'Ready');
    assert.deepEqual(statusEvents(status('Provisioning', 'False', 'Provisioning'), ready), [
      { type: 'Normal', reason: 'Ready', note: 'Ready at orders.shop.svc:5432.' },
    ]);
    assert.deepEqual(statusEvents(undefined, ready).length, 1);
    assert.deepEqual(statusEvents(ready, ready), []);
  });

  it('announces a failure with its reason and message, again only when the reason changes', () => {
    const initFailed = status('Failed', 'False', 'InitJobFailed', 'BackoffLimitExceeded: syntax error');
    assert.deepEqual(statusEvents(status('Provisioning', 'False', 'Provisioning'), initFailed), [
      { type: 'Warning', reason: 'Failed', note: 'InitJobFailed: BackoffLimitExceeded: syntax error' },
    ]);
    assert.deepEqual(statusEvents(initFailed, initFailed), []);
    const other = status('Failed', 'False', 'ImagePullFailed', 'no such image');
    assert.equal(statusEvents(initFailed, other)[0]?.note, 'ImagePullFailed: no such image');
  });

  it('leaves a refused child to its own ChildRejected Event', () => {
    assert.deepEqual(statusEvents(undefined, status('Failed', 'False', 'ChildRejected', 'invalid')), []);
  });
});
