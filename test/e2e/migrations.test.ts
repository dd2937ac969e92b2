// Issue 12's real-node scenario for migrations: a SampleDB on PostgreSQL 15 with rows and an applied migration is
// raised to 17 while a second migration is appended in the same change. It ends on 17 with the same per-table
// checksums, the migrations table intact and the pre-upgrade backup Completed, and the appended migration ran after
// the upgrade (it records the server version it ran on). Then: an edited applied migration is refused (checksum
// mismatch), a failing one stops the list with the SQL error while the next waits, and once fixed only the new ones
// run (the earlier rows keep their applied_at). Everything through kubectl and psql, as a user would.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pollUntil } from '../../src/envtest/index.ts';
import { e2eSetup } from './support/cluster.ts';
import {
  apply,
  conditionOf,
  eventMessages,
  kubectlJson,
  patchSpec,
  type SampleDbStatus,
  SEED_SQL,
  sampleDb,
  sql,
  statusOf,
  tableChecksums,
  waitReady,
} from './support/sampledb.ts';

const { cluster, namespace } = await e2eSetup('e2e-migrations');
const name = 'shop';
const schema = 'shop-schema';

const SQL = {
  '0001.sql':
    "CREATE TABLE accounts (id int PRIMARY KEY, owner text NOT NULL);\nINSERT INTO accounts VALUES (1, 'ada'), (2, 'bob');\n",
  // Records the server it ran on: proof that it ran after the upgrade, not before.
  '0002.sql':
    "CREATE TABLE applied_on AS SELECT current_setting('server_version_num')::int AS version_num;\n",
  '0003.sql': 'INSERT INTO no_such_table VALUES (1);\n',
  '0003-fixed.sql': 'ALTER TABLE accounts ADD COLUMN email text;\n',
  '0004.sql': 'CREATE TABLE later (id int);\n',
};

const configMap = (data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: schema, namespace },
  data,
});
const entry = (n: string, key = `${n}.sql`) => ({ name: n, configMap: { name: schema, key } });

interface Migrated extends SampleDbStatus {
  migrations?: { name: string; checksum: string; appliedAt?: string }[];
  upgrade?: { step: string; message?: string; backup?: string };
}

/** Polls until the Migrated condition has `reason`; the last status is in the timeout error. */
async function waitMigrated(reason: string, timeoutMs = 180_000): Promise<Migrated> {
  let last: Migrated = {};
  try {
    return await pollUntil(
      `Migrated reason ${reason}`,
      async () => {
        last = (await statusOf(cluster, namespace, name)) as Migrated;
        return conditionOf(last, 'Migrated')?.reason === reason ? last : undefined;
      },
      { timeoutMs, intervalMs: 1000 },
    );
  } catch (error) {
    const jobs = await cluster.kubectl(['get', 'jobs,pods,events', '-n', namespace]);
    throw new Error(`${(error as Error).message}\nlast status: ${JSON.stringify(last)}\n${jobs.stdout}`);
  }
}

/** The database's record table: name → "checksum applied_at". */
async function recorded(): Promise<Record<string, string>> {
  const out = await sql(
    cluster,
    namespace,
    name,
    "SELECT name || ' ' || checksum || ' ' || applied_at FROM sampledb_operator.migrations ORDER BY name;",
  );
  return Object.fromEntries(
    out
      .split('\n')
      .filter(Boolean)
      .map((line) => [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)]),
  );
}

