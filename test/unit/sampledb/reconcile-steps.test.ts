import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { SampleDbBackupObject } from '../../../src/api/index.ts';
import { settingsFrom } from '../../../src/main.ts';
import { backupOutcome } from '../../../src/sampledb/backup/status.ts';
import { resolveInstance } from '../../../src/sampledb/instance.ts';
import { parseBackupLocation, resolveRestoreSource } from '../../../src/sampledb/steps/init-job.ts';
import { decideStorage } from '../../../src/sampledb/steps/storage.ts';
import { desiredStatefulSet } from '../../../src/sampledb/steps/workload.ts';
import { lastCompletedBackup } from '../../../src/sampledb/steps/write-status.ts';
import { sampleDb } from '../../support/sampledb.ts';

const pvc = (requested: string, capacity?: string): V1PersistentVolumeClaim => ({
  spec: { storageClassName: 'standard', resources: { requests: { storage: requested } } },
  ...(capacity ? { status: { capacity: { storage: capacity } } } : {}),
});

describe('decideStorage', () => {
  it('expands when the class allows it', () => {
    assert.deepEqual(decideStorage(pvc('1Gi'), '2Gi', { provisioner: 'x', allowVolumeExpansion: true }), {
      kind: 'expand',
      from: '1Gi',
      to: '2Gi',
    });
  });
  it('explains when the class does not allow expansion', () => {
    assert.deepEqual(decideStorage(pvc('1Gi'), '2Gi', { provisioner: 'x' }), {
      kind: 'not-expandable',
      from: '1Gi',
      to: '2Gi',
      storageClass: 'standard',
    });
  });
  it('reports a resize in progress until the capacity follows, and nothing once it has', () => {
    assert.equal(decideStorage(pvc('2Gi', '1Gi'), '2Gi', undefined).kind, 'resizing');
    assert.equal(decideStorage(pvc('2Gi', '2Gi'), '2Gi', undefined).kind, 'none');
    assert.equal(decideStorage(undefined, '2Gi', undefined).kind, 'none');
  });
});

describe('desiredStatefulSet', () => {
  it('keeps the claim template size of the existing StatefulSet (immutable) while the spec grows', () => {
    const db = sampleDb({ storage: { size: '5Gi' } });
    const existing = desiredStatefulSet(resolveInstance(sampleDb({ storage: { size: '1Gi' } })), undefined);
    const desired = desiredStatefulSet(resolveInstance(db), existing);
    assert.equal(desired.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests?.storage, '1Gi');
    assert.equal(
      desiredStatefulSet(resolveInstance(db), undefined).spec?.volumeClaimTemplates?.[0]?.spec?.resources
        ?.requests?.storage,
      '5Gi',
    );
  });
});

describe('restore source (bootstrap.fromBackup)', () => {
  const backup = (status: SampleDbBackupObject['status']): SampleDbBackupObject => ({
    apiVersion: 'sampledb.io/v1alpha1',
    kind: 'SampleDBBackup',
    metadata: { name: 'nightly' },
    spec: { sampleDB: { name: 'orders' } },
    ...(status ? { status } : {}),
  });
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
  it('lastCompletedBackup picks the newest Completed backup of the SampleDB', () => {
    const b = (name: string, db: string, phase: 'Completed' | 'Failed', completedAt: string) =>
      ({
        ...backup({ phase, completedAt }),
        metadata: { name },
        spec: { sampleDB: { name: db } },
      }) as SampleDbBackupObject;
    assert.deepEqual(
      lastCompletedBackup('orders', [
        b('a', 'orders', 'Completed', '2026-01-01T00:00:00Z'),
        b('c', 'orders', 'Failed', '2026-01-03T00:00:00Z'),
        b('d', 'other', 'Completed', '2026-01-04T00:00:00Z'),
        b('b', 'orders', 'Completed', '2026-01-02T00:00:00Z'),
      ]),
      { name: 'b', completionTime: '2026-01-02T00:00:00Z' },
    );
  });
});

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

describe('settingsFrom (main.ts environment)', () => {
  it('reads the Deployment environment', () => {
    assert.deepEqual(
      settingsFrom({
        WATCH_NAMESPACES: 'shop',
        LEADER_ELECTION: 'true',
        POD_NAME: 'op-1',
        POD_NAMESPACE: 'sampledb-system',
        LOG_LEVEL: 'debug',
        METRICS_PORT: '8080',
        HEALTH_PORT: '8081',
      }),
      {
        kubeconfigPath: undefined,
        namespaces: ['shop'],
        leaderElection: { namespace: 'sampledb-system', identity: 'op-1' },
        logLevel: 'debug',
        healthPort: 8081,
        metricsPort: 8080,
        postgresImageRepository: 'docker.io/library/postgres',
      },
    );
  });
  it('takes the PostgreSQL image repository from POSTGRES_IMAGE_REPOSITORY, refusing a tag or digest', () => {
    assert.equal(
      settingsFrom({ POSTGRES_IMAGE_REPOSITORY: 'registry.example.com:5000/mirror/postgres' })
        .postgresImageRepository,
      'registry.example.com:5000/mirror/postgres',
    );
    assert.throws(
      () => settingsFrom({ POSTGRES_IMAGE_REPOSITORY: 'postgres:16' }),
      /POSTGRES_IMAGE_REPOSITORY.*without a tag/,
    );
    assert.throws(() => settingsFrom({ POSTGRES_IMAGE_REPOSITORY: 'a/b@sha256:00' }), /without a digest/);
  });
  it('defaults to all namespaces and no leader election, and refuses what it cannot do', () => {
    const settings = settingsFrom({ KUBECONFIG: '/tmp/kc' });
    assert.deepEqual(settings.namespaces, []);
    assert.equal(settings.leaderElection, undefined);
    assert.deepEqual(settingsFrom({ WATCH_NAMESPACES: 'team-a, team-b,team-a' }).namespaces, [
      'team-a',
      'team-b',
    ]);
    assert.throws(() => settingsFrom({ WATCH_NAMESPACES: 'a,B_b' }), /not namespace names: B_b/);
    assert.throws(() => settingsFrom({ LEADER_ELECTION: 'true' }), /POD_NAMESPACE/);
    assert.throws(() => settingsFrom({ HEALTH_PORT: 'abc' }), /HEALTH_PORT/);
  });
});
