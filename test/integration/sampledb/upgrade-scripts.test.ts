// The major upgrade Jobs' scripts, run as their containers run them, against real PostgreSQL binaries: the init
// container's copy of the old installation (with its wrappers), then preflight, upgrade, rollback and cleanup on a
// real data directory. Twice: with the machine's one installed major upgraded to itself (which pg_upgrade allows and
// which runs every line of the scripts; PG_OLD_BIN_DIR / PG_NEW_BIN_DIR point it at two majors), and 15 → 17 in the
// root file systems of the locally built images (bookworm's 15, trixie's 17), each script run in the image its
// container runs in, as the images' postgres user: what the Jobs do, without the cluster.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
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
import { IMAGE_POSTGRES_ID, inImage, postgresImageRootfs } from '../../support/postgres-image.ts';

const HOST_NEW_BIN = process.env.PG_NEW_BIN_DIR ?? findPostgresBinDir();
const HOST_OLD_MAJOR = Number(
  process.env.PG_OLD_MAJOR ?? HOST_NEW_BIN?.match(/postgresql\/(\d+)\//)?.[1] ?? 0,
);
const isRoot = process.getuid?.() === 0;
const SUPERUSER = 'sampledb_admin';

interface Run {
  code: number | null;
  out: string;
  message: string;
}

/** Where the scripts run: the old major's side (init container, initdb) and the new major's (the Job). */
interface Sides {
  oldMajor: number;
  newMajor: number;
  /** The old major's own binaries, where they are installed (initdb and the test's own servers). */
  oldBin: string;
  newBin: string;
  /** The command that runs `script` (sh) on that side with exactly `env`; `binds`: the test's directories. */
  command(
    side: 'old' | 'new',
    binds: string[],
    env: Record<string, string>,
    script: string,
  ): [string, string[]];
  /** The owner of the test's directories. */
  owner(): { uid: number; gid: number } | undefined;
  /** Forgets a directory `command` was given (its mount point in an image's root file system). */
  release?(dir: string): void;
}

const hostSides = (): Sides | undefined => {
  const oldBin = process.env.PG_OLD_BIN_DIR ?? `/usr/lib/postgresql/${HOST_OLD_MAJOR}/bin`;
  if (!HOST_NEW_BIN || !existsSync(join(oldBin, 'postgres'))) return undefined;
  return {
    oldMajor: HOST_OLD_MAJOR,
    newMajor: Number(HOST_NEW_BIN.match(/postgresql\/(\d+)\//)?.[1] ?? 0),
    oldBin,
    newBin: HOST_NEW_BIN,
    // As the postgres OS user when we are root (PostgreSQL refuses to run as root).
    command: (_side, _binds, env, script) => {
      const envArgs = Object.entries(env).map(([k, v]) => `${k}=${v}`);
      return isRoot
        ? ['runuser', ['-u', 'postgres', '--', 'env', '-i', ...envArgs, 'sh', '-c', script]]
        : ['env', ['-i', ...envArgs, 'sh', '-c', script]];
    },
    owner: () => {
      if (!isRoot) return undefined;
      const id = (flag: string) =>
        Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
      return { uid: id('-u'), gid: id('-g') };
    },
  };
};

const imageSides = (): Sides | undefined => {
  const oldRootfs = postgresImageRootfs(15);
  const newRootfs = postgresImageRootfs(17);
  if (!oldRootfs || !newRootfs) return undefined;
  return {
    oldMajor: 15,
    newMajor: 17,
    oldBin: '/usr/lib/postgresql/15/bin',
    newBin: '/usr/lib/postgresql/17/bin',
    command: (side, binds, env, script) =>
      inImage(side === 'old' ? oldRootfs : newRootfs, binds, env, script),
    owner: () => ({ uid: IMAGE_POSTGRES_ID, gid: IMAGE_POSTGRES_ID }),
    release: (dir) => {
      for (const rootfs of [oldRootfs, newRootfs])
        try {
          rmdirSync(join(rootfs, dir));
        } catch {}
    },
  };
};

function describeUpgradeScripts(title: string, sides: Sides | undefined, skip: string): void {
  describe(title, { skip: sides ? false : skip }, () => {
    if (!sides) return;
    scriptTests(sides);
  });
}

describeUpgradeScripts(
  "major upgrade scripts against the machine's PostgreSQL",
  hostSides(),
  'PostgreSQL is not installed',
);
describeUpgradeScripts(
  "major upgrade scripts, 15 → 17, in the built images' root file systems",
  imageSides(),
  'the postgres-15 and postgres-17 images are not built (scripts/build-images.sh), or not root',
);

function scriptTests(sides: Sides): void {
  const { oldMajor: OLD_MAJOR, newMajor: NEW_MAJOR, oldBin: OLD_SOURCE_BIN, newBin: NEW_BIN } = sides;
  let root: string;
  let data: string;
  let oldRoot: string;
  let runs = 0;

  /** `script` on one side, with exactly `env` (and a termination log of its own). */
  async function sh(script: string, env: Record<string, string>, side: 'old' | 'new' = 'new'): Promise<Run> {
    const log = join(root, `termination-${++runs}`);
    const fullEnv = { PATH: '/usr/bin:/bin', ...env, SAMPLEDB_TERMINATION_LOG: log };
    const [cmd, args] = sides.command(side, [root], fullEnv, script);
    return await new Promise((resolve, reject) => {
      // cwd: the test's own directory (owned by the server's user); the checkout may not be readable by that user.
      const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
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
    const side = bin === OLD_SOURCE_BIN ? 'old' : 'new';
    const run = await sh(
      `
set -eu
"$BIN/pg_ctl" -D "$DATA/pgdata" -l "$ROOT/q.log" -w -o "-p 50499 -c listen_addresses='' -c unix_socket_directories=$ROOT" start > /dev/null
"$BIN/psql" -X -At -v ON_ERROR_STOP=1 -h "$ROOT" -p 50499 -U "$PGUSER" -d app -c "$SQL" || { "$BIN/pg_ctl" -D "$DATA/pgdata" -m fast -w stop > /dev/null; exit 1; }
"$BIN/pg_ctl" -D "$DATA/pgdata" -m fast -w stop > /dev/null
`,
      { BIN: bin, DATA: data, ROOT: root, SQL: sql, PGUSER: SUPERUSER },
      side,
    );
    assert.equal(run.code, 0, run.out);
    return run.out.trim();
  }

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'sampledb-upgrade-'));
    data = join(root, 'data');
    oldRoot = join(root, 'old');
    for (const dir of [data, oldRoot, join(root, 'sockets')]) mkdirSync(dir);
    const owner = sides.owner();
    if (owner)
      for (const dir of [root, data, oldRoot, join(root, 'sockets')]) chownSync(dir, owner.uid, owner.gid);
    // As the image's entrypoint creates it: the Secret's user as the install user, local trust.
    const init = await sh(
      `"$BIN/initdb" -D "$DATA/pgdata" -U "$PGUSER" --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C > /dev/null`,
      { BIN: OLD_SOURCE_BIN, DATA: data, PGUSER: SUPERUSER },
      'old',
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
      'old',
    );
    assert.equal(setup.code, 0, setup.out);
    // The init container, in the old image.
    const copy = await sh(
      COPY_OLD_BINARIES_SCRIPT,
      { SAMPLEDB_OLD_MAJOR: String(OLD_MAJOR), SAMPLEDB_OLD_ROOT: oldRoot, PATH: '/usr/bin:/bin' },
      'old',
    );
    assert.equal(copy.code, 0, copy.out);
  });

  after(() => {
    if (root) rmSync(root, { recursive: true, force: true });
    if (root) sides.release?.(root);
  });

  const counts = () =>
    query(
      NEW_BIN as string,
      `SELECT (SELECT count(*) FROM items) || ',' || (SELECT count(*) FROM "Sales"."order lines")`,
    );

  it('the copied old installation runs from its new place through the wrappers', async () => {
    // Where the Job's main container runs it: the new major's side.
    const bin = join(oldRoot, 'wrappers');
    const version = await sh('"$W/postgres" -V', { W: bin });
    assert.equal(version.code, 0, version.out);
    assert.match(version.out, new RegExp(`\\(PostgreSQL\\) ${OLD_MAJOR}\\.`));
    // Its lib and share directories are the copied ones, not the machine's (which the new image does not have):
    // PostgreSQL relocates only when its binary still sits in a directory called bin.
    const paths = await sh('"$W/pg_config" --pkglibdir --sharedir', { W: bin });
    assert.equal(paths.code, 0, paths.out);
    assert.deepEqual(paths.out.trim().split('\n'), [
      join(oldRoot, `usr/lib/postgresql/${OLD_MAJOR}/lib`),
      join(oldRoot, `usr/share/postgresql/${OLD_MAJOR}`),
    ]);
  });

  it('a preflight refused by pg_upgrade --check names the failed check and the offending column first', async () => {
    await query(OLD_SOURCE_BIN, "CREATE TABLE procs (p regproc); INSERT INTO procs VALUES ('now')");
    try {
      const run = await upgrade('preflight');
      assert.equal(run.code, 1, run.out);
      const [first] = run.message.split('\n');
      assert.match(
        first ?? '',
        /^pg_upgrade --check failed: Checking for reg\* data types in user tables: In database: app public\.procs\.p$/,
        `${run.message}\n--- pg_upgrade's output:\n${readFileSync(join(data, `sampledb-upgrade-${NEW_MAJOR}/pg_upgrade.log`), 'utf8')}`,
      );
      assert.ok(run.message.length < 1500, run.message);
    } finally {
      await query(OLD_SOURCE_BIN, 'DROP TABLE procs');
    }
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
    const edit = await sh('echo 9 > "$F"', { F: pgVersion }, 'old');
    assert.equal(edit.code, 0, edit.out);
    try {
      const run = await upgrade('preflight');
      assert.equal(run.code, 1);
      assert.match(run.message, /the data files are PostgreSQL 9, not \d+: refusing to upgrade them/);
    } finally {
      await sh(`printf '%s\\n' '${original.trim()}' > "$F"`, { F: pgVersion }, 'old');
    }
  });
}
