// fill-disk's scripts as its Jobs run them, against real file systems and a real PostgreSQL: the fill script refuses
// a directory on this machine's own disk (a file system far larger than the claim) and a volume without a data
// directory, writing nothing; on a small XFS volume of its own (a loop device, as the real node's volumes are) it
// fills the volume under a running server, holds, and removes the ballast itself; the probe, started on the full
// volume, sees a write refused and then accepted after the removal, with the canary row intact. A TERM during the hold
// removes the ballast at once; the release script removes one left behind.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pollUntil } from '../../../src/envtest/index.ts';
import {
  DRILL_CANARY_SCRIPT,
  DRILL_PROBE_SCRIPT,
  drillScriptEnv,
  parseProbeResult,
} from '../../../src/sampledb/scripts/drill.ts';
import {
  BALLAST_FILE,
  DRILL_FILL_SCRIPT,
  DRILL_RELEASE_SCRIPT,
  fillScriptEnv,
  parseFillResult,
  parseReleaseResult,
} from '../../../src/sampledb/scripts/drill-fill.ts';
import {
  findPostgresBinDir,
  type PostgresServer,
  runScriptAsServerUser,
  startPostgres,
} from '../../support/postgres.ts';

const MIB = 2 ** 20;
const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
const canLoopMount = process.getuid?.() === 0 && has('mkfs.xfs') && has('losetup');
const skip = !findPostgresBinDir()
  ? 'PostgreSQL is not installed'
  : !canLoopMount
    ? 'needs root, mkfs.xfs and losetup for a volume of its own'
    : false;

const readResult = (file: string) =>
  existsSync(file) ? execFileSync('cat', [file], { encoding: 'utf8' }) : '';

