import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import type { SampleDbBackupObject, SampleDbObject } from '../../../src/api/index.ts';
import { registerSampleDbMetrics, sampleDbSamples } from '../../../src/sampledb/metrics.ts';
import { sampleDb } from '../../support/sampledb.ts';

const ready = (extra: Partial<SampleDbObject['status']> = {}): SampleDbObject => ({
  ...sampleDb({ backup: { schedule: '@daily' } }),
  status: {
    phase: 'Ready',
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'Ready',
        message: '',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ],
    ...extra,
  },
});

const backup = (name: string, phase: 'Completed' | 'Failed' | 'Running', at: string): SampleDbBackupObject =>
  ({
    apiVersion: 'sampledb.io/v1alpha1',
    kind: 'SampleDBBackup',
    metadata: { name, namespace: 'shop', creationTimestamp: at },
    spec: { sampleDB: { name: 'orders' } },
    status: { phase, ...(phase === 'Running' ? {} : { completedAt: at }) },
  }) as SampleDbBackupObject;

const value = (
  samples: ReturnType<typeof sampleDbSamples>,
  name: string,
  labels: Record<string, string> = {},
) =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

describe('SampleDB state metrics', () => {
  it('one-hot condition statuses and phases, labelled by namespace and sampledb', () => {
    const samples = sampleDbSamples([ready()], []);
    const ready1 = { namespace: 'shop', sampledb: 'orders', type: 'Ready' };
    assert.equal(value(samples, 'sampledb_status_condition', { ...ready1, status: 'True' }), 1);
    assert.equal(value(samples, 'sampledb_status_condition', { ...ready1, status: 'False' }), 0);
    assert.equal(value(samples, 'sampledb_status_condition', { ...ready1, status: 'Unknown' }), 0);
    assert.equal(value(samples, 'sampledb_status_phase', { phase: 'Ready' }), 1);
    assert.equal(value(samples, 'sampledb_status_phase', { phase: 'Failed' }), 0);
  });

  it('the last backup as Unix seconds and whether backups are scheduled', () => {
    const samples = sampleDbSamples(
      [ready({ lastBackup: { name: 'b1', completionTime: '2026-01-02T03:04:05Z' } })],
      [],
    );
    assert.equal(
      value(samples, 'sampledb_last_backup_completion_timestamp_seconds'),
      Date.parse('2026-01-02T03:04:05Z') / 1000,
    );
    assert.equal(value(samples, 'sampledb_backup_scheduled'), 1);
    const suspended = {
      ...ready(),
      spec: { ...ready().spec, backup: { schedule: '@daily', suspend: true } },
    };
    assert.equal(value(sampleDbSamples([suspended], []), 'sampledb_backup_scheduled'), 0);
    assert.equal(
      value(sampleDbSamples([ready()], []), 'sampledb_last_backup_completion_timestamp_seconds'),
      undefined,
    );
  });

  it('latest backup failed follows the newest finished backup only (a later success clears it)', () => {
    const failedThenOk = [
      backup('b1', 'Failed', '2026-01-01T00:00:00Z'),
      backup('b2', 'Completed', '2026-01-02T00:00:00Z'),
    ];
    assert.equal(value(sampleDbSamples([ready()], failedThenOk), 'sampledb_latest_backup_failed'), 0);
    const okThenFailed = [
      backup('b1', 'Completed', '2026-01-01T00:00:00Z'),
      backup('b2', 'Failed', '2026-01-02T00:00:00Z'),
    ];
    assert.equal(
      value(
        sampleDbSamples([ready()], [...okThenFailed, backup('b3', 'Running', '2026-01-03T00:00:00Z')]),
        'sampledb_latest_backup_failed',
        {
          sampledbbackup: 'b2',
        },
      ),
      1,
    );
    const otherDb = {
      ...backup('x', 'Failed', '2026-01-05T00:00:00Z'),
      spec: { sampleDB: { name: 'other' } },
    };
    assert.equal(
      value(sampleDbSamples([ready()], [otherDb as SampleDbBackupObject]), 'sampledb_latest_backup_failed'),
      undefined,
    );
  });

  it('is served from the registry and follows the cache: a deleted SampleDB disappears', async () => {
    const registry = new Registry();
    let dbs: SampleDbObject[] = [ready()];
    registerSampleDbMetrics(registry, () => ({ dbs, backups: [] }));
    registerSampleDbMetrics(registry, () => ({ dbs: [], backups: [] })); // a second registration is a no-op
    const before = await registry.metrics();
    assert.match(
      before,
      /sampledb_status_condition\{namespace="shop",sampledb="orders",type="Ready",status="True"\} 1/,
    );
    dbs = [];
    assert.doesNotMatch(await registry.metrics(), /sampledb="orders"/);
  });
});

describe('replication metrics', () => {
  it('the election term and each replica’s lag, only for SampleDBs with a record', () => {
    const db = ready({
      replication: {
        primary: 'orders-1',
        term: 3,
        instances: [
          { name: 'orders-0', role: 'replica', ready: true, lagBytes: 4096 },
          { name: 'orders-1', role: 'primary', ready: true },
        ],
      },
    });
    const samples = sampleDbSamples([db], []);
    assert.equal(value(samples, 'sampledb_replication_election_term'), 3);
    assert.equal(value(samples, 'sampledb_replication_lag_bytes', { pod: 'orders-0' }), 4096);
    assert.equal(value(samples, 'sampledb_replication_lag_bytes', { pod: 'orders-1' }), undefined);
    const single = sampleDbSamples([ready()], []);
    assert.equal(value(single, 'sampledb_replication_election_term'), undefined);
  });
});
