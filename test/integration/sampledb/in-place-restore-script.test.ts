// The in-place restore Job's script against a real PostgreSQL server: deleted rows come back, an open session is
// ended, and a restore whose result differs from the backup's recorded row counts fails as a verification failure.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BACKUP_SCRIPT, backupScriptEnv, parseBackupResult } from '../../../src/sampledb/scripts/backup.ts';
import {
  IN_PLACE_RESTORE_SCRIPT,
  inPlaceRestoreEnv,
  parseInPlaceRestoreResult,
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

  async function restoreInPlace(dump: string, checksum: string) {
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
          terminationLog: log,
        }),
      ),
    );
    return { ...run, message: readFileSync(log, 'utf8') };
  }

  it('brings deleted rows back and checks them against the recorded counts', async () => {
    const taken = await backup('before-delete');
    pg.query('DELETE FROM items WHERE id > 10', 'app');
    assert.equal(pg.query('SELECT count(*) FROM items', 'app'), '10');
    const run = await restoreInPlace(taken.dump, taken.checksum);
    assert.equal(run.code, 0, `${run.stderr}\n${run.message}`);
    assert.deepEqual(parseInPlaceRestoreResult(run.message), { restored: true, tables: 1 });
    assert.equal(pg.query('SELECT count(*) FROM items', 'app'), '100');
    assert.equal(pg.query("SELECT tableowner FROM pg_tables WHERE tablename = 'items'", 'app'), 'app');
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
    } finally {
      pg.query('DROP TABLE IF EXISTS audit', 'app');
    }
  });

  it('a result that differs from the recorded counts fails as a verification failure', async () => {
    const taken = await backup('tampered');
    const counts = join(dir(), 'tampered.counts');
    writeFileSync(counts, readFileSync(counts, 'utf8').replace('public.items|100', 'public.items|101'));
    const run = await restoreInPlace(taken.dump, taken.checksum);
    assert.notEqual(run.code, 0);
    assert.ok(run.message.startsWith(VERIFY_FAILURE_PREFIX), run.message);
    assert.match(run.message, /public\.items\|101/);
  });

  it('a changed dump is refused before anything is touched', async () => {
    const taken = await backup('changed');
    pg.query('DELETE FROM items WHERE id > 50', 'app');
    const run = await restoreInPlace(taken.dump, `sha256:${'0'.repeat(64)}`);
    assert.notEqual(run.code, 0);
    assert.match(run.message, /checksum mismatch/);
    assert.equal(pg.query('SELECT count(*) FROM items', 'app'), '50', 'the data is as it was');
  });
});