describe('fill-disk scripts on real file systems', { skip, timeout: 300_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'sampledb-fill-'));
  const image = join(work, 'volume.img');
  const mountPoint = join(work, 'volume');
  let device = '';
  let pg: PostgresServer;
  let runs = 0;
  const logs = join(work, 'logs');
  const log = () => join(logs, `termination-${++runs}`);

  before(async () => {
    execFileSync('chmod', ['755', work]);
    mkdirSync(logs);
    execFileSync('chmod', ['777', logs]);
    execFileSync('truncate', ['-s', String(300 * MIB), image]);
    execFileSync('mkfs.xfs', ['-q', image]);
    device = execFileSync('losetup', ['--find', '--show', image], { encoding: 'utf8' }).trim();
    mkdirSync(mountPoint);
    execFileSync('mount', ['-t', 'xfs', device, mountPoint]);
    execFileSync('chmod', ['755', mountPoint]);
    pg = await startPostgres({ in: mountPoint });
  });
  after(async () => {
    await pg?.stop();
    spawnSync('umount', [mountPoint]);
    if (device) spawnSync('losetup', ['-d', device]);
    rmSync(work, { recursive: true, force: true });
  });

  /** The fill script's env for a volume at `dir` whose data directory is `dir/data`. */
  const fillEnv = (dir: string, claimBytes: number, terminationLog: string, holdSeconds = 1) => ({
    ...fillScriptEnv({ volumeDir: dir, dataDir: 'data', claimBytes, holdSeconds, terminationLog }),
    SAMPLEDB_FILL_MARKER: join(logs, `filled-${runs}`),
    PATH: process.env.PATH ?? '/usr/bin:/bin',
  });

  it('refuses a directory on the machine’s own disk, writing nothing', async () => {
    const shared = mkdtempSync(join(work, 'shared-'));
    mkdirSync(join(shared, 'data'));
    writeFileSync(join(shared, 'data', 'PG_VERSION'), '15\n');
    execFileSync('chmod', ['-R', 'a+rwX', shared]);
    const terminationLog = log();
    const run = await runScriptAsServerUser(DRILL_FILL_SCRIPT, fillEnv(shared, 100 * MIB, terminationLog));
    assert.equal(run.code, 0, run.stderr);
    const result = parseFillResult(readResult(terminationLog));
    assert.ok(result && 'unsafe' in result, readResult(terminationLog));
    assert.match(result.unsafe, /file system holds \d+ MiB but its claim 100 MiB: it is shared/);
    assert.equal(existsSync(join(shared, BALLAST_FILE)), false);
  });

  it('refuses a volume without a PostgreSQL data directory', async () => {
    const empty = mkdtempSync(join(mountPoint, 'empty-'));
    execFileSync('chmod', ['777', empty]);
    const terminationLog = log();
    const run = await runScriptAsServerUser(DRILL_FILL_SCRIPT, fillEnv(empty, 300 * MIB, terminationLog));
    assert.equal(run.code, 1);
    assert.match(readResult(terminationLog), /holds no PostgreSQL data directory/);
    assert.equal(existsSync(join(empty, BALLAST_FILE)), false);
  });

  it('fills the volume under a running server; the probe sees a write refused, then accepted after the release', async () => {
    const volume = join(pg.dataDir, '..');
    const db = (terminationLog: string, fillSeconds = 0) => ({
      ...drillScriptEnv({
        host: pg.host,
        port: pg.port,
        run: 'ns/fill/1',
        replicas: 0,
        terminationLog,
        fillSeconds,
      }),
      PATH: pg.path,
      PGUSER: pg.superuser,
      PGPASSWORD: pg.password,
    });
    const canary = await runScriptAsServerUser(DRILL_CANARY_SCRIPT, db(log()));
    assert.equal(canary.code, 0, canary.stderr);

    const fillLog = log();
    const env = fillEnv(volume, 300 * MIB, fillLog, 8);
    const filling = runScriptAsServerUser(DRILL_FILL_SCRIPT, env);
    await pollUntil('the volume is full', async () => existsSync(env.SAMPLEDB_FILL_MARKER) || undefined, {
      timeoutMs: 60_000,
      intervalMs: 100,
    });
    const free = Number(execFileSync('df', ['-Pk', volume], { encoding: 'utf8' }).trim().split(/\s+/).at(-3));
    assert.ok(free < 1024, `at most 1 MiB left on the full volume, found ${free} KiB`);
    assert.ok(statSync(join(volume, BALLAST_FILE)).size > 150 * MIB);

    const probeLog = log();
    const probing = runScriptAsServerUser(DRILL_PROBE_SCRIPT, db(probeLog, 20));
    const [filled, probed] = await Promise.all([filling, probing]);
    assert.equal(filled.code, 0, filled.stderr);
    assert.equal(probed.code, 0, probed.stderr);
    const fill = parseFillResult(readResult(fillLog));
    const probe = parseProbeResult(readResult(probeLog));
    assert.ok(fill && 'filledBytes' in fill, readResult(fillLog));
    assert.ok(probe, readResult(probeLog));
    console.log(`FILL: ${JSON.stringify(fill)} PROBE: ${JSON.stringify(probe)}`);
    assert.ok(probe.refusedAtMs !== undefined, `a write was refused on the full volume:\n${probed.stderr}`);
    assert.ok(probe.refusedAtMs < fill.releasedAtMs);
    assert.ok(probe.failedWrites >= 1);
    assert.ok(probe.writableAtMs >= fill.releasedAtMs, 'writes come back only after the ballast is gone');
    assert.equal(probe.canaryPresent, true);
    assert.equal(existsSync(join(volume, BALLAST_FILE)), false, 'the fill script removed its ballast');
    assert.equal(
      pg.query("SELECT to_regclass('sampledb_drill_fill') IS NULL"),
      't',
      'the probe dropped its table',
    );
    assert.equal(pg.query("SELECT count(*) FROM sampledb_drill_canary WHERE run = 'ns/fill/1'"), '1');
  });

  it("a TERM during the hold (the Job's deadline, a deleted pod) removes the ballast at once", async () => {
    const volume = join(pg.dataDir, '..');
    const env = fillEnv(volume, 300 * MIB, log(), 600);
    const child = spawn('sh', ['-c', DRILL_FILL_SCRIPT], { env, stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await pollUntil('the volume is full', async () => existsSync(env.SAMPLEDB_FILL_MARKER) || undefined, {
      timeoutMs: 60_000,
      intervalMs: 100,
    });
    assert.ok(existsSync(join(volume, BALLAST_FILE)));
    child.kill('SIGTERM');
    assert.equal(await exited, 143);
    assert.equal(existsSync(join(volume, BALLAST_FILE)), false);
    assert.equal(pg.query('SELECT 1'), '1');
  });

  it('the release script removes a ballast a killed fill left', async () => {
    const volume = join(pg.dataDir, '..');
    writeFileSync(join(volume, BALLAST_FILE), 'x'.repeat(4096));
    execFileSync('chown', ['postgres', join(volume, BALLAST_FILE)]);
    const terminationLog = log();
    const run = await runScriptAsServerUser(DRILL_RELEASE_SCRIPT, {
      ...fillEnv(volume, 300 * MIB, terminationLog),
    });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(parseReleaseResult(readResult(terminationLog)), true);
    assert.equal(existsSync(join(volume, BALLAST_FILE)), false);
  });
});
