// The operator's PostgreSQL client and its questions against a real server (PostgreSQL from the machine): SCRAM
// login as a least-privilege role, the observation query, the promotion of a real streaming standby, and the
// bounded failures (wrong password, nobody listening) that the planner sees as "does not answer".
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { askInstance, FAILOVER_ROLE, promoteInstance } from '../../../src/sampledb/failover/instance-sql.ts';
import { type PgError, pgQuery } from '../../../src/sampledb/failover/pg-client.ts';
import { type PostgresServer, startPostgres } from '../../support/postgres.ts';

describe('the failover client against PostgreSQL', () => {
  let pg: PostgresServer;
  const password = randomBytes(18).toString('base64url');
  const as = (user: string, secret: string, timeoutMs = 5000) => ({
    host: pg.host,
    port: pg.port,
    user,
    password: secret,
    database: 'postgres',
    timeoutMs,
  });

  before(async () => {
    pg = await startPostgres();
    pg.query(
      `CREATE ROLE ${FAILOVER_ROLE} LOGIN PASSWORD '${password}'; GRANT pg_monitor TO ${FAILOVER_ROLE};` +
        ` GRANT EXECUTE ON FUNCTION pg_promote(boolean, integer) TO ${FAILOVER_ROLE};`,
    );
  });
  after(async () => {
    await pg?.stop();
  });

  it('logs in with SCRAM-SHA-256 and returns rows as text, NULL as null', async () => {
    const rows = await pgQuery(
      as(FAILOVER_ROLE, password),
      "SELECT 1 AS one, NULL AS nothing, 'a''b' AS quoted",
    );
    assert.deepEqual(rows, [{ one: '1', nothing: null, quoted: "a'b" }]);
    const [row] = await pgQuery(
      as(FAILOVER_ROLE, password),
      'SELECT rolsuper FROM pg_roles WHERE rolname = current_user',
    );
    assert.equal(row?.rolsuper, 'f', 'not a superuser');
  });

  it('reports SQL errors with their SQLSTATE', async () => {
    await assert.rejects(
      pgQuery(as(FAILOVER_ROLE, password), 'SELECT * FROM no_such_table'),
      (err: PgError) => {
        assert.equal(err.code, '42P01');
        return true;
      },
    );
    await assert.rejects(
      pgQuery(as(FAILOVER_ROLE, password), 'SELECT pg_reload_conf()'),
      /permission denied/,
    );
  });

  it('refuses a wrong password, and never puts a password in the error', async () => {
    await assert.rejects(pgQuery(as(FAILOVER_ROLE, 'wrong-password'), 'SELECT 1'), (err: PgError) => {
      assert.equal(err.code, '28P01');
      assert.doesNotMatch(err.message, /wrong-password/);
      return true;
    });
  });

  it('an instance that is not there does not answer (no exception, within the timeout)', async () => {
    assert.equal(await askInstance({ ...as(FAILOVER_ROLE, password, 500), port: 1 }), undefined);
    // 192.0.2.0/24 (TEST-NET-1) is never routed: the connect times out.
    const started = Date.now();
    assert.equal(await askInstance({ ...as(FAILOVER_ROLE, password, 300), host: '192.0.2.1' }), undefined);
    assert.ok(Date.now() - started < 5000);
  });

  it('observes a primary, and a streaming standby it promotes once', async () => {
    const primary = await askInstance(as(FAILOVER_ROLE, password));
    assert.equal(primary?.inRecovery, false);
    assert.ok((primary?.lsn ?? 0n) > 0n);
    const standby = await pg.startStandby();
    try {
      const replicaOptions = { ...as(FAILOVER_ROLE, password), port: standby.port };
      pg.query('CREATE TABLE t AS SELECT 1 AS x');
      let answer = await askInstance(replicaOptions);
      for (let i = 0; i < 100 && !(answer?.streaming && answer.lsn >= (primary?.lsn ?? 0n)); i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        answer = await askInstance(replicaOptions);
      }
      assert.equal(answer?.inRecovery, true);
      assert.equal(answer?.streaming, true);
      assert.ok((answer?.lsn ?? 0n) >= (primary?.lsn ?? 0n));
      await promoteInstance(replicaOptions);
      assert.equal((await askInstance(replicaOptions))?.inRecovery, false);
      await promoteInstance(replicaOptions); // again: a no-op
      assert.equal((await askInstance(replicaOptions))?.inRecovery, false);
    } finally {
      await standby.stop();
    }
  });
});
