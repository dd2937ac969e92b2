import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { CONTAINERS, type SampleDbBackupObject } from '../../../../src/api/index.ts';
import {
  parseBackupLocation,
  resolveRestoreSource,
  serverStarting,
} from '../../../../src/sampledb/steps/init-job.ts';
import { sampleDbBackup } from '../../../support/sampledb.ts';

describe('restore source (bootstrap.fromBackup)', () => {
  const backup = (status: SampleDbBackupObject['status']) => sampleDbBackup('nightly', 'orders', status);
  it('parses pvc:// locations', () => {
    assert.deepEqual(parseBackupLocation('pvc://orders-backups/orders/nightly.dump'), {
      claimName: 'orders-backups',
      path: 'orders/nightly.dump',
    });
    assert.equal(parseBackupLocation('s3://bucket/x'), undefined);
  });
  it('waits for a missing or unfinished backup, and uses a completed one with its checksum', () => {
    assert.equal(resolveRestoreSource('nightly', undefined).ok, false);
    const running = resolveRestoreSource('nightly', backup({ phase: 'Running' }));
    assert.ok(!running.ok && running.reason === 'BackupNotCompleted');
    const checksum = `sha256:${'a'.repeat(64)}`;
    assert.deepEqual(
      resolveRestoreSource(
        'nightly',
        backup({ phase: 'Completed', location: 'pvc://orders-backups/orders/nightly.dump', checksum }),
      ),
      { ok: true, source: { claimName: 'orders-backups', path: 'orders/nightly.dump', checksum } },
    );
  });
});

describe('when the init Job may start (serverStarting)', () => {
  const sts = (readyReplicas?: number) =>
    ({ status: { replicas: 1, ...(readyReplicas === undefined ? {} : { readyReplicas }) } }) as never;
  const pod = (state: 'waiting' | 'running', extra: Record<string, unknown> = {}): V1Pod => ({
    metadata: { name: 'orders-0', ...extra },
    status: {
      containerStatuses: [
        {
          name: CONTAINERS.postgres,
          image: 'postgres:17',
          imageID: '',
          ready: false,
          restartCount: 0,
          state:
            state === 'running'
              ? { running: { startedAt: new Date() } }
              : { waiting: { reason: 'ContainerCreating' } },
        },
      ],
    },
  });
  it('not while the pod is missing, unscheduled or its container is not running', () => {
    assert.equal(serverStarting(sts(), undefined), false);
    assert.equal(serverStarting(sts(0), pod('waiting')), false);
    assert.equal(serverStarting(undefined, pod('waiting')), false);
  });
  it('as soon as the postgres container runs (initdb may still be going), before the pod is Ready', () => {
    assert.equal(serverStarting(sts(0), pod('running')), true);
  });
  it('not on a pod being deleted, and always once a replica is ready', () => {
    assert.equal(serverStarting(sts(0), pod('running', { deletionTimestamp: new Date() })), false);
    assert.equal(serverStarting(sts(1), undefined), true);
  });
});
