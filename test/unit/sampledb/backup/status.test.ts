import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { backupOutcome } from '../../../../src/sampledb/backup/status.ts';

describe('backupOutcome', () => {
  const checksum = `sha256:${'b'.repeat(64)}`;
  const job = (type: 'Complete' | 'Failed' | undefined): V1Job => ({
    status: type
      ? { conditions: [{ type, status: 'True', reason: type === 'Failed' ? 'BackoffLimitExceeded' : '' }] }
      : {},
  });
  const pod = (phase: string, message?: string): V1Pod => ({
    metadata: { creationTimestamp: new Date('2026-01-01T00:00:00Z') },
    status: {
      phase,
      containerStatuses: [
        {
          name: 'backup',
          image: 'postgres',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: {
            terminated: {
              exitCode: phase === 'Succeeded' ? 0 : 1,
              finishedAt: new Date('2026-01-01T00:01:00Z'),
              ...(message ? { message } : {}),
            },
          },
        },
      ],
    },
  });

  it('is Completed only with the result the container reported', () => {
    assert.deepEqual(
      backupOutcome(job('Complete'), [pod('Succeeded', `{"sizeBytes":42,"checksum":"${checksum}"}`)]),
      {
        phase: 'Completed',
        sizeBytes: 42,
        checksum,
        completedAt: '2026-01-01T00:01:00Z',
      },
    );
  });
  it('treats a succeeded Job without a result as a failed backup, never a completed one', () => {
    const outcome = backupOutcome(job('Complete'), [pod('Succeeded')]);
    assert.equal(outcome.phase, 'Failed');
    assert.ok(outcome.phase === 'Failed' && outcome.reason === 'NoResult');
  });
  it('quotes the last error of a failed Job', () => {
    const outcome = backupOutcome(job('Failed'), [pod('Failed', 'pg_dump: error: connection refused')]);
    assert.ok(outcome.phase === 'Failed' && /connection refused/.test(outcome.message));
    assert.ok(outcome.phase === 'Failed' && outcome.reason === 'BackoffLimitExceeded');
  });
  it('is Running otherwise', () => {
    assert.deepEqual(backupOutcome(job(undefined), []), { phase: 'Running' });
  });
});
