// The init Job's script: wait for the server, create the owner role and the database idempotently, then restore
// a backup or run the bootstrap SQL, exactly once, recorded in sampledb_operator.bootstrap.
import { BT, COMMON_FUNCTIONS } from './common.ts';

/** Where the init Job mounts the bootstrap SQL (a ConfigMap key). */
export const INIT_SQL_MOUNT_PATH = '/etc/sampledb/init';
export const INIT_SQL_FILE_NAME = 'init.sql';

/** Non-secret settings of the init script; the Job sets them as literal env vars, a test may set the same. */
export interface InitScriptSettings {
  host: string;
  port: number;
  database: string;
  owner: string;
  /** Path of the bootstrap SQL file, if any. */
  initSqlFile?: string;
  /** Dump to restore instead of the bootstrap SQL (bootstrap.fromBackup). */
  restoreDump?: string;
  restoreChecksum?: string;
  waitSeconds?: number;
  terminationLog?: string;
}

/**
 * Env vars the script reads that come from Secrets: PGUSER/PGPASSWORD from the superuser Secret (the superuser the
 * entrypoint created) and SAMPLEDB_OWNER_PASSWORD from the credentials Secret (set on the owner role).
 */
export const INIT_SECRET_ENV = ['PGUSER', 'PGPASSWORD', 'SAMPLEDB_OWNER_PASSWORD'] as const;

export function initScriptEnv(settings: InitScriptSettings): Record<string, string> {
  return {
    SAMPLEDB_SCRIPT: 'sampledb-init',
    PGHOST: settings.host,
    PGPORT: String(settings.port),
    PGDATABASE: 'postgres',
    PGAPPNAME: 'sampledb-init',
    PGCONNECT_TIMEOUT: '10',
    HOME: '/tmp',
    SAMPLEDB_DATABASE: settings.database,
    SAMPLEDB_OWNER: settings.owner,
    SAMPLEDB_INIT_SQL: settings.initSqlFile ?? '',
    SAMPLEDB_RESTORE_DUMP: settings.restoreDump ?? '',
    SAMPLEDB_RESTORE_CHECKSUM: settings.restoreChecksum ?? '',
    SAMPLEDB_WAIT_SECONDS: String(settings.waitSeconds ?? 600),
    SAMPLEDB_TERMINATION_LOG: settings.terminationLog ?? '/dev/termination-log',
  };
}

export const INIT_SCRIPT = `${COMMON_FUNCTIONS}${String.raw`
wait_for_server

# The owner role (its password follows the Secret on every run) and the database, each created only if missing.
# The owner's attributes are set explicitly: applications log in as it, so it is never a superuser, whatever a
# pre-existing role of that name had.
psql_run -d postgres -v owner="$SAMPLEDB_OWNER" -v database="$SAMPLEDB_DATABASE" <<'SQL'
-- A failing statement that carries a password must not echo it: psql's terse errors leave out the statement
-- excerpt (which reaches the termination message and so the status), and the server does not log it.
\set VERBOSITY terse
SET log_min_error_statement = panic;
\set owner_password ${BT}printenv SAMPLEDB_OWNER_PASSWORD${BT}
SELECT format('CREATE ROLE %I LOGIN', :'owner')
 WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = :'owner')
\gexec
SELECT format('ALTER ROLE %I WITH LOGIN NOSUPERUSER NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD %L', :'owner', :'owner_password')
\gexec
\unset owner_password
\set VERBOSITY default
RESET log_min_error_statement;
SELECT format('CREATE DATABASE %I OWNER %I', :'database', :'owner')
 WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_database WHERE datname = :'database')
\gexec
SELECT format('ALTER DATABASE %I OWNER TO %I', :'database', :'owner')
\gexec
SQL
log "role $SAMPLEDB_OWNER and database $SAMPLEDB_DATABASE are in place"

# What ran once is recorded in the database itself, so a re-run Job (or a restored copy) does not run it again.
psql_run -d "$SAMPLEDB_DATABASE" -v owner="$SAMPLEDB_OWNER" <<'SQL'
SET client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS sampledb_operator;
CREATE TABLE IF NOT EXISTS sampledb_operator.bootstrap (
  step text PRIMARY KEY,
  checksum text,
  completed_at timestamptz NOT NULL DEFAULT now()
);
SELECT format('ALTER SCHEMA sampledb_operator OWNER TO %I', :'owner')
\gexec
SELECT format('ALTER TABLE sampledb_operator.bootstrap OWNER TO %I', :'owner')
\gexec
SQL

done_step() {
  count=$(echo "SELECT count(*) FROM sampledb_operator.bootstrap WHERE step = :'step';" |
    psql_run -d "$SAMPLEDB_DATABASE" -tA -v step="$1")
  [ "$count" != 0 ]
}

record_step() {
  psql_run -d "$SAMPLEDB_DATABASE" -v step="$1" -v checksum="$2" <<'SQL'
INSERT INTO sampledb_operator.bootstrap (step, checksum) VALUES (:'step', :'checksum')
  ON CONFLICT (step) DO UPDATE SET checksum = EXCLUDED.checksum, completed_at = now();
SQL
}

if [ -n "$SAMPLEDB_RESTORE_DUMP" ]; then
  if done_step restore; then
    log "backup already restored; skipping"
  else
    restore_dump "$SAMPLEDB_RESTORE_DUMP"
    record_step restore "sha256:$(sha256_of "$SAMPLEDB_RESTORE_DUMP")"
  fi
fi

if [ -n "$SAMPLEDB_INIT_SQL" ]; then
  [ -f "$SAMPLEDB_INIT_SQL" ] || fail "bootstrap SQL file $SAMPLEDB_INIT_SQL does not exist; check bootstrap.initSQL.name and key"
  if done_step init-sql; then
    log "bootstrap SQL already ran; skipping"
  else
    checksum="sha256:$(sha256_of "$SAMPLEDB_INIT_SQL")"
    # As the owner, so what it creates belongs to the owner; in one transaction with its record, so it runs
    # completely exactly once or not at all.
    PGUSER=$SAMPLEDB_OWNER PGPASSWORD=$SAMPLEDB_OWNER_PASSWORD \
      psql -X -q -v ON_ERROR_STOP=1 --single-transaction -d "$SAMPLEDB_DATABASE" -v checksum="$checksum" \
        -f "$SAMPLEDB_INIT_SQL" -f - <<'SQL'
INSERT INTO sampledb_operator.bootstrap (step, checksum) VALUES ('init-sql', :'checksum');
SQL
    log "bootstrap SQL ran ($checksum)"
  fi
fi

# The version the server itself reports becomes the termination message, which status.currentVersion is read from.
server_version=$(psql -X -At -d "$SAMPLEDB_DATABASE" -c 'SHOW server_version' | cut -d ' ' -f 1) || server_version=
log "database $SAMPLEDB_DATABASE is initialized (PostgreSQL $server_version)"
if [ -n "$server_version" ]; then
  printf 'server_version=%s\n' "$server_version" > "$SAMPLEDB_TERMINATION_LOG" 2>/dev/null || true
fi
`}`;