describe('migrations on a real node, across a major upgrade', () => {
  it('15 with rows and an applied migration, raised to 17: migrations run after it; edits refused; failures stop the list', async () => {
    await apply(cluster, [
      configMap({ '0001.sql': SQL['0001.sql'], '0002.sql': SQL['0002.sql'] }),
      sampleDb(namespace, name, { version: '15', storage: { size: '1Gi' }, migrations: [entry('0001')] }),
    ]);
    const ready = await waitReady(cluster, namespace, name);
    assert.match(ready.currentVersion ?? '', /^15\./);
    const first = await waitMigrated('MigrationsApplied');
    assert.deepEqual(
      first.migrations?.map((m) => m.name),
      ['0001'],
    );
    await sql(cluster, namespace, name, SEED_SQL);
    const checksums = await tableChecksums(cluster, namespace, name);
    assert.deepEqual(Object.keys(checksums).sort(), ['accounts', 'events', 'orders']);
    const recordBefore = await recorded();
    assert.deepEqual(Object.keys(recordBefore), ['0001']);

    // One change: the new major and an appended migration. The migration must wait for the upgrade.
    await patchSpec(cluster, namespace, name, { version: '17', migrations: [entry('0001'), entry('0002')] });
    const steps = new Set<string>();
    const upgraded = await pollUntil(
      'the upgrade to 17 is settled and the migrations applied',
      async () => {
        const s = (await statusOf(cluster, namespace, name)) as Migrated;
        if (s.upgrade) steps.add(s.upgrade.step);
        if (s.upgrade?.step === 'Failed') return s;
        return s.upgrade?.step === 'Done' &&
          s.phase === 'Ready' &&
          conditionOf(s, 'Migrated')?.reason === 'MigrationsApplied' &&
          s.migrations?.length === 2
          ? s
          : undefined;
      },
      { timeoutMs: 900_000, intervalMs: 2000 },
    );
    assert.equal(upgraded.upgrade?.step, 'Done', upgraded.upgrade?.message);
    assert.match(upgraded.currentVersion ?? '', /^17\./);
    for (const step of ['Backup', 'Upgrade', 'Done'])
      assert.ok(steps.has(step), `saw ${step}: ${[...steps]}`);
    const after = await tableChecksums(cluster, namespace, name);
    assert.deepEqual(
      Object.fromEntries(Object.entries(after).filter(([t]) => t in checksums)),
      checksums,
      'same rows in every table after the upgrade',
    );
    const versionNum = Number(await sql(cluster, namespace, name, 'SELECT version_num FROM applied_on;'));
    assert.ok(versionNum >= 170000, `0002 ran on PostgreSQL 17 (server_version_num ${versionNum})`);
    const recordAfter = await recorded();
    assert.equal(recordAfter['0001'], recordBefore['0001'], 'the migrations table came through the upgrade');
    assert.ok(recordAfter['0002']);
    const backup = await kubectlJson<{ status: { phase: string } }>(cluster, [
      'get',
      'sampledbbackup',
      `${name}-pre-upgrade-17`,
      '-n',
      namespace,
    ]);
    assert.equal(backup?.status.phase, 'Completed');

    // An applied migration edited in its ConfigMap: refused with both checksums, nothing runs.
    await apply(cluster, [
      configMap({ '0001.sql': `${SQL['0001.sql']}-- edited\n`, '0002.sql': SQL['0002.sql'] }),
    ]);
    const changed = await waitMigrated('MigrationChanged');
    const message = conditionOf(changed, 'Migrated')?.message ?? '';
    assert.match(
      message,
      /Migration 0001 was applied with sha256:[0-9a-f]{64}; .* now has sha256:[0-9a-f]{64}/,
    );
    assert.ok(
      (await eventMessages(cluster, namespace, 'MigrationChanged', 'Warning')).some((m) =>
        m.includes('0001'),
      ),
    );
    assert.deepEqual(await recorded(), recordAfter, 'nothing ran');

    // Put it back, and append a failing migration and one after it.
    await apply(cluster, [
      configMap({
        '0001.sql': SQL['0001.sql'],
        '0002.sql': SQL['0002.sql'],
        '0003.sql': SQL['0003.sql'],
        '0004.sql': SQL['0004.sql'],
      }),
    ]);
    await patchSpec(cluster, namespace, name, {
      migrations: [entry('0001'), entry('0002'), entry('0003'), entry('0004')],
    });
    const failed = await waitMigrated('MigrationFailed');
    const failure = conditionOf(failed, 'Migrated')?.message ?? '';
    assert.match(
      failure,
      /Migration 0003 failed and was rolled back: relation "no_such_table" does not exist/,
    );
    assert.match(failure, /Later migrations wait: 0004/);
    assert.ok(
      (await eventMessages(cluster, namespace, 'MigrationFailed', 'Warning')).some((m) =>
        m.includes('no_such_table'),
      ),
    );
    assert.equal(
      await sql(cluster, namespace, name, "SELECT count(*) FROM pg_tables WHERE tablename = 'later';"),
      '0',
      '0004 waited',
    );
    assert.deepEqual(Object.keys(await recorded()), ['0001', '0002']);

    // Fixed in its ConfigMap (never applied, so it may change): only 0003 and 0004 run; 0001 and 0002 keep
    // their records.
    await apply(cluster, [
      configMap({
        '0001.sql': SQL['0001.sql'],
        '0002.sql': SQL['0002.sql'],
        '0003.sql': SQL['0003-fixed.sql'],
        '0004.sql': SQL['0004.sql'],
      }),
    ]);
    const fixed = await pollUntil(
      'all four applied',
      async () => {
        const s = (await statusOf(cluster, namespace, name)) as Migrated;
        return conditionOf(s, 'Migrated')?.reason === 'MigrationsApplied' && s.migrations?.length === 4
          ? s
          : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 1000 },
    );
    assert.deepEqual(
      fixed.migrations?.map((m) => m.name),
      ['0001', '0002', '0003', '0004'],
    );
    const final = await recorded();
    assert.equal(final['0001'], recordAfter['0001']);
    assert.equal(final['0002'], recordAfter['0002']);
    assert.equal(
      await sql(
        cluster,
        namespace,
        name,
        "SELECT count(*) FROM information_schema.columns WHERE table_name = 'accounts' AND column_name = 'email';",
      ),
      '1',
    );
    assert.equal(
      await sql(cluster, namespace, name, 'SELECT count(*) FROM accounts;'),
      '2',
      'the migration rows came through the upgrade',
    );
  });
});
