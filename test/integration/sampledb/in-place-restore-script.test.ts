// The in-place restore Job's script (ADR 0014) and the cleanup Job's against a real PostgreSQL server: deleted rows
// come back by a switch of database names, the replaced data stays in the previous database, the new database keeps
// the live one's grants and settings, and every failure (a verification that fails, a changed dump, a dump that
// pg_restore refuses, a previous database that exists) leaves the live data as it was with no copy left behind.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pollUntil } from '../../../src/envtest/index.ts';
import { restorePreviousDatabase, restoreStagingDatabase } from '../../../src/sampledb/names.ts';
import { BACKUP_SCRIPT, backupScriptEnv, parseBackupResult } from '../../../src/sampledb/scripts/backup.ts';
import {
  DROP_DATABASES_SCRIPT,
  dropDatabasesEnv,
  parseDropDatabasesResult,
} from '../../../src/sampledb/scripts/drop-databases.ts';
import {
  IN_PLACE_RESTORE_SCRIPT,
  inPlaceRestoreEnv,
  parseInPlaceRestoreResult,
  SWITCH_FAILURE_PREFIX,
  VERIFY_FAILURE_PREFIX,
} from '../../../src/sampledb/scripts/in-place-restore.ts';
import { findPostgresBinDir, type PostgresServer, runScript, startPostgres } from '../../support/postgres.ts';

