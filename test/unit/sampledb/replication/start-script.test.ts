// The replicated start script's standby branch, run by sh with stub binaries (postgres, pg_basebackup and
// docker-entrypoint.sh are shell stubs that record their calls: a unit test, not the server). What it proves: a
// standby whose volume holds files of an older major than its server is cloned again; the same major or a newer
// one is kept as it is. The real images run it on the real node (test/e2e/upgrade.test.ts).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { REPLICATION_START_SCRIPT } from '../../../../src/sampledb/replication/start-script.ts';

const root = mkdtempSync(join(tmpdir(), 'start-script-'));
after(() => rmSync(root, { recursive: true, force: true }));

function stub(dir: string, name: string, body: string): void {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
}

/** Runs the script as pod `db-1` with `db-0` elected, on a volume whose PG_VERSION is `filesMajor` (or none). */
function startStandby(filesMajor: string | undefined, serverMajor = '17') {
  const dir = mkdtempSync(join(root, 'run-'));
  const bin = join(dir, 'bin');
  const pgdata = join(dir, 'data', 'pgdata');
  const calls = join(dir, 'calls');
  mkdirSync(bin);
  mkdirSync(pgdata, { recursive: true });
  if (filesMajor !== undefined) {
    writeFileSync(join(pgdata, 'PG_VERSION'), `${filesMajor}\n`);
    writeFileSync(join(pgdata, 'old-file'), 'from before');
  }
  const election = join(dir, 'election');
  writeFileSync(election, 'db-0');
  stub(
    bin,
    'postgres',
    `if [ "$1" = -V ]; then echo "postgres (PostgreSQL) ${serverMajor}.2 (Debian ${serverMajor}.2-1)"; exit 0; fi\necho "postgres $*" >> "${calls}"`,
  );
  // pg_basebackup -w -h H -p P -U U -D DIR ...: a clone of the (upgraded) primary.
  stub(
    bin,
    'pg_basebackup',
    `echo "pg_basebackup $*" >> "${calls}"\nmkdir -p "$PGDATA" && echo ${serverMajor} > "$PGDATA/PG_VERSION"`,
  );
  stub(bin, 'docker-entrypoint.sh', `echo "entrypoint $*" >> "${calls}"`);
  // The pod's /tmp (an emptyDir) is this run's directory, so the host's /tmp is left alone.
  const script = REPLICATION_START_SCRIPT.replaceAll('/tmp/', `${dir}/`);
  const run = spawnSync('sh', ['-c', script, 'start'], {
    encoding: 'utf8',
    env: {
      PATH: `${bin}:/usr/bin:/bin`,
      PGDATA: pgdata,
      SAMPLEDB_ELECTION_FILE: election,
      SAMPLEDB_POD: 'db-1',
      SAMPLEDB_REPLICATION_USER: 'replicator',
      SAMPLEDB_REPLICATION_PASSWORD: 'not-a-secret',
      SAMPLEDB_PRIMARY_HOST: 'db',
      SAMPLEDB_PRIMARY_PORT: '5432',
      SAMPLEDB_PEER_DOMAIN: 'db-peers.ns.svc',
      SAMPLEDB_PEER_PORT: '5432',
    },
  });
  const recorded = existsSync(calls) ? readFileSync(calls, 'utf8') : '';
  return {
    status: run.status,
    stderr: run.stderr,
    cloned: recorded.includes('pg_basebackup '),
    startedStandby: /postgres .*primary_conninfo=host=db-0\.db-peers\.ns\.svc,db/.test(recorded),
    oldFileKept: existsSync(join(pgdata, 'old-file')),
    filesMajor: existsSync(join(pgdata, 'PG_VERSION'))
      ? readFileSync(join(pgdata, 'PG_VERSION'), 'utf8').trim()
      : undefined,
  };
}

describe('replicated start script, standby branch (stub binaries)', () => {
  it('replaces files of an older major with a clone of the upgraded primary, and says so', () => {
    const run = startStandby('15');
    assert.equal(run.status, 0, run.stderr);
    assert.ok(run.cloned);
    assert.equal(run.oldFileKept, false);
    assert.equal(run.filesMajor, '17');
    assert.ok(run.startedStandby);
    assert.match(run.stderr, /the volume holds PostgreSQL 15 files, this server is 17: re-cloning/);
  });

  it('keeps files of its own major: no clone, the standby starts on them', () => {
    const run = startStandby('17');
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.cloned, false);
    assert.ok(run.oldFileKept);
    assert.ok(run.startedStandby);
  });

  it('never removes files of a newer major (the server refuses them; nothing is lost)', () => {
    const run = startStandby('18');
    assert.equal(run.cloned, false);
    assert.ok(run.oldFileKept);
    assert.equal(run.filesMajor, '18');
  });

  it('clones an empty volume as before', () => {
    const run = startStandby(undefined);
    assert.equal(run.status, 0, run.stderr);
    assert.ok(run.cloned);
    assert.equal(run.filesMajor, '17');
  });
});
