import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MigrationSpec } from '../../../src/api/index.ts';
import { resolveInstance } from '../../../src/sampledb/instance.ts';
import { migrationsJob, migrationsJobName } from '../../../src/sampledb/migrations/job.ts';
import {
  MIGRATION_REASONS,
  type MigrationsObservation,
  planMigrations,
} from '../../../src/sampledb/migrations/plan.ts';
import { MIGRATE_SCRIPT } from '../../../src/sampledb/scripts/migrate.ts';
import { restrictedPodSpecViolations } from '../../support/restricted-pod-spec.ts';
import { sampleDb } from '../../support/sampledb.ts';

const NOW = new Date('2026-12-03T19:00:00Z');
const entry = (name: string): MigrationSpec => ({ name, configMap: { name: 'schema', key: `${name}.sql` } });
const sum = (c: string) => c.repeat(64);
const LIST = [entry('0001'), entry('0002'), entry('0003')];
const CHECKSUMS = { '0001': sum('a'), '0002': sum('b'), '0003': sum('c') };

const obs = (patch: Partial<MigrationsObservation> = {}): MigrationsObservation => ({
  entries: LIST,
  checksums: CHECKSUMS,
  applied: [],
  databaseReady: true,
  now: NOW,
  ...patch,
});
const applied = (...names: (keyof typeof CHECKSUMS)[]) =>
  names.map((name) => ({ name, checksum: CHECKSUMS[name], appliedAt: '2026-12-01T00:00:00Z' }));

describe('migrations plan', () => {
  it('does nothing without a list, and waits for the database before the first Job', () => {
    assert.deepEqual(planMigrations(obs({ entries: [] })), { kind: 'none' });
    const wait = planMigrations(obs({ databaseReady: false }));
    assert.equal(wait.kind, 'wait');
    assert.equal(wait.kind === 'wait' && wait.reason, MIGRATION_REASONS.waitingForDatabase);
  });

  it('starts one Job for the whole list with every checksum, then waits on it', () => {
    const create = planMigrations(obs());
    assert.deepEqual(create, {
      kind: 'create-job',
      migrations: LIST.map((e) => ({ name: e.name, checksum: CHECKSUMS[e.name as '0001'] })),
      pending: ['0001', '0002', '0003'],
    });
    assert.deepEqual(planMigrations(obs({ job: { state: 'running' } })), {
      kind: 'wait-job',
      pending: ['0001', '0002', '0003'],
    });
  });

  it('records all as applied at the Job end, keeping earlier times', () => {
    const done = planMigrations(
      obs({ applied: applied('0001'), job: { state: 'succeeded', finishedAt: '2026-12-03T18:59:00Z' } }),
    );
    assert.deepEqual(done, {
      kind: 'done',
      applied: [
        ...applied('0001'),
        { name: '0002', checksum: sum('b'), appliedAt: '2026-12-03T18:59:00Z' },
        { name: '0003', checksum: sum('c'), appliedAt: '2026-12-03T18:59:00Z' },
      ],
    });
    assert.deepEqual(planMigrations(obs({ applied: applied('0001', '0002', '0003') })), {
      kind: 'done',
      applied: applied('0001', '0002', '0003'),
    });
  });

  it('an appended entry gives a new Job name; the same list the same name', () => {
    const two = [
      { name: '0001', checksum: sum('a') },
      { name: '0002', checksum: sum('b') },
    ];
    const three = [...two, { name: '0003', checksum: sum('c') }];
    assert.equal(migrationsJobName('orders', two), migrationsJobName('orders', [...two]));
    assert.notEqual(migrationsJobName('orders', two), migrationsJobName('orders', three));
    // A fixed SQL (new checksum) of a failed migration gets a new Job too.
    assert.notEqual(
      migrationsJobName('orders', three),
      migrationsJobName('orders', [...two, { name: '0003', checksum: sum('d') }]),
    );
    const create = planMigrations(obs({ applied: applied('0001', '0002') }));
    assert.equal(create.kind, 'create-job');
    assert.deepEqual(create.kind === 'create-job' && create.pending, ['0003']);
  });

  it('refuses an applied entry whose SQL changed, naming both checksums, and runs nothing', () => {
    const action = planMigrations(
      obs({ applied: applied('0001', '0002'), checksums: { ...CHECKSUMS, '0002': sum('e') } }),
    );
    assert.equal(action.kind, 'refuse');
    if (action.kind !== 'refuse') return;
    assert.equal(action.reason, MIGRATION_REASONS.changed);
    assert.equal(action.migration, '0002');
    assert.match(action.message, new RegExp(`sha256:${sum('b')}.*sha256:${sum('e')}`));
    assert.deepEqual(action.applied, applied('0001', '0002'));
  });

  it('refuses a removed or reordered applied entry', () => {
    const removed = planMigrations(obs({ entries: [entry('0002')], applied: applied('0001') }));
    assert.equal(removed.kind === 'refuse' && removed.reason, MIGRATION_REASONS.removed);
    const reordered = planMigrations(
      obs({ entries: [entry('0002'), entry('0001')], applied: applied('0001', '0002') }),
    );
    assert.equal(reordered.kind === 'refuse' && reordered.reason, MIGRATION_REASONS.removed);
    assert.match(reordered.kind === 'refuse' ? reordered.message : '', /keep their order/);
  });

  it('waits with a reason for a missing ConfigMap or key', () => {
    const action = planMigrations(obs({ checksums: { ...CHECKSUMS, '0003': undefined } }));
    assert.equal(action.kind === 'refuse' && action.reason, MIGRATION_REASONS.sqlMissing);
    assert.match(action.kind === 'refuse' ? action.message : '', /ConfigMap schema \(key 0003\.sql\)/);
  });

  it('a failed Job records what applied before the failure and carries the SQL error; later ones wait', () => {
    const action = planMigrations(
      obs({
        job: {
          state: 'failed',
          finishedAt: '2026-12-03T18:58:00Z',
          result: { result: 'failed', migration: '0002', applied: 1, error: 'relation "x" does not exist' },
        },
      }),
    );
    assert.equal(action.kind, 'refuse');
    if (action.kind !== 'refuse') return;
    assert.equal(action.reason, MIGRATION_REASONS.failed);
    assert.match(action.message, /Migration 0002 failed and was rolled back: relation "x" does not exist\./);
    assert.match(action.message, /Later migrations wait: 0003\./);
    assert.deepEqual(action.applied, [
      { name: '0001', checksum: sum('a'), appliedAt: '2026-12-03T18:58:00Z' },
    ]);
  });

  it('a Job the database refused (changed checksum recorded there) is MigrationChanged', () => {
    const action = planMigrations(
      obs({
        job: { state: 'failed', result: { result: 'changed', migration: '0001', applied: 0, error: 'x' } },
      }),
    );
    assert.equal(action.kind === 'refuse' && action.reason, MIGRATION_REASONS.changed);
  });
});

