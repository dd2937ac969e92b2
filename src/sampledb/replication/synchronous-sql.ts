// The operator's SQL for synchronous replication, as sampledb_failover (ADR 0008): what an instance runs with and who
// streams from it (pg_monitor reads pg_stat_replication), and the one setting it may change (ALTER SYSTEM ON
// PARAMETER synchronous_standby_names and EXECUTE on pg_reload_conf, granted by the roles Job). Nothing else.
import { PgConnection, type PgConnectOptions, pgQuery } from '../failover/pg-client.ts';
import type { SynchronousAnswer, WalSender } from './synchronous.ts';

export const SYNCHRONOUS_OBSERVE_SQL = `SELECT pg_is_in_recovery() AS in_recovery,
  current_setting('synchronous_standby_names') AS setting,
  current_setting('server_version_num') AS version_num,
  coalesce((SELECT json_agg(json_build_object('name', application_name, 'state', state, 'sync', sync_state))
    FROM pg_stat_replication), '[]') AS senders`;

/** ALTER SYSTEM cannot run in a transaction block, so it goes alone; RESET removes it from postgresql.auto.conf. */
export function alterSystemSql(setting: string): string {
  return setting === ''
    ? 'ALTER SYSTEM RESET synchronous_standby_names'
    : `ALTER SYSTEM SET synchronous_standby_names = '${setting.replaceAll("'", "''")}'`;
}

export const RELOAD_SQL = 'SELECT pg_reload_conf() AS reloaded';

function parseSenders(text: string | null | undefined): WalSender[] {
  const rows: unknown = JSON.parse(text ?? '[]');
  if (!Array.isArray(rows)) return [];
  return rows.map((r: { name?: unknown; state?: unknown; sync?: unknown }) => ({
    name: String(r.name ?? ''),
    state: String(r.state ?? ''),
    syncState: String(r.sync ?? ''),
  }));
}

/** What the instance answers, or undefined when it does not answer within the timeout. */
export async function askSynchronous(options: PgConnectOptions): Promise<SynchronousAnswer | undefined> {
  try {
    const [row] = await pgQuery(options, SYNCHRONOUS_OBSERVE_SQL);
    if (!row) return undefined;
    return {
      inRecovery: row.in_recovery === 't',
      setting: row.setting ?? '',
      versionNum: Number(row.version_num ?? 0),
      senders: parseSenders(row.senders),
    };
  } catch {
    return undefined;
  }
}

/**
 * Sets synchronous_standby_names on the instance and reloads its configuration. `beforeSend` runs right before the
 * ALTER SYSTEM goes out and may throw to stop it (the leader's write fence).
 */
export async function setSynchronous(
  options: PgConnectOptions,
  setting: string,
  beforeSend: () => void = () => {},
): Promise<void> {
  const connection = await PgConnection.connect(options);
  try {
    beforeSend();
    await connection.query(alterSystemSql(setting));
    const [row] = await connection.query(RELOAD_SQL);
    if (row?.reloaded !== 't') throw new Error('pg_reload_conf() returned false');
  } finally {
    connection.close();
  }
}
