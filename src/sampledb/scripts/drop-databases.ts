// The cleanup Job's script of an in-place restore (ADR 0014): drops the databases it names, if they exist, ending
// their sessions (WITH (FORCE), PostgreSQL 13+). The operator names the unfinished copy of a failed restore, and the
// replaced data of a restore once its safety backup has completed; never the live database.
import { COMMON_FUNCTIONS } from './common.ts';

export interface DropDatabasesSettings {
  host: string;
  port: number;
  /** PostgreSQL identifiers (`[a-z_][a-z0-9_]*`), so a space-separated list is safe in sh. */
  databases: readonly string[];
  waitSeconds?: number;
  terminationLog?: string;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

export function dropDatabasesEnv(settings: DropDatabasesSettings): Record<string, string> {
  for (const db of settings.databases)
    if (!IDENTIFIER.test(db))
      throw new Error(`not a database name the operator makes: ${JSON.stringify(db)}`);
  return {
    SAMPLEDB_SCRIPT: 'sampledb-drop-databases',
    PGHOST: settings.host,
    PGPORT: String(settings.port),
    PGAPPNAME: 'sampledb-cleanup',
    PGCONNECT_TIMEOUT: '10',
    HOME: '/tmp',
    SAMPLEDB_DROP_DATABASES: settings.databases.join(' '),
    SAMPLEDB_WAIT_SECONDS: String(settings.waitSeconds ?? 120),
    SAMPLEDB_TERMINATION_LOG: settings.terminationLog ?? '/dev/termination-log',
  };
}

export interface DropDatabasesResult {
  dropped: number;
}

export function parseDropDatabasesResult(text: string | undefined): DropDatabasesResult | undefined {
  const last = (text ?? '').trim().split('\n').at(-1)?.trim();
  if (!last?.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(last) as Partial<DropDatabasesResult>;
    return typeof value.dropped === 'number' && Number.isSafeInteger(value.dropped)
      ? { dropped: value.dropped }
      : undefined;
  } catch {
    return undefined;
  }
}

export const DROP_DATABASES_SCRIPT = `${COMMON_FUNCTIONS}${String.raw`
wait_for_server
dropped=0
for db in $SAMPLEDB_DROP_DATABASES; do
  existed=$(psql_run -d postgres -tA -v db="$db" <<'SQL'
SELECT count(*) FROM pg_database WHERE datname = :'db';
SQL
)
  psql_run -d postgres -v db="$db" 2> /dev/null <<'SQL'
DROP DATABASE IF EXISTS :"db" WITH (FORCE);
SQL
  dropped=$((dropped + existed))
  log "database $db: dropped ($existed existed)"
done
result=$(printf '{"dropped":%s}' "$dropped")
printf '%s' "$result" > "$SAMPLEDB_TERMINATION_LOG"
printf '%s\n' "$result"
`}`;