describe('in-place restore against PostgreSQL', {
  skip: findPostgresBinDir() ? false : 'PostgreSQL is not installed',
}, () => {
  let pg: PostgresServer;
  let runs = 0;
  const dir = () => join(pg.scratchDir, 'backups', 'app');
  const env = (extra: Record<string, string>) => ({
    ...extra,
    PATH: pg.path,
    PGUSER: pg.superuser,
    PGPASSWORD: pg.password,
  });

  before(async () => {
    pg = await startPostgres();
    pg.query("CREATE ROLE app LOGIN PASSWORD 'x'");
    pg.query('CREATE DATABASE app OWNER app');
    pg.query(
      "CREATE TABLE items (id int PRIMARY KEY, name text); INSERT INTO items SELECT g, 'n' || g FROM generate_series(1, 100) g; ALTER TABLE items OWNER TO app;",
      'app',
    );
  });
  after(async () => {
    await pg?.stop();
  });

  async function backup(name: string) {
    const log = join(pg.scratchDir, `t-${++runs}`);
    const run = await runScript(
      BACKUP_SCRIPT,
      env(
        backupScriptEnv({
          host: pg.host,
          port: pg.port,
          database: 'app',
          directory: dir(),
          backupName: name,
          terminationLog: log,
        }),
      ),
    );
    assert.equal(run.code, 0, run.stderr);
    const result = parseBackupResult(readFileSync(log, 'utf8'));
    assert.ok(result);
    return { dump: join(dir(), `${name}.dump`), checksum: result.checksum };
  }

  const databases = () =>
    pg.query("SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_database WHERE datname LIKE 'app%'");

  async function dropDatabases(names: string[]) {
    const log = join(pg.scratchDir, `t-${++runs}`);
    writeFileSync(log, '');
    const run = await runScript(
      DROP_DATABASES_SCRIPT,
      env(dropDatabasesEnv({ host: pg.host, port: pg.port, databases: names, terminationLog: log })),
    );
    assert.equal(run.code, 0, run.stderr);
    return parseDropDatabasesResult(readFileSync(log, 'utf8'));
  }

  async function restoreInPlace(dump: string, checksum: string, restoreName = `r${runs + 1}`) {
    const log = join(pg.scratchDir, `t-${++runs}`);
    writeFileSync(log, '');
    const run = await runScript(
      IN_PLACE_RESTORE_SCRIPT,
      env(
        inPlaceRestoreEnv({
          host: pg.host,
          port: pg.port,
          database: 'app',
          owner: 'app',
          dump,
          checksum,
          stagingDatabase: restoreStagingDatabase('app'),
          previousDatabase: restorePreviousDatabase('app', restoreName),
          terminationLog: log,
        }),
      ),
    );
    return {
      ...run,
      message: readFileSync(log, 'utf8'),
      previous: restorePreviousDatabase('app', restoreName),
    };
  }

  it('brings deleted rows back and checks them against the recorded counts', async () => {
    const taken = await backup('before-delete');
    pg.query('DELETE FROM items WHERE id > 10', 'app');
    assert.equal(pg.query('SELECT count(*) FROM items', 'app'), '10');
    pg.query('CREATE TABLE added_later (id int)', 'app');
    const run = await restoreInPlace(taken.dump, taken.checksum);
    assert.equal(run.code, 0, `${run.stderr}\n${run.message}`);
    assert.deepEqual(parseInPlaceRestoreResult(run.message), {
      restored: true,
      tables: 1,
      previous: run.previous,
    });
    assert.equal(pg.query('SELECT count(*) FROM items', 'app'), '100');
    assert.equal(pg.query("SELECT tableowner FROM pg_tables WHERE tablename = 'items'", 'app'), 'app');
    assert.equal(
      pg.query("SELECT count(*) FROM pg_tables WHERE tablename = 'added_later'", 'app'),
      '0',
      'the database is the backup, not the backup laid over the current data',
    );
    // The replaced data is kept, as it was, until the operator has backed it up and drops it.
    assert.equal(pg.query('SELECT count(*) FROM items', run.previous), '10');
    assert.equal(
      pg.query("SELECT count(*) FROM pg_tables WHERE tablename = 'added_later'", run.previous),
      '1',
    );
    assert.equal(pg.query("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'app'"), 'app');
    assert.deepEqual(await dropDatabases([run.previous, restoreStagingDatabase('app')]), { dropped: 1 });
    assert.equal(databases(), 'app');
  });

  it("the restored database keeps the live one's grants, settings and connection limit", async () => {
    pg.query("CREATE ROLE reader LOGIN PASSWORD 'x'");
    pg.query('REVOKE ALL ON DATABASE app FROM PUBLIC');
    pg.query('GRANT CONNECT ON DATABASE app TO reader');
    pg.query('GRANT TEMPORARY ON DATABASE app TO reader WITH GRANT OPTION');
    pg.query(`ALTER DATABASE app SET search_path = "$user", public, extra`);
    pg.query("ALTER ROLE reader IN DATABASE app SET work_mem = '8MB'");
    pg.query('ALTER DATABASE app CONNECTION LIMIT 50');
    const before = {
      acl: pg.query("SELECT datacl::text FROM pg_database WHERE datname = 'app'"),
      settings: pg.query(
        "SELECT string_agg(setrole::regrole::text || ':' || setconfig::text, ';' ORDER BY setrole) FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase WHERE d.datname = 'app'",
      ),
    };
    try {
      const taken = await backup('with-grants');
      const run = await restoreInPlace(taken.dump, taken.checksum);
      assert.equal(run.code, 0, `${run.stderr}\n${run.message}`);
      assert.equal(pg.query("SELECT datacl::text FROM pg_database WHERE datname = 'app'"), before.acl);
      assert.equal(
        pg.query(
          "SELECT string_agg(setrole::regrole::text || ':' || setconfig::text, ';' ORDER BY setrole) FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase WHERE d.datname = 'app'",
        ),
        before.settings,
      );
      assert.equal(pg.query("SELECT datconnlimit FROM pg_database WHERE datname = 'app'"), '50');
      assert.equal(pg.query('SHOW search_path', 'app'), '"$user", public, extra');
      await dropDatabases([run.previous]);
    } finally {
      pg.query('ALTER DATABASE app RESET ALL');
      pg.query('ALTER ROLE reader IN DATABASE app RESET ALL');
      pg.query('ALTER DATABASE app CONNECTION LIMIT -1');
      pg.query('GRANT ALL ON DATABASE app TO PUBLIC');
      pg.query('REVOKE ALL ON DATABASE app FROM reader');
      pg.query('DROP ROLE reader');
    }
  });

  it('an open session on the live database is ended for the switch', async () => {
    const taken = await backup('with-session');
    const session = spawn(
      join(pg.binDir, 'psql'),
      ['-X', '-h', pg.host, '-p', String(pg.port), '-d', 'app'],
      {
        env: { ...process.env, PGUSER: 'app', PGPASSWORD: 'x' },
        stdio: ['pipe', 'ignore', 'ignore'],
      },
    );
    session.stdin.write('SELECT 1;\n');
    try {
      await pollUntil(
        'the session is connected',
        async () =>
          pg.query("SELECT count(*) FROM pg_stat_activity WHERE datname = 'app' AND usename = 'app'") === '1'
            ? true
            : undefined,
        { timeoutMs: 10_000, intervalMs: 100 },
      );
      const run = await restoreInPlace(taken.dump, taken.checksum);
      assert.equal(run.code, 0, `${run.stderr}\n${run.message}`);
      await dropDatabases([run.previous]);
    } finally {
      session.kill();
    }
  });

  it('objects another role owns (the superuser) are restored too, each with the owner it had', async () => {
    pg.query(
      'CREATE TABLE audit (id int PRIMARY KEY); INSERT INTO audit SELECT generate_series(1, 7);',
      'app',
    );
    try {
      const taken = await backup('mixed-owners');
      pg.query('DELETE FROM audit WHERE id > 3', 'app');
      const run = await restoreInPlace(taken.dump, taken.checksum);
      // Restored as the owner, dropping the superuser's table failed with "must be owner of table audit".
      assert.equal(run.code, 0, `${run.stderr}\n${run.message}`);
      assert.equal(pg.query('SELECT count(*) FROM audit', 'app'), '7');
      assert.equal(
        pg.query(
          "SELECT string_agg(tablename || ':' || tableowner, ',' ORDER BY tablename) FROM pg_tables WHERE schemaname = 'public'",
          'app',
        ),
        `audit:${pg.superuser},items:app`,
      );
      await dropDatabases([run.previous]);
    } finally {
      pg.query('DROP TABLE IF EXISTS audit', 'app');
    }
  });

  it('a result that differs from the recorded counts fails as a verification failure', async () => {
    const taken = await backup('tampered');
    const counts = join(dir(), 'tampered.counts');
    writeFileSync(counts, readFileSync(counts, 'utf8').replace('public.items|100', 'public.items|101'));
    pg.query('DELETE FROM items WHERE id > 90', 'app');
    const run = await restoreInPlace(taken.dump, taken.checksum);
    assert.notEqual(run.code, 0);
    assert.ok(run.message.startsWith(VERIFY_FAILURE_PREFIX), run.message);
    assert.match(run.message, /public\.items\|101/);
    assert.equal(pg.query('SELECT count(*) FROM items', 'app'), '90', 'the live data is as it was');
    assert.equal(databases(), 'app', 'the unfinished copy is dropped, nothing is renamed');
  });

  it('a dump pg_restore refuses leaves the live data and no copy behind', async () => {
    const taken = await backup('not-a-dump');
    writeFileSync(taken.dump, 'this is not a custom-format dump\n');
    const sum = createHash('sha256').update(readFileSync(taken.dump)).digest('hex');
    const run = await restoreInPlace(taken.dump, `sha256:${sum}`);
    assert.notEqual(run.code, 0);
    assert.match(run.message, /pg_restore into a new database failed, the live data is unchanged/);
    assert.ok(
      !run.message.startsWith(VERIFY_FAILURE_PREFIX) && !run.message.startsWith(SWITCH_FAILURE_PREFIX),
    );
    assert.equal(pg.query('SELECT count(*) FROM items', 'app'), '90');
    assert.equal(databases(), 'app');
  });

  it('refuses to touch anything when the previous database of that name exists', async () => {
    const taken = await backup('twice');
    pg.query(`CREATE DATABASE ${restorePreviousDatabase('app', 'twice-restore')}`);
    try {
      const run = await restoreInPlace(taken.dump, taken.checksum, 'twice-restore');
      assert.notEqual(run.code, 0);
      assert.match(run.message, /already exists/);
      assert.equal(pg.query('SELECT count(*) FROM items', 'app'), '90');
    } finally {
      await dropDatabases([restorePreviousDatabase('app', 'twice-restore')]);
    }
    assert.equal(databases(), 'app');
  });

  it('a changed dump is refused before anything is touched', async () => {
    const taken = await backup('changed');
    pg.query('DELETE FROM items WHERE id > 50', 'app');
    const run = await restoreInPlace(taken.dump, `sha256:${'0'.repeat(64)}`);
    assert.notEqual(run.code, 0);
    assert.match(run.message, /checksum mismatch/);
    assert.equal(pg.query('SELECT count(*) FROM items', 'app'), '50', 'the data is as it was');
    assert.equal(databases(), 'app');
  });
});