describe('migration Job', () => {
  const db = sampleDb({
    migrations: [entry('0001'), { name: '0002', configMap: { name: 'more', key: 'b.sql' } }],
  });
  const migrations = [
    { name: '0001', checksum: sum('a') },
    { name: '0002', checksum: sum('b') },
  ];
  const job = migrationsJob(resolveInstance(db), 'postgres:16', migrations);
  const pod = job.spec?.template.spec;

  it('is restricted, has no token, runs the script once (no retries) as the owner', () => {
    assert.ok(pod);
    assert.deepEqual(restrictedPodSpecViolations(pod), []);
    assert.equal(pod.automountServiceAccountToken, false);
    assert.equal(job.spec?.backoffLimit, 0);
    const container = pod.containers[0];
    assert.deepEqual(container?.command, ['sh', '-c', MIGRATE_SCRIPT]);
    const env = Object.fromEntries((container?.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));
    assert.equal(env.PGUSER, resolveInstance(db).spec.bootstrap.owner);
    assert.equal(env.SAMPLEDB_MIGRATIONS, `0001 ${sum('a')}\n0002 ${sum('b')}`);
    assert.deepEqual(env.PGPASSWORD, { secretKeyRef: { name: 'orders-credentials', key: 'password' } });
  });

  it('mounts each key as <name>.sql in one projected volume', () => {
    const volume = pod?.volumes?.find((v) => v.name === 'migrations');
    assert.deepEqual(volume?.projected?.sources, [
      { configMap: { name: 'schema', items: [{ key: '0001.sql', path: '0001.sql' }] } },
      { configMap: { name: 'more', items: [{ key: 'b.sql', path: '0002.sql' }] } },
    ]);
  });

  it('connects to the elected primary: status.replication.primary, the one just elected, else pod 0', () => {
    const host = (j: typeof job) =>
      j.spec?.template.spec?.containers[0]?.env?.find((e) => e.name === 'PGHOST')?.value;
    assert.equal(host(job), 'orders-0.orders-headless.shop.svc');
    const replicated = resolveInstance({
      ...db,
      status: { replication: { primary: 'orders-2', term: 3, instances: [] } },
    } as typeof db);
    assert.equal(
      host(migrationsJob(replicated, 'postgres:16', migrations)),
      'orders-2.orders-headless.shop.svc',
    );
    assert.equal(
      host(migrationsJob(replicated, 'postgres:16', migrations, 'orders-1')),
      'orders-1.orders-headless.shop.svc',
    );
  });
});
