// Synchronous replication's SQL against a real PostgreSQL (from the machine) and a real streaming standby: the roles
// script's grants are exactly enough for sampledb_failover to set synchronous_standby_names with ALTER SYSTEM and
// reload (on the primary and ahead of time on a standby), and no other setting; the observation shows the standby
// as a quorum member once it is in force, and a commit then waits for it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pollUntil } from '../../../src/envtest/index.ts';
import { FAILOVER_ROLE, REPLICATION_ROLE } from '../../../src/sampledb/failover/instance-sql.ts';
import { pgQuery } from '../../../src/sampledb/failover/pg-client.ts';
import { REPLICATION_ROLES_SCRIPT } from '../../../src/sampledb/replication/roles-job.ts';
import { standbyNamesSetting } from '../../../src/sampledb/replication/synchronous.ts';
import { askSynchronous, setSynchronous } from '../../../src/sampledb/replication/synchronous-sql.ts';
import { type PostgresServer, runScript, startPostgres } from '../../support/postgres.ts';

describe('synchronous replication SQL against PostgreSQL', () => {
  let pg: PostgresServer;
  let standby: { port: number; stop(): Promise<void> } | undefined;
  const password = randomBytes(18).toString('base64url');
  const as = (port: number) => ({
    host: pg.host,
    port,
    user: FAILOVER_ROLE,
    password,
    database: 'postgres',
    timeoutMs: 5000,
  });

  before(async () => {
    pg = await startPostgres();
    const run = await runScript(REPLICATION_ROLES_SCRIPT, {
      PATH: pg.path,
      PGHOST: pg.host,
      PGPORT: String(pg.port),
      PGDATABASE: 'postgres',
      PGUSER: pg.superuser,
      PGPASSWORD: pg.password,
      HOME: '/tmp',
      SAMPLEDB_SCRIPT: 'sampledb-replication-roles',
      SAMPLEDB_REPLICATION_ROLE: REPLICATION_ROLE,
      SAMPLEDB_FAILOVER_ROLE: FAILOVER_ROLE,
      SAMPLEDB_REPLICATION_PASSWORD: randomBytes(18).toString('base64url'),
      SAMPLEDB_FAILOVER_PASSWORD: password,
      SAMPLEDB_WAIT_SECONDS: '30',
      SAMPLEDB_TERMINATION_LOG: join(pg.scratchDir, 'termination'),
    });
    assert.equal(run.code, 0, run.stderr);
    standby = await pg.startStandby();
  });
  after(async () => {
    await standby?.stop();
    await pg?.stop();
  });

  it('the roles script grants ALTER SYSTEM on this one parameter, nothing else', async () => {
    await assert.rejects(pgQuery(as(pg.port), "ALTER SYSTEM SET work_mem = '64MB'"), /permission denied/);
    await assert.rejects(
      pgQuery(as(pg.port), "ALTER SYSTEM SET synchronous_commit = 'off'"),
      /permission denied/,
    );
    const [row] = await pgQuery(as(pg.port), 'SELECT rolsuper FROM pg_roles WHERE rolname = current_user');
    assert.equal(row?.rolsuper, 'f');
  });

  it('set ahead on a standby, then on the primary: the standby is a quorum member and commits wait for it', async () => {
    assert.ok(standby);
    const standbyPort = standby.port;
    // pg_basebackup -R names no application_name: the standby's walreceiver reports as "walreceiver".
    const setting = standbyNamesSetting(1, ['walreceiver']);
    const first = await askSynchronous(as(pg.port));
    assert.equal(first?.inRecovery, false);
    assert.equal(first?.setting, '');
    assert.ok((first?.versionNum ?? 0) >= 150000);

    await setSynchronous(as(standbyPort), setting);
    await pollUntil(
      'the standby runs with it',
      async () => ((await askSynchronous(as(standbyPort)))?.setting === setting ? true : undefined),
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    await setSynchronous(as(pg.port), setting);
    const inForce = await pollUntil(
      'the primary waits for its quorum standby',
      async () => {
        const answer = await askSynchronous(as(pg.port));
        return answer?.setting === setting &&
          answer.senders.some((s) => s.name === 'walreceiver' && s.syncState === 'quorum')
          ? answer
          : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 100 },
    );
    assert.equal(inForce.senders.find((s) => s.name === 'walreceiver')?.state, 'streaming');
    pg.query('CREATE TABLE IF NOT EXISTS committed (n int); INSERT INTO committed VALUES (1);');

    // With the standby stopped, a commit waits for it (the client gives up after 2 s, unacknowledged).
    await standby.stop();
    standby = undefined;
    await assert.rejects(
      pgQuery(
        { ...as(pg.port), user: pg.superuser, password: pg.password, timeoutMs: 2000 },
        'INSERT INTO committed VALUES (2)',
      ),
      /no answer within 2000 ms/,
    );

    // synchronous: 0: RESET, and commits no longer wait.
    await setSynchronous(as(pg.port), '');
    await pollUntil(
      'the primary runs without it',
      async () => ((await askSynchronous(as(pg.port)))?.setting === '' ? true : undefined),
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    pg.query('INSERT INTO committed VALUES (3);');
    assert.equal(
      pg.query("SELECT count(*) FROM pg_file_settings WHERE name = 'synchronous_standby_names'"),
      '0',
    );
  });
});
