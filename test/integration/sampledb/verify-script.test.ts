// The exact scripts a verified backup runs, against a real PostgreSQL server: the backup Job's script records row
// counts (and the user's query) in the dump's snapshot; the verification Job's script restores the dump into a
// temporary server of its own and checks it, and fails on a corrupt or incomplete dump.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BACKUP_SCRIPT, backupScriptEnv, parseBackupResult } from '../../../src/sampledb/scripts/backup.ts';
import { parseVerifyResult, VERIFY_SCRIPT, verifyScriptEnv } from '../../../src/sampledb/scripts/verify.ts';
import {
  findPostgresBinDir,
  type PostgresServer,
  runScript,
  runScriptAsServerUser,
  startPostgres,
} from '../../support/postgres.ts';

describe('verified backups against PostgreSQL', {
  skip: findPostgresBinDir() ? false : 'PostgreSQL is not installed',
}, () => {
  let pg: PostgresServer;
  let runs = 0;
  const backupDir = () => join(pg.scratchDir, 'backups', 'shop');
  const queryFile = () => join(pg.scratchDir, 'verify.sql');

  before(async () => {
    pg = await startPostgres();
    pg.query('CREATE DATABASE shop');
    pg.query(
      `CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL);
       INSERT INTO items SELECT g, 'item ' || g FROM generate_series(1, 250) g;
       CREATE SCHEMA "Audit";
       CREATE TABLE "Audit"."log" (at timestamptz DEFAULT now(), what text);
       INSERT INTO "Audit"."log"(what) VALUES ('one'), ('two');
       CREATE TABLE empty_one (x int);
       GRANT SELECT ON items TO PUBLIC;`,
      'shop',
    );
    writeFileSync(queryFile(), "SELECT sum(id), max(name) FROM items WHERE name LIKE 'item %';\n");
  });
  after(async () => {
    await pg?.stop();
  });

  async function backup(name: string, withQuery = true) {
    const log = join(pg.scratchDir, `termination-${++runs}`);
    const env = {
      ...backupScriptEnv({
        host: pg.host,
        port: pg.port,
        database: 'shop',
        directory: backupDir(),
        backupName: name,
        terminationLog: log,
        ...(withQuery ? { verifyQueryFile: queryFile() } : {}),
      }),
      PATH: pg.path,
      PGUSER: pg.superuser,
      PGPASSWORD: pg.password,
    };
    const run = await runScript(BACKUP_SCRIPT, env);
    assert.equal(run.code, 0, run.stderr);
    const result = parseBackupResult(readFileSync(log, 'utf8'));
    assert.ok(result, run.stdout);
    return { ...result, dump: join(backupDir(), `${name}.dump`), stdout: run.stdout };
  }

  async function verify(dump: string, checksum: string, withQuery = true) {
    const log = join(pg.scratchDir, `termination-${++runs}`);
    writeFileSync(log, '');
    chmodSync(log, 0o666);
    const data = mkdtempSync(join(pg.scratchDir, 'verify-'));
    chmodSync(data, 0o777);
    const run = await runScriptAsServerUser(VERIFY_SCRIPT, {
      ...verifyScriptEnv({
        dump,
        checksum,
        dataDirectory: data,
        terminationLog: log,
        ...(withQuery ? { queryFile: queryFile() } : {}),
      }),
      PATH: pg.path,
    });
    return { ...run, message: readFileSync(log, 'utf8') };
  }

  it('the backup records per-table row counts and the query output of its own snapshot', async () => {
    const taken = await backup('counted');
    assert.equal(
      readFileSync(join(backupDir(), 'counted.counts'), 'utf8'),
      'Audit.log|2\npublic.empty_one|0\npublic.items|250\n',
    );
    assert.equal(readFileSync(join(backupDir(), 'counted.check'), 'utf8'), '31375|item 99\n');
    assert.match(taken.stdout, /"tables":3,"rows":252\}/);
  });

  it('a good backup verifies: restored into a temporary server, counts and query as recorded, restore time measured', async () => {
    const taken = await backup('good');
    // Written after the dump: the verification compares with the snapshot, not with the live database.
    pg.query('INSERT INTO items VALUES (1000, $$late$$)', 'shop');
    const run = await verify(taken.dump, taken.checksum);
    assert.equal(run.code, 0, `${run.stderr}\n${run.message}`);
    const result = parseVerifyResult(run.message);
    assert.deepEqual(result && { ...result, restoreMs: 0 }, {
      verified: true,
      tables: 3,
      rows: 252,
      restoreMs: 0,
      query: true,
    });
    assert.ok(result && result.restoreMs >= 0);
    assert.deepEqual(parseVerifyResult(run.stdout), result);
    pg.query('DELETE FROM items WHERE id = 1000', 'shop');
  });

  it('a dump whose bytes changed after the backup fails on its checksum before anything is restored', async () => {
    const taken = await backup('flipped', false);
    const bytes = readFileSync(taken.dump);
    bytes[bytes.length - 10] = (bytes[bytes.length - 10] ?? 0) ^ 0xff;
    writeFileSync(taken.dump, bytes);
    const run = await verify(taken.dump, taken.checksum, false);
    assert.notEqual(run.code, 0);
    assert.match(run.message, /checksum mismatch for .*flipped\.dump/);
    assert.equal(parseVerifyResult(run.message), undefined);
  });

  it('a truncated dump (checksum recorded after the damage) fails in pg_restore', async () => {
    const taken = await backup('truncated', false);
    truncateSync(taken.dump, Math.floor(taken.sizeBytes / 2));
    const checksum = `sha256:${createHash('sha256').update(readFileSync(taken.dump)).digest('hex')}`;
    const run = await verify(taken.dump, checksum, false);
    assert.notEqual(run.code, 0);
    assert.match(run.message, /pg_restore of .*truncated\.dump failed, the backup cannot be restored/);
  });

  it('a restored copy with other row counts than recorded fails and names the table', async () => {
    const taken = await backup('short', false);
    const counts = join(backupDir(), 'short.counts');
    writeFileSync(counts, readFileSync(counts, 'utf8').replace('public.items|250', 'public.items|251'));
    const run = await verify(taken.dump, taken.checksum, false);
    assert.notEqual(run.code, 0);
    assert.match(run.message, /row counts of the restored copy differ/);
    assert.match(run.message, /recorded public\.items\|251;restored public\.items\|250;/);
  });

  it('a query that returns something else on the restored copy fails the verification', async () => {
    const taken = await backup('queried');
    writeFileSync(join(backupDir(), 'queried.check'), '1|other\n');
    const run = await verify(taken.dump, taken.checksum);
    assert.notEqual(run.code, 0);
    assert.match(run.message, /verification query returned something else/);
  });

  it('a backup without recorded counts cannot be verified, and says why', async () => {
    const taken = await backup('uncounted', false);
    rmSync(join(backupDir(), 'uncounted.counts'));
    const run = await verify(taken.dump, taken.checksum, false);
    assert.notEqual(run.code, 0);
    assert.match(run.message, /recorded no row counts/);
  });
});
