// The major upgrade Jobs' scripts, run as their containers run them, against real PostgreSQL binaries: the init
// container's copy of the old installation (with its wrappers), then preflight, upgrade, rollback and cleanup on a
// real data directory. With one installed major (the machine's) it upgrades that major to itself, which pg_upgrade
// allows and which runs every line of the scripts; PG_OLD_BIN_ROOT / PG_NEW_BIN_DIR point it at two majors.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  COPY_OLD_BINARIES_SCRIPT,
  UPGRADE_SCRIPT,
  type UpgradeMode,
  upgradeScriptEnv,
} from '../../../src/sampledb/scripts/upgrade.ts';
import { findPostgresBinDir } from '../../support/postgres.ts';

const NEW_BIN = process.env.PG_NEW_BIN_DIR ?? findPostgresBinDir();
const OLD_MAJOR = Number(process.env.PG_OLD_MAJOR ?? NEW_BIN?.match(/postgresql\/(\d+)\//)?.[1] ?? 0);
const NEW_MAJOR = Number(NEW_BIN?.match(/postgresql\/(\d+)\//)?.[1] ?? 0);
const OLD_SOURCE_BIN = process.env.PG_OLD_BIN_DIR ?? `/usr/lib/postgresql/${OLD_MAJOR}/bin`;
const isRoot = process.getuid?.() === 0;
const SUPERUSER = 'sampledb_admin';

interface Run {
  code: number | null;
  out: string;
  message: string;
}

describe('major upgrade scripts against PostgreSQL', {
  skip: NEW_BIN && existsSync(join(OLD_SOURCE_BIN, 'postgres')) ? false : 'PostgreSQL is not installed',
}, () => {
  let root: string;
  let data: string;
  let oldRoot: string;
  let runs = 0;

  /** As the postgres OS user when we are root (PostgreSQL refuses to run as root), with exactly `env`. */
  async function sh(script: string, env: Record<string, string>): Promise<Run> {
    const log = join(root, `termination-${++runs}`);
    const fullEnv = { PATH: '/usr/bin:/bin', ...env, SAMPLEDB_TERMINATION_LOG: log };
    const envArgs = Object.entries(fullEnv).map(([k, v]) => `${k}=${v}`);
    const [cmd, args] = isRoot
      ? ['runuser', ['-u', 'postgres', '--', 'env', '-i', ...envArgs, 'sh', '-c', script]]
      : ['env', ['-i', ...envArgs, 'sh', '-c', script]];
    return await new Promise((resolve, reject) => {
      const child = spawn(cmd, args as string[], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (c) => {
        out += c;
      });
      child.stderr.on('data', (c) => {
        out += c;
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
      child.once('error', reject);
      child.once('close', (code) => {
        clearTimeout(timer);
        resolve({ code, out, message: existsSync(log) ? readFileSync(log, 'utf8').trim() : '' });
      });
    });
  }

  const upgrade = (mode: UpgradeMode) =>
    sh(UPGRADE_SCRIPT, {
      ...upgradeScriptEnv({
        mode,
        oldMajor: OLD_MAJOR,
        newMajor: NEW_MAJOR,
        dataDirectory: data,
        oldRoot,
        newBinDir: NEW_BIN as string,
        socketDirectory: join(root, 'sockets'),
      }),
      PGUSER: SUPERUSER,
    });

  /** SQL on a server of our own over the data directory (started and stopped around it). */
  async function query(bin: string, sql: string): Promise<string> {
    const run = await sh(
      `
set -eu
"$BIN/pg_ctl" -D "$DATA/pgdata" -l "$ROOT/q.log" -w -o "-p 50499 -c listen_addresses='' -c unix_socket_directories=$ROOT" start > /dev/null
"$BIN/psql" -X -At -v ON_ERROR_STOP=1 -h "$ROOT" -p 50499 -U "$PGUSER" -d app -c "$SQL" || { "$BIN/pg_ctl" -D "$DATA/pgdata" -m fast -w stop > /dev/null; exit 1; }
"$BIN/pg_ctl" -D "$DATA/pgdata" -m fast -w stop > /dev/null
`,
      { BIN: bin, DATA: data, ROOT: root, SQL: sql, PGUSER: SUPERUSER },
    );
    assert.equal(run.code, 0, run.out);
    return run.out.trim();
  }

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'sampledb-upgrade-'));
    data = join(root, 'data');
    oldRoot = join(root, 'old');
    for (const dir of [data, oldRoot, join(root, 'sockets')]) mkdirSync(dir);
    if (isRoot) {
      const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
      const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
      for (const dir of [root, data, oldRoot, join(root, 'sockets')]) chownSync(dir, uid, gid);
    }
    // As the image's entrypoint creates it: the Secret's user as the install user, local trust.
    const init = await sh(
      `"$BIN/initdb" -D "$DATA/pgdata" -U "$PGUSER" --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C > /dev/null`,
      { BIN: OLD_SOURCE_BIN, DATA: data, PGUSER: SUPERUSER },
    );
    assert.equal(init.code, 0, init.out);
    const setup = await sh(
      `
set -eu
"$BIN/pg_ctl" -D "$DATA/pgdata" -l "$ROOT/setup.log" -w -o "-p 50498 -c listen_addresses='' -c unix_socket_directories=$ROOT" start > /dev/null
"$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$ROOT" -p 50498 -U "$PGUSER" -d postgres -c 'CREATE DATABASE app'
"$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$ROOT" -p 50498 -U "$PGUSER" -d app <<'SQL'
CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL);
INSERT INTO items SELECT g, 'item ' || g FROM generate_series(1, 1000) g;
CREATE SCHEMA "Sales";
CREATE TABLE "Sales"."order lines" (id bigint, qty integer);
INSERT INTO "Sales"."order lines" SELECT g, g % 7 FROM generate_series(1, 250) g;
CREATE TABLE sampledb_migrations (name text PRIMARY KEY);
INSERT INTO sampledb_migrations VALUES ('0001-items');
SQL
# Left running and then killed, as a pod would be: the upgrade must cope with files not cleanly shut down.
"$BIN/pg_ctl" -D "$DATA/pgdata" -m immediate -w stop > /dev/null
`,
      { BIN: OLD_SOURCE_BIN, DATA: data, ROOT: root, PGUSER: SUPERUSER },
    );
    assert.equal(setup.code, 0, setup.out);
    // The init container, in the old image.
    const copy = await sh(COPY_OLD_BINARIES_SCRIPT, {
      SAMPLEDB_OLD_MAJOR: String(OLD_MAJOR),
      SAMPLEDB_OLD_ROOT: oldRoot,
      PATH: '/usr/bin:/bin',
    });
    assert.equal(copy.code, 0, copy.out);
  });

  after(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const counts = () =>
    query(
      NEW_BIN as string,
      `SELECT (SELECT count(*) FROM items) || ',' || (SELECT count(*) FROM "Sales"."order lines")`,
    );

  it('the copied old installation runs from its new place through the wrappers', () => {
    const bin = join(oldRoot, 'wrappers');
    const version = spawnSync(join(bin, 'postgres'), ['-V'], { encoding: 'utf8' });
    assert.equal(version.status, 0, version.stderr);
    assert.match(version.stdout, new RegExp(`\\(PostgreSQL\\) ${OLD_MAJOR}\\.`));
    // Its lib and share directories are the copied ones, not the machine's (which the new image does not have):
    // PostgreSQL relocates only when its binary still sits in a directory called bin.
    const paths = spawnSync(join(bin, 'pg_config'), ['--pkglibdir', '--sharedir'], { encoding: 'utf8' });
    assert.equal(paths.status, 0, paths.stderr);
    assert.deepEqual(paths.stdout.trim().split('\n'), [
      join(oldRoot, `usr/lib/postgresql/${OLD_MAJOR}/lib`),
      join(oldRoot, `usr/share/postgresql/${OLD_MAJOR}`),
    ]);
  });

  it('preflight passes pg_upgrade --check and leaves the files as they were', async () => {
    const run = await upgrade('preflight');
    assert.equal(run.code, 0, run.out);
    assert.match(
      run.message,
      new RegExp(`preflight passed: pg_upgrade --check from ${OLD_MAJOR} to ${NEW_MAJOR}`),
    );
    assert.equal(existsSync(join(data, `pgdata-${NEW_MAJOR}.staged`)), false);
  });

  it('upgrade converts the files, compares per-table row counts and keeps the old files aside', async () => {
    const run = await upgrade('upgrade');
    assert.equal(run.code, 0, run.out);
    assert.match(run.message, /row counts of 3 tables equal/);
    assert.equal(readFileSync(join(data, 'pgdata/PG_VERSION'), 'utf8').trim(), String(NEW_MAJOR));
    assert.ok(existsSync(join(data, `pgdata-${OLD_MAJOR}.old/PG_VERSION`)), 'old files kept');
    assert.equal(await counts(), '1000,250');
    // Run again (a Job retried after a kill): nothing more happens.
    const again = await upgrade('upgrade');
    assert.equal(again.code, 0, again.out);
    assert.match(again.message, /already upgraded/);
  });

  it('rollback puts the old files back; the old server serves the same rows', async () => {
    await query(NEW_BIN as string, 'INSERT INTO items VALUES (5000, $$written on the new server$$)');
    const run = await upgrade('rollback');
    assert.equal(run.code, 0, run.out);
    assert.match(run.message, /rolled back/);
    assert.equal(await query(OLD_SOURCE_BIN, 'SELECT count(*) FROM items'), '1000');
    assert.equal(existsSync(join(data, `pgdata-${OLD_MAJOR}.old`)), false);
  });

  it('finishes a swap interrupted between its two renames', async () => {
    assert.equal((await upgrade('upgrade')).code, 0);
    // Killed after `mv pgdata aside`, before `mv staged pgdata`.
    spawnSync('mv', [join(data, 'pgdata'), join(data, `pgdata-${NEW_MAJOR}.staged`)]);
    const run = await upgrade('upgrade');
    assert.equal(run.code, 0, run.out);
    assert.match(run.message, /already upgraded/);
    assert.equal(await counts(), '1000,250');
  });

  it('cleanup removes the old files only when pgdata is the new major', async () => {
    const run = await upgrade('cleanup');
    assert.equal(run.code, 0, run.out);
    assert.equal(existsSync(join(data, `pgdata-${OLD_MAJOR}.old`)), false);
    assert.equal(await counts(), '1000,250');
  });

  it('refuses files of another major than the old one, and says which', async () => {
    const pgVersion = join(data, 'pgdata/PG_VERSION');
    const original = readFileSync(pgVersion, 'utf8');
    const chmod = spawnSync(
      isRoot ? 'runuser' : 'sh',
      isRoot
        ? ['-u', 'postgres', '--', 'sh', '-c', `echo 9 > ${pgVersion}`]
        : ['-c', `echo 9 > ${pgVersion}`],
    );
    assert.equal(chmod.status, 0);
    try {
      const run = await upgrade('preflight');
      assert.equal(run.code, 1);
      assert.match(run.message, /the data files are PostgreSQL 9, not \d+: refusing to upgrade them/);
    } finally {
      spawnSync(
        isRoot ? 'runuser' : 'sh',
        isRoot
          ? ['-u', 'postgres', '--', 'sh', '-c', `printf '%s' '${original}' > ${pgVersion}`]
          : ['-c', `printf '%s' '${original}' > ${pgVersion}`],
      );
    }
  });
});
