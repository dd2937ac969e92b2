// The password Job's script: gives the owner role the password now in the credentials Secret. It first checks that
// the password it was started with is the one the operator created it for (a keyed fingerprint, so the Job's spec
// says nothing about the password): a Secret changed again in between gets its own Job, never a mix-up of the two.
import { BT, COMMON_FUNCTIONS } from './common.ts';

export interface OwnerPasswordScriptSettings {
  host: string;
  port: number;
  owner: string;
  /** `passwordFingerprint(superuser password, owner password)` of the password this Job is for. */
  fingerprint: string;
  waitSeconds?: number;
  terminationLog?: string;
}

/** Env vars from Secrets: PGUSER/PGPASSWORD (the superuser Secret) and SAMPLEDB_OWNER_PASSWORD (credentials). */
export const OWNER_PASSWORD_SECRET_ENV = ['PGUSER', 'PGPASSWORD', 'SAMPLEDB_OWNER_PASSWORD'] as const;

/** The script's exit status when the Secret changed after the Job was created (nothing was changed). */
export const STALE_PASSWORD_EXIT = 3;

export function ownerPasswordScriptEnv(settings: OwnerPasswordScriptSettings): Record<string, string> {
  return {
    SAMPLEDB_SCRIPT: 'sampledb-owner-password',
    PGHOST: settings.host,
    PGPORT: String(settings.port),
    PGDATABASE: 'postgres',
    PGAPPNAME: 'sampledb-owner-password',
    PGCONNECT_TIMEOUT: '10',
    HOME: '/tmp',
    SAMPLEDB_OWNER: settings.owner,
    SAMPLEDB_PASSWORD_FINGERPRINT: settings.fingerprint,
    SAMPLEDB_WAIT_SECONDS: String(settings.waitSeconds ?? 600),
    SAMPLEDB_TERMINATION_LOG: settings.terminationLog ?? '/dev/termination-log',
  };
}

export const OWNER_PASSWORD_SCRIPT = `${COMMON_FUNCTIONS}${String.raw`
fingerprint=$(printf '%s:%s' "$PGPASSWORD" "$SAMPLEDB_OWNER_PASSWORD" | sha256sum | cut -d ' ' -f 1)
if [ "$fingerprint" != "$SAMPLEDB_PASSWORD_FINGERPRINT" ]; then
  log "error: the credentials Secret changed after this Job was created; the operator starts another for the new password"
  printf '%s\n' "the credentials Secret changed after this Job was created" > "$SAMPLEDB_TERMINATION_LOG" 2>/dev/null || true
  exit ${STALE_PASSWORD_EXIT}
fi

wait_for_server

# The password comes from the environment into a psql variable, never onto a command line; %L quotes it. The
# attributes are set again, so the owner never is a superuser whatever happened to the role.
psql_run -d postgres -v owner="$SAMPLEDB_OWNER" <<'SQL'
SET client_min_messages = warning;
-- A failing statement that carries a password must not echo it: psql's terse errors leave out the statement
-- excerpt (which reaches the termination message and so the status), and the server does not log it.
\set VERBOSITY terse
SET log_min_error_statement = panic;
\set owner_password ${BT}printenv SAMPLEDB_OWNER_PASSWORD${BT}
SELECT format('ALTER ROLE %I WITH LOGIN NOSUPERUSER NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD %L', :'owner', :'owner_password')
\gexec
SQL
log "role $SAMPLEDB_OWNER has the password of the credentials Secret"
`}`;
