// The exact scripts the init and backup Jobs run, against a real PostgreSQL server.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { passwordFingerprint } from '../../../src/sampledb/credentials.ts';
import { BACKUP_SCRIPT, backupScriptEnv, parseBackupResult } from '../../../src/sampledb/scripts/backup.ts';
import { INIT_SCRIPT, type InitScriptSettings, initScriptEnv } from '../../../src/sampledb/scripts/init.ts';
import {
  OWNER_PASSWORD_SCRIPT,
  ownerPasswordScriptEnv,
  STALE_PASSWORD_EXIT,
} from '../../../src/sampledb/scripts/owner-password.ts';
import { RESTORE_SCRIPT, restoreScriptEnv } from '../../../src/sampledb/scripts/restore.ts';
import { findPostgresBinDir, type PostgresServer, runScript, startPostgres } from '../../support/postgres.ts';

const OWNER_PASSWORD = 'first-Secret-password-0123456789';
const BOOTSTRAP_SQL = `
CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL);
INSERT INTO items VALUES (1, 'apple'), (2, 'pear');
CREATE VIEW item_names AS SELECT name FROM items;
`;

describe('data path against PostgreSQL', {
  skip: findPostgresBinDir() ? false : 'PostgreSQL is not installed',
}, () => {
  let pg: PostgresServer;
  let runs = 0;

  before(async () => {
    pg = await startPostgres();
  });
  after(async () => {
    await pg?.stop();
  });

  const terminationLog = () => join(pg.scratchDir, `termination-${++runs}`);

  /** Runs the init script with the env its Job sets; the Secret-sourced values are given directly. */
  async function init(
    settings: Partial<InitScriptSettings> & { database: string },
    ownerPassword = OWNER_PASSWORD,
  ) {
    const log = terminationLog();
    const env = {
      ...initScriptEnv({
        host: pg.host,
        port: pg.port,
        owner: 'app',
        terminationLog: log,
        waitSeconds: 30,
        ...settings,
      }),
      PATH: pg.path,
      PGUSER: pg.superuser,
      PGPASSWORD: pg.password,
      SAMPLEDB_OWNER_PASSWORD: ownerPassword,
    };
    const result = await runScript(INIT_SCRIPT, env);
    return { ...result, terminationLog: log };
  }

  async function backup(database: string, backupName: string) {
    const log = terminationLog();
    const env = {
      ...backupScriptEnv({
        host: pg.host,
        port: pg.port,
        database,
        directory: join(pg.scratchDir, 'backups', database),
        backupName,
        terminationLog: log,
      }),
      PATH: pg.path,
      PGUSER: pg.superuser,
      PGPASSWORD: pg.password,
    };
    const result = await runScript(BACKUP_SCRIPT, env);
    return {
      ...result,
      terminationLog: log,
      dump: join(pg.scratchDir, 'backups', database, `${backupName}.dump`),
    };
  }

  async function restore(database: string, dump: string, checksum?: string) {
    const log = terminationLog();
    const env = {
      ...restoreScriptEnv({
        host: pg.host,
        port: pg.port,
        database,
        owner: 'app',
        dump,
        terminationLog: log,
        ...(checksum ? { checksum } : {}),
      }),
      PATH: pg.path,
      PGUSER: pg.superuser,
      PGPASSWORD: pg.password,
    };
    return { ...(await runScript(RESTORE_SCRIPT, env)), terminationLog: log };
  }

  /** Runs SQL logged in as a role with a password, the way an application would. */
  async function queryAs(user: string, password: string, database: string, sql: string) {
    return await runScript(`psql -X -tA -v ON_ERROR_STOP=1 -d "${database}" -c "${sql}"`, {
      ...pg.clientEnv(),
      PGUSER: user,
      PGPASSWORD: password,
    });
  }

  const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

  it('init creates the role and database, runs the bootstrap SQL as the owner, and is idempotent', async () => {
    const sqlFile = join(pg.scratchDir, 'bootstrap.sql');
    writeFileSync(sqlFile, BOOTSTRAP_SQL);
    for (const run of [1, 2]) {
      const result = await init({ database: 'app', initSqlFile: sqlFile });
      assert.equal(result.code, 0, `run ${run}: ${result.stderr}`);
    }
    assert.equal(pg.query("SELECT rolcanlogin FROM pg_roles WHERE rolname = 'app'"), 't');
    assert.equal(
      pg.query("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'app'"),
      'app',
      'the database belongs to the owner',
    );
    // Ran once: a second run would have failed on CREATE TABLE or doubled the rows.
    assert.equal(pg.query('SELECT count(*) FROM items', 'app'), '2');
    assert.equal(pg.query("SELECT tableowner FROM pg_tables WHERE tablename = 'items'", 'app'), 'app');
    assert.match(
      pg.query("SELECT checksum FROM sampledb_operator.bootstrap WHERE step = 'init-sql'", 'app'),
      new RegExp(`^sha256:${sha256(sqlFile)}$`),
    );
    const login = await queryAs('app', OWNER_PASSWORD, 'app', 'SELECT count(*) FROM item_names');
    assert.equal(login.stdout.trim(), '2', login.stderr);
  });

  it('init sets the owner password from the Secret on every run', async () => {
    const result = await init({ database: 'app' }, 'rotated-Secret-password-987654321');
    assert.equal(result.code, 0, result.stderr);
    assert.notEqual((await queryAs('app', OWNER_PASSWORD, 'app', 'SELECT 1')).code, 0);
    assert.equal((await queryAs('app', 'rotated-Secret-password-987654321', 'app', 'SELECT 1')).code, 0);
    assert.equal((await init({ database: 'app' })).code, 0);
  });

  it('init takes superuser rights from a pre-existing owner role: applications never log in as a superuser', async () => {
    pg.query('CREATE ROLE was_super LOGIN SUPERUSER CREATEROLE REPLICATION BYPASSRLS');
    const result = await init({ database: 'legacy', owner: 'was_super' });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(
      pg.query(
        "SELECT rolsuper OR rolcreaterole OR rolreplication OR rolbypassrls FROM pg_roles WHERE rolname = 'was_super'",
      ),
      'f',
    );
    assert.equal(pg.query("SELECT rolsuper FROM pg_roles WHERE rolname = 'app'"), 'f');
  });

  it('the password Job changes the owner password (the old one stops working), only for the password it is for', async () => {
    const run = async (ownerPassword: string, fingerprintFor: string) => {
      const env = {
        ...ownerPasswordScriptEnv({
          host: pg.host,
          port: pg.port,
          owner: 'app',
          fingerprint: passwordFingerprint(pg.password, fingerprintFor),
          waitSeconds: 30,
          terminationLog: terminationLog(),
        }),
        PATH: pg.path,
        PGUSER: pg.superuser,
        PGPASSWORD: pg.password,
        SAMPLEDB_OWNER_PASSWORD: ownerPassword,
      };
      return await runScript(OWNER_PASSWORD_SCRIPT, env);
    };
    assert.equal((await init({ database: 'app' })).code, 0);
    const stale = await run('changed-again-0123456789', 'rotated-password-0123456789');
    assert.equal(stale.code, STALE_PASSWORD_EXIT, stale.stderr);
    assert.equal((await queryAs('app', OWNER_PASSWORD, 'app', 'SELECT 1')).code, 0, 'nothing changed');

    const rotated = await run('rotated-password-0123456789', 'rotated-password-0123456789');
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.notEqual(
      (await queryAs('app', OWNER_PASSWORD, 'app', 'SELECT 1')).code,
      0,
      'the old password fails',
    );
    assert.equal((await queryAs('app', 'rotated-password-0123456789', 'app', 'SELECT 1')).code, 0);
    assert.ok(!`${rotated.stdout}${rotated.stderr}`.includes('rotated-password'), 'no password in the log');
    assert.equal((await init({ database: 'app' })).code, 0);
  });

  it('a failing bootstrap SQL fails the Job, leaves nothing half-done, and a fixed one runs on retry', async () => {
    const sqlFile = join(pg.scratchDir, 'broken.sql');
    writeFileSync(sqlFile, 'CREATE TABLE half (id int);\nCRATE TABLE typo (id int);\n');
    const failed = await init({ database: 'broken', initSqlFile: sqlFile });
    assert.notEqual(failed.code, 0);
    assert.match(failed.stderr, /syntax error at or near "CRATE"/);
    assert.equal(pg.query("SELECT count(*) FROM pg_tables WHERE tablename = 'half'", 'broken'), '0');
    assert.equal(pg.query('SELECT count(*) FROM sampledb_operator.bootstrap', 'broken'), '0');

    writeFileSync(sqlFile, 'CREATE TABLE half (id int);\n');
    const fixed = await init({ database: 'broken', initSqlFile: sqlFile });
    assert.equal(fixed.code, 0, fixed.stderr);
    assert.equal(pg.query("SELECT count(*) FROM pg_tables WHERE tablename = 'half'", 'broken'), '1');
  });

  it('init fails with a clear message when the server never answers', async () => {
    const result = await runScript(INIT_SCRIPT, {
      ...initScriptEnv({
        host: '127.0.0.1',
        port: 1,
        database: 'app',
        owner: 'app',
        waitSeconds: 1,
        terminationLog: terminationLog(),
      }),
      PATH: pg.path,
      PGUSER: 'x',
      PGPASSWORD: 'x',
      SAMPLEDB_OWNER_PASSWORD: 'x',
    });
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /did not accept connections within 1 seconds/);
  });

  it('backup writes the dump, its sha256 and a JSON result; restore into a fresh database gives the same data', async () => {
    const taken = await backup('app', 'nightly-1');
    assert.equal(taken.code, 0, taken.stderr);
    const stdoutResult = parseBackupResult(taken.stdout);
    const terminationMessage = readFileSync(taken.terminationLog, 'utf8');
    assert.ok(stdoutResult, `no result in ${taken.stdout}`);
    assert.deepEqual(parseBackupResult(terminationMessage), stdoutResult);
    assert.equal(stdoutResult.sizeBytes, statSync(taken.dump).size);
    assert.equal(stdoutResult.checksum, `sha256:${sha256(taken.dump)}`);
    assert.equal(readFileSync(`${taken.dump}.sha256`, 'utf8'), `${sha256(taken.dump)}  nightly-1.dump\n`);

    pg.query('CREATE DATABASE copy OWNER app');
    const restored = await restore('copy', taken.dump, stdoutResult.checksum);
    assert.equal(restored.code, 0, restored.stderr);
    const rows = (db: string) => pg.query('SELECT id, name FROM items ORDER BY id', db);
    assert.equal(rows('copy'), rows('app'));
    assert.equal(pg.query("SELECT tableowner FROM pg_tables WHERE tablename = 'items'", 'copy'), 'app');
    assert.equal(pg.query('SELECT count(*) FROM item_names', 'copy'), '2');
  });

  it('init restores a backup once (bootstrap.fromBackup) and never again on a re-run', async () => {
    const dump = join(pg.scratchDir, 'backups', 'app', 'nightly-1.dump');
    const first = await init({
      database: 'restored',
      restoreDump: dump,
      restoreChecksum: `sha256:${sha256(dump)}`,
    });
    assert.equal(first.code, 0, first.stderr);
    assert.equal(pg.query('SELECT count(*) FROM items', 'restored'), '2');
    pg.query("INSERT INTO items VALUES (3, 'written after the restore')", 'restored');
    const again = await init({
      database: 'restored',
      restoreDump: dump,
      restoreChecksum: `sha256:${sha256(dump)}`,
    });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(
      pg.query('SELECT count(*) FROM items', 'restored'),
      '3',
      'a re-run must not restore over new data',
    );
  });

  it('restore refuses a tampered dump and leaves the target database untouched', async () => {
    const original = join(pg.scratchDir, 'backups', 'app', 'nightly-1.dump');
    const tamperedDir = join(pg.scratchDir, 'tampered');
    await runScript(`mkdir -p "${tamperedDir}"`, pg.clientEnv());
    const tampered = join(tamperedDir, 'nightly-1.dump');
    copyFileSync(original, tampered);
    copyFileSync(`${original}.sha256`, `${tampered}.sha256`);
    const bytes = readFileSync(tampered);
    const last = bytes.length - 1;
    bytes[last] = (bytes[last] ?? 0) ^ 0xff;
    writeFileSync(tampered, bytes);

    pg.query('CREATE DATABASE target OWNER app');
    pg.query('CREATE TABLE marker (id int)', 'target');
    for (const checksum of [undefined, `sha256:${sha256(original)}`]) {
      const refused = await restore('target', tampered, checksum);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /checksum mismatch/);
      assert.match(readFileSync(refused.terminationLog, 'utf8'), /checksum mismatch .* refusing to restore/);
    }
    assert.equal(
      pg.query("SELECT count(*) FROM pg_tables WHERE tablename IN ('marker', 'items')", 'target'),
      '1',
    );

    const wrongExpected = await restore('target', original, `sha256:${'0'.repeat(64)}`);
    assert.notEqual(wrongExpected.code, 0);
    assert.match(wrongExpected.stderr, /checksum mismatch/);
  });
});
