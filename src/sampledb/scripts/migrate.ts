// The migration Job's script: applies spec.migrations in order, each once, as the owner, in its own transaction
// together with its record in sampledb_operator.migrations (name, checksum, applied_at). The database is the
// source of truth: a recorded migration whose SQL now has another checksum is refused, never run again.
import { COMMON_FUNCTIONS } from './common.ts';

/** Where the migration Job mounts the SQL (one projected volume, one `<name>.sql` file per migration). */
export const MIGRATIONS_MOUNT_PATH = '/etc/sampledb/migrations';

/** Exit codes the operator tells apart (the termination message says which migration and why). */
export const MIGRATE_EXIT = { failed: 1, changed: 3, unexpectedContent: 4 } as const;

export interface MigrationToRun {
  name: string;
  /** sha256 (hex) of the SQL the operator read from the ConfigMap; the mounted file must have the same. */
  checksum: string;
}

export interface MigrateScriptSettings {
  host: string;
  port: number;
  database: string;
  owner: string;
  /** The whole list, in order (applied ones are checked, not run). */
  migrations: readonly MigrationToRun[];
  directory?: string;
  waitSeconds?: number;
  terminationLog?: string;
}

/** PGPASSWORD is the owner's, from the credentials Secret; PGUSER is the owner (set literally). */
export const MIGRATE_SECRET_ENV = ['PGPASSWORD'] as const;

export function migrateScriptEnv(settings: MigrateScriptSettings): Record<string, string> {
  return {
    SAMPLEDB_SCRIPT: 'sampledb-migrate',
    PGHOST: settings.host,
    PGPORT: String(settings.port),
    PGDATABASE: settings.database,
    PGUSER: settings.owner,
    PGAPPNAME: 'sampledb-migrate',
    PGCONNECT_TIMEOUT: '10',
    HOME: '/tmp',
    SAMPLEDB_MIGRATIONS: settings.migrations.map((m) => `${m.name} ${m.checksum}`).join('\n'),
    SAMPLEDB_MIGRATIONS_DIR: settings.directory ?? MIGRATIONS_MOUNT_PATH,
    SAMPLEDB_WAIT_SECONDS: String(settings.waitSeconds ?? 600),
    SAMPLEDB_TERMINATION_LOG: settings.terminationLog ?? '/dev/termination-log',
  };
}

/** What a failed migration Job reports (its termination message: `key=value` lines). */
export interface MigrateResult {
  result: 'applied' | 'failed' | 'changed' | 'unexpectedContent';
  migration?: string;
  /** The applied count (recorded before this run plus applied by it). */
  applied?: number;
  error?: string;
}

export function parseMigrateResult(message: string): MigrateResult | undefined {
  const fields = new Map<string, string>();
  for (const line of message.split('\n')) {
    const at = line.indexOf('=');
    if (at > 0 && !fields.has(line.slice(0, at))) fields.set(line.slice(0, at), line.slice(at + 1));
  }
  const result = fields.get('result');
  if (result !== 'applied' && result !== 'failed' && result !== 'changed' && result !== 'unexpectedContent') {
    return undefined;
  }
  const applied = fields.get('applied');
  return {
    result,
    ...(fields.has('migration') ? { migration: fields.get('migration') } : {}),
    ...(applied !== undefined && /^\d+$/.test(applied) ? { applied: Number(applied) } : {}),
    ...(fields.has('error') ? { error: fields.get('error') } : {}),
  };
}

export const MIGRATE_SCRIPT = `${COMMON_FUNCTIONS}${String.raw`
report() {
  printf '%s\n' "$@" > "$SAMPLEDB_TERMINATION_LOG" 2>/dev/null || true
}

wait_for_server

psql_run <<'SQL'
SET client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS sampledb_operator;
CREATE TABLE IF NOT EXISTS sampledb_operator.migrations (
  name text PRIMARY KEY,
  checksum text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);
SQL

applied=0
errors=/tmp/sampledb-migrate.err
# One "name checksum" line per migration, in order. Names match ^[a-z0-9][-_.a-z0-9]*$ (admission), so they are
# safe as file names and in messages.
printf '%s\n' "$SAMPLEDB_MIGRATIONS" > /tmp/sampledb-migrations.list
while read -r name expected; do
  [ -n "$name" ] || continue
  file="$SAMPLEDB_MIGRATIONS_DIR/$name.sql"
  if [ ! -f "$file" ]; then
    report result=unexpectedContent "migration=$name" "applied=$applied" "error=the SQL of migration $name is not mounted at $file"
    log "error: the SQL of migration $name is not mounted at $file"
    exit 4
  fi
  actual=$(sha256_of "$file")
  if [ "$actual" != "$expected" ]; then
    report result=unexpectedContent "migration=$name" "applied=$applied" "error=the SQL of migration $name has sha256:$actual, the operator expected sha256:$expected (the ConfigMap changed while the Job started); it runs again"
    log "error: migration $name: mounted SQL has sha256:$actual, expected sha256:$expected"
    exit 4
  fi
  recorded=$(echo "SELECT checksum FROM sampledb_operator.migrations WHERE name = :'name';" | psql_run -tA -v name="$name")
  if [ "$recorded" = "$actual" ]; then
    applied=$((applied + 1))
    continue
  fi
  if [ -n "$recorded" ]; then
    report result=changed "migration=$name" "applied=$applied" "error=migration $name was applied with sha256:$recorded, its SQL now has sha256:$actual; an applied migration may not change: put its SQL back and add a new migration instead"
    log "error: migration $name was applied with sha256:$recorded, its SQL now has sha256:$actual; refusing"
    exit 3
  fi
  # The SQL and its record in one transaction: it is applied completely, exactly once, or not at all.
  if ! psql -X -q -v ON_ERROR_STOP=1 --single-transaction -v name="$name" -v checksum="$actual" \
      -f "$file" -f - > /dev/null 2> "$errors" <<'SQL'
INSERT INTO sampledb_operator.migrations (name, checksum) VALUES (:'name', :'checksum');
SQL
  then
    cat "$errors" >&2
    error=$(grep -m 1 'ERROR:' "$errors" | sed 's/^.*ERROR: *//' | cut -c 1-1024)
    [ -n "$error" ] || error=$(head -n 1 "$errors" | cut -c 1-1024)
    report result=failed "migration=$name" "applied=$applied" "error=$error"
    log "error: migration $name failed: $error; later migrations wait"
    exit 1
  fi
  applied=$((applied + 1))
  log "migration $name applied (sha256:$actual)"
done < /tmp/sampledb-migrations.list

report result=applied "applied=$applied"
log "$applied migrations are applied"
`}`;
