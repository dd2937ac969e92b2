// The monitoring role Job's script: creates (or corrects) the role the exporter sidecar logs in as, with the
// password of the monitoring Secret. pg_monitor and nothing else; the attributes are set explicitly, so a
// pre-existing role of that name cannot keep more rights. Idempotent: a re-run only sets the same again.
import { BT, COMMON_FUNCTIONS } from './common.ts';

export interface MonitoringRoleScriptSettings {
  host: string;
  port: number;
  role: string;
  waitSeconds?: number;
  terminationLog?: string;
}

/** Env vars from Secrets: PGUSER/PGPASSWORD (the superuser) and SAMPLEDB_MONITOR_PASSWORD (monitoring Secret). */
export const MONITORING_ROLE_SECRET_ENV = ['PGUSER', 'PGPASSWORD', 'SAMPLEDB_MONITOR_PASSWORD'] as const;

export function monitoringRoleScriptEnv(settings: MonitoringRoleScriptSettings): Record<string, string> {
  return {
    SAMPLEDB_SCRIPT: 'sampledb-monitoring-role',
    PGHOST: settings.host,
    PGPORT: String(settings.port),
    PGDATABASE: 'postgres',
    PGAPPNAME: 'sampledb-monitoring-role',
    PGCONNECT_TIMEOUT: '10',
    HOME: '/tmp',
    SAMPLEDB_MONITOR_ROLE: settings.role,
    SAMPLEDB_WAIT_SECONDS: String(settings.waitSeconds ?? 600),
    SAMPLEDB_TERMINATION_LOG: settings.terminationLog ?? '/dev/termination-log',
  };
}

export const MONITORING_ROLE_SCRIPT = `${COMMON_FUNCTIONS}${String.raw`
wait_for_server

# The password comes from the environment into a psql variable, never onto a command line; %L quotes it.
psql_run -d postgres -v role="$SAMPLEDB_MONITOR_ROLE" <<'SQL'
SET client_min_messages = warning;
-- A failing statement that carries a password must not echo it: psql's terse errors leave out the statement
-- excerpt (which reaches the termination message and so the status), and the server does not log it.
\set VERBOSITY terse
SET log_min_error_statement = panic;
\set monitor_password ${BT}printenv SAMPLEDB_MONITOR_PASSWORD${BT}
SELECT format('CREATE ROLE %I LOGIN', :'role')
 WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = :'role')
\gexec
SELECT format('ALTER ROLE %I WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS CONNECTION LIMIT 3 PASSWORD %L', :'role', :'monitor_password')
\gexec
SELECT format('GRANT pg_monitor TO %I', :'role')
\gexec
SQL
log "monitoring role $SAMPLEDB_MONITOR_ROLE is in place (member of pg_monitor)"
`}`;
