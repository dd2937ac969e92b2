// The version Job's script: asks the running server its version (SHOW server_version) and checks that the owner can
// log in, then reports `server_version=<version>` as its termination message. status.currentVersion is read from that
// report, so it is what the server says, never a copy of the spec. Also the last check of a major upgrade.
import { COMMON_FUNCTIONS } from './common.ts';

export interface VersionScriptSettings {
  host: string;
  port: number;
  database: string;
  owner: string;
  waitSeconds?: number;
  terminationLog?: string;
}

/** From Secrets: PGUSER/PGPASSWORD (the superuser) and SAMPLEDB_OWNER_PASSWORD (the owner's login is checked). */
export const VERSION_SECRET_ENV = ['PGUSER', 'PGPASSWORD', 'SAMPLEDB_OWNER_PASSWORD'] as const;

export function versionScriptEnv(settings: VersionScriptSettings): Record<string, string> {
  return {
    SAMPLEDB_SCRIPT: 'sampledb-version',
    PGHOST: settings.host,
    PGPORT: String(settings.port),
    PGDATABASE: 'postgres',
    PGAPPNAME: 'sampledb-version',
    PGCONNECT_TIMEOUT: '10',
    HOME: '/tmp',
    SAMPLEDB_DATABASE: settings.database,
    SAMPLEDB_OWNER: settings.owner,
    SAMPLEDB_WAIT_SECONDS: String(settings.waitSeconds ?? 600),
    SAMPLEDB_TERMINATION_LOG: settings.terminationLog ?? '/dev/termination-log',
  };
}

export const VERSION_SCRIPT = `${COMMON_FUNCTIONS}${String.raw`
wait_for_server

server_version=$(psql -X -At -d postgres -c 'SHOW server_version' | cut -d ' ' -f 1) ||
  fail "PostgreSQL at $PGHOST:$PGPORT did not answer SHOW server_version"
[ -n "$server_version" ] || fail "PostgreSQL at $PGHOST:$PGPORT reported no server_version"

# The application's own login, not only the superuser's: what an upgrade must keep working.
PGUSER=$SAMPLEDB_OWNER PGPASSWORD=$SAMPLEDB_OWNER_PASSWORD \
  psql -X -q -At -d "$SAMPLEDB_DATABASE" -c 'SELECT 1' > /dev/null ||
  fail "the owner $SAMPLEDB_OWNER cannot log in to database $SAMPLEDB_DATABASE on PostgreSQL $server_version"

log "PostgreSQL $server_version answers; $SAMPLEDB_OWNER logs in to $SAMPLEDB_DATABASE"
printf 'server_version=%s\n' "$server_version" > "$SAMPLEDB_TERMINATION_LOG"
`}`;
