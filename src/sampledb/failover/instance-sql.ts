// The operator's questions to one PostgreSQL instance, as the least-privilege role sampledb_failover (ADR 0008):
// what it is and how far its WAL goes, and the promotion. Nothing else is ever sent.

import { PgConnection, type PgConnectOptions, pgQuery } from './pg-client.ts';
import { parseLsn, type SqlAnswer } from './plan.ts';

/** The role the operator logs in as: only the grants of replication/roles-job.ts (pg_monitor, pg_promote, ...). */
export const FAILOVER_ROLE = 'sampledb_failover';
/** The role replicas stream as: REPLICATION LOGIN, nothing else. */
export const REPLICATION_ROLE = 'sampledb_replication';

export const OBSERVE_SQL = `SELECT pg_is_in_recovery() AS in_recovery,
  CASE WHEN pg_is_in_recovery()
    THEN coalesce(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn(), '0/0')
    ELSE pg_current_wal_lsn() END AS lsn,
  EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming') AS streaming,
  pg_last_wal_replay_lsn() AS replay_lsn`;

/** Promotes only a standby, in the session that checked: promoting twice is a no-op, never an error. */
export const PROMOTE_SQL =
  'SELECT CASE WHEN pg_is_in_recovery() THEN pg_promote(true, 30) ELSE true END AS promoted';

/** What the instance answers, or undefined when it does not answer within the timeout. */
export async function askInstance(options: PgConnectOptions): Promise<SqlAnswer | undefined> {
  try {
    const [row] = await pgQuery(options, OBSERVE_SQL);
    if (!row) return undefined;
    return {
      inRecovery: row.in_recovery === 't',
      lsn: parseLsn(row.lsn ?? '0/0'),
      streaming: row.streaming === 't',
      // NULL on a primary.
      ...(row.replay_lsn ? { replayLsn: parseLsn(row.replay_lsn) } : {}),
    };
  } catch {
    return undefined;
  }
}

/**
 * Promotes the instance; resolves once it runs as a primary (pg_promote waits for it). `beforeSend` runs right before
 * the statement goes out and may throw to stop it (the leader's write fence: connecting may have taken long).
 */
export async function promoteInstance(
  options: PgConnectOptions,
  beforeSend: () => void = () => {},
): Promise<void> {
  const connection = await PgConnection.connect({
    ...options,
    timeoutMs: Math.max(options.timeoutMs, 35_000),
  });
  try {
    beforeSend();
    const [row] = await connection.query(PROMOTE_SQL);
    if (row?.promoted !== 't') throw new Error('pg_promote did not finish within 30 s');
  } finally {
    connection.close();
  }
}
