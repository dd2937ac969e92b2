// The migration Job's script against a real PostgreSQL server: appending applies only the new migrations, an
// edited applied migration is refused (exit 3, nothing run), a failing one stops with its SQL error and the later
// ones wait, and each migration runs as the owner in one transaction with its record.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  MIGRATE_EXIT,
  MIGRATE_SCRIPT,
  type MigrationToRun,
  migrateScriptEnv,
  parseMigrateResult,
} from '../../../src/sampledb/scripts/migrate.ts';
import { findPostgresBinDir, type PostgresServer, runScript, startPostgres } from '../../support/postgres.ts';

const OWNER_PASSWORD = 'owner-pw-migrate-test';

describe('migration script against PostgreSQL', {
  skip: findPostgresBinDir() ? false : 'PostgreSQL is not installed',
}, () => {
  let pg: PostgresServer;
  let runs = 0;
  const dir = () => join(pg.scratchDir, 'migrations');
  const sql = new Map<string, string>();

  before(async () => {
    pg = await startPostgres();
    // As the init Job leaves it: an owner role, its database, the operator's schema owned by the owner.
    pg.query(`CREATE ROLE app LOGIN PASSWORD '${OWNER_PASSWORD}'`);
    pg.query('CREATE DATABASE shop OWNER app');
    pg.query('CREATE SCHEMA sampledb_operator AUTHORIZATION app', 'shop');
    mkdirSync(dir(), { recursive: true });
  });
  after(async () => {
    await pg?.stop();
  });

  const put = (name: string, text: string) => {
    sql.set(name, text);
    writeFileSync(join(dir(), `${name}.sql`), text);
  };
  const checksum = (text: string) => createHash('sha256').update(text).digest('hex');

  async function migrate(names: string[], expected?: Record<string, string>) {
    const log = join(pg.scratchDir, `termination-${++runs}`);
    const migrations: MigrationToRun[] = names.map((name) => ({
      name,
      checksum: expected?.[name] ?? checksum(sql.get(name) ?? ''),
    }));
    const run = await runScript(MIGRATE_SCRIPT, {
      ...migrateScriptEnv({
        host: pg.host,
        port: pg.port,
        database: 'shop',
        owner: 'app',
        migrations,
        directory: dir(),
        terminationLog: log,
        waitSeconds: 30,
      }),
      PATH: pg.path,
      PGPASSWORD: OWNER_PASSWORD,
    });
    const message = (() => {
      try {
        return readFileSync(log, 'utf8');
      } catch {
        return '';
      }
    })();
    return { ...run, result: parseMigrateResult(message), message };
  }

  const recorded = () =>
    pg.query('SELECT name, checksum FROM sampledb_operator.migrations ORDER BY applied_at, name', 'shop');

  it('applies the list in order, as the owner, and records each', async () => {
    put('0001-accounts', 'CREATE TABLE accounts (id int PRIMARY KEY, name text);\n');
    put('0002-seed', "INSERT INTO accounts VALUES (1, 'one'), (2, 'two');\n");
    const run = await migrate(['0001-accounts', '0002-seed']);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.result, { result: 'applied', applied: 2 });
    assert.equal(pg.query('SELECT count(*) FROM accounts', 'shop'), '2');
    assert.equal(pg.query("SELECT tableowner FROM pg_tables WHERE tablename = 'accounts'", 'shop'), 'app');
    assert.equal(
      recorded(),
      `0001-accounts|${checksum(sql.get('0001-accounts') ?? '')}\n0002-seed|${checksum(sql.get('0002-seed') ?? '')}`,
    );
  });

  it('applies only the appended migration on a re-run with a longer list', async () => {
    put('0003-more', "INSERT INTO accounts VALUES (3, 'three');\n");
    const run = await migrate(['0001-accounts', '0002-seed', '0003-more']);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.result, { result: 'applied', applied: 3 });
    // 0002 ran once: were it run again, its INSERT would have failed on the primary key.
    assert.equal(pg.query('SELECT count(*) FROM accounts', 'shop'), '3');
    assert.equal(pg.query('SELECT count(*) FROM sampledb_operator.migrations', 'shop'), '3');
  });

  it('refuses an applied migration whose SQL changed, and runs nothing after it', async () => {
    const before = recorded();
    put('0002-seed', "INSERT INTO accounts VALUES (1, 'one'), (2, 'two'), (20, 'twenty');\n");
    put('0004-after', "INSERT INTO accounts VALUES (4, 'four');\n");
    const run = await migrate(['0001-accounts', '0002-seed', '0003-more', '0004-after']);
    assert.equal(run.code, MIGRATE_EXIT.changed, run.stderr);
    assert.equal(run.result?.result, 'changed');
    assert.equal(run.result?.migration, '0002-seed');
    assert.equal(run.result?.applied, 1);
    assert.match(
      run.result?.error ?? '',
      /was applied with sha256:[0-9a-f]{64}, its SQL now has sha256:[0-9a-f]{64}/,
    );
    assert.equal(recorded(), before);
    assert.equal(pg.query('SELECT count(*) FROM accounts', 'shop'), '3');
    put('0002-seed', "INSERT INTO accounts VALUES (1, 'one'), (2, 'two');\n");
  });

  it('stops at a failing migration with its SQL error, rolls it back whole, and later ones wait', async () => {
    put('0004-after', "INSERT INTO accounts VALUES (4, 'four');\nINSERT INTO no_such_table VALUES (1);\n");
    put('0005-later', "INSERT INTO accounts VALUES (5, 'five');\n");
    const list = ['0001-accounts', '0002-seed', '0003-more', '0004-after', '0005-later'];
    const run = await migrate(list);
    assert.equal(run.code, MIGRATE_EXIT.failed, run.stderr);
    assert.equal(run.result?.result, 'failed');
    assert.equal(run.result?.migration, '0004-after');
    assert.equal(run.result?.applied, 3);
    assert.equal(run.result?.error, 'relation "no_such_table" does not exist');
    // Its first statement was rolled back with it; 0005 did not run.
    assert.equal(pg.query("SELECT string_agg(id::text, ',' ORDER BY id) FROM accounts", 'shop'), '1,2,3');
    assert.equal(pg.query('SELECT count(*) FROM sampledb_operator.migrations', 'shop'), '3');

    // Fixed (it never applied, so its SQL may change): it and the later one apply.
    put('0004-after', "INSERT INTO accounts VALUES (4, 'four');\n");
    const fixed = await migrate(list);
    assert.equal(fixed.code, 0, fixed.stderr);
    assert.deepEqual(fixed.result, { result: 'applied', applied: 5 });
    assert.equal(pg.query("SELECT string_agg(id::text, ',' ORDER BY id) FROM accounts", 'shop'), '1,2,3,4,5');
  });

  it('refuses a mounted file that is not the SQL the operator read, before running it', async () => {
    put('0006-next', "INSERT INTO accounts VALUES (6, 'six');\n");
    const list = ['0001-accounts', '0002-seed', '0003-more', '0004-after', '0005-later', '0006-next'];
    const run = await migrate(list, { '0006-next': 'b'.repeat(64) });
    assert.equal(run.code, MIGRATE_EXIT.unexpectedContent, run.stderr);
    assert.equal(run.result?.result, 'unexpectedContent');
    assert.equal(run.result?.migration, '0006-next');
    assert.equal(pg.query('SELECT count(*) FROM accounts WHERE id = 6', 'shop'), '0');
  });
});
