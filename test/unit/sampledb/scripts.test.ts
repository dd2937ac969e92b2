import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { BACKUP_SCRIPT, parseBackupResult } from '../../../src/sampledb/scripts/backup.ts';
import { DRILL_CANARY_SCRIPT, DRILL_PROBE_SCRIPT } from '../../../src/sampledb/scripts/drill.ts';
import { DRILL_FILL_SCRIPT, DRILL_RELEASE_SCRIPT } from '../../../src/sampledb/scripts/drill-fill.ts';
import { DROP_DATABASES_SCRIPT } from '../../../src/sampledb/scripts/drop-databases.ts';
import { IN_PLACE_RESTORE_SCRIPT } from '../../../src/sampledb/scripts/in-place-restore.ts';
import { INIT_SCRIPT } from '../../../src/sampledb/scripts/init.ts';
import { MONITORING_ROLE_SCRIPT } from '../../../src/sampledb/scripts/monitoring-role.ts';
import { OWNER_PASSWORD_SCRIPT } from '../../../src/sampledb/scripts/owner-password.ts';
import { PRUNE_SCRIPT } from '../../../src/sampledb/scripts/prune.ts';
import { RESTORE_SCRIPT } from '../../../src/sampledb/scripts/restore.ts';
import { COPY_OLD_BINARIES_SCRIPT, UPGRADE_SCRIPT } from '../../../src/sampledb/scripts/upgrade.ts';
import { VERIFY_SCRIPT } from '../../../src/sampledb/scripts/verify.ts';
import { VERSION_SCRIPT } from '../../../src/sampledb/scripts/version.ts';

const scripts = {
  init: INIT_SCRIPT,
  backup: BACKUP_SCRIPT,
  restore: RESTORE_SCRIPT,
  'monitoring-role': MONITORING_ROLE_SCRIPT,
  version: VERSION_SCRIPT,
  upgrade: UPGRADE_SCRIPT,
  'copy-old-binaries': COPY_OLD_BINARIES_SCRIPT,
  'owner-password': OWNER_PASSWORD_SCRIPT,
  verify: VERIFY_SCRIPT,
  'in-place-restore': IN_PLACE_RESTORE_SCRIPT,
  'drop-databases': DROP_DATABASES_SCRIPT,
  prune: PRUNE_SCRIPT,
  'drill-canary': DRILL_CANARY_SCRIPT,
  'drill-probe': DRILL_PROBE_SCRIPT,
  'drill-fill': DRILL_FILL_SCRIPT,
  'drill-release': DRILL_RELEASE_SCRIPT,
};
const hasShellcheck = spawnSync('shellcheck', ['--version']).status === 0;

describe('data-path scripts', () => {
  for (const [name, script] of Object.entries(scripts)) {
    it(`${name} is valid POSIX sh`, () => {
      const result = spawnSync('sh', ['-n', '-c', script], { encoding: 'utf8' });
      assert.equal(result.status, 0, result.stderr);
    });

    it(`${name} is shellcheck-clean`, { skip: hasShellcheck ? false : 'shellcheck is not installed' }, () => {
      const dir = mkdtempSync(join(tmpdir(), 'sampledb-sh-'));
      try {
        const file = join(dir, `${name}.sh`);
        writeFileSync(file, script);
        const result = spawnSync('shellcheck', ['--shell=sh', '--severity=style', file], {
          encoding: 'utf8',
        });
        assert.equal(result.status, 0, result.stdout);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  it('quote identifiers with %I and literals with %L, never by string concatenation', () => {
    assert.match(INIT_SCRIPT, /format\('CREATE ROLE %I LOGIN'/);
    assert.match(INIT_SCRIPT, /format\('CREATE DATABASE %I OWNER %I'/);
    assert.match(INIT_SCRIPT, /PASSWORD %L/);
  });

  it('set a password only with the statement kept out of error output and the server log', () => {
    const scripts = { INIT_SCRIPT, MONITORING_ROLE_SCRIPT, OWNER_PASSWORD_SCRIPT };
    for (const [name, script] of Object.entries(scripts)) {
      const passwordAt = script.indexOf('PASSWORD %L');
      assert.ok(passwordAt > 0, name);
      const before = script.slice(0, passwordAt);
      assert.match(
        before,
        /\\set VERBOSITY terse\n/,
        `${name}: psql's terse errors carry no statement excerpt`,
      );
      assert.match(
        before,
        /SET log_min_error_statement = panic;/,
        `${name}: the server logs no failing statement`,
      );
    }
  });
});

describe('parseBackupResult', () => {
  const checksum = `sha256:${'a'.repeat(64)}`;

  it('reads the final JSON line', () => {
    assert.deepEqual(parseBackupResult(`log line\n{"sizeBytes":42,"checksum":"${checksum}"}\n`), {
      sizeBytes: 42,
      checksum,
    });
  });

  it('rejects anything else', () => {
    for (const text of [
      undefined,
      '',
      'Error: pg_dump failed',
      '{"sizeBytes":-1,"checksum":"sha256:00"}',
      `{"sizeBytes":"42","checksum":"${checksum}"}`,
      '{"sizeBytes":42,"checksum":"md5:abc"}',
      '{not json',
    ]) {
      assert.equal(parseBackupResult(text), undefined, String(text));
    }
  });
});
