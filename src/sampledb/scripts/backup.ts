// The backup Job's script: pg_dump in custom format to the backup volume, a sha256 next to it, and a JSON result
// the operator reads from the container's termination message.
import { COMMON_FUNCTIONS } from './common.ts';

export const BACKUP_MOUNT_PATH = '/backups';

export interface BackupScriptSettings {
  host: string;
  port: number;
  database: string;
  /** Directory of the SampleDB's backups, e.g. /backups/<sampledb>. */
  directory: string;
  backupName: string;
  waitSeconds?: number;
  terminationLog?: string;
  /** A SQL file (the user's verification query) run in the dump's snapshot; its output is kept for verification. */
  verifyQueryFile?: string;
}

/** From the credentials Secret: PGUSER/PGPASSWORD (the superuser, so the dump sees every object). */
export const BACKUP_SECRET_ENV = ['PGUSER', 'PGPASSWORD'] as const;

export function backupScriptEnv(settings: BackupScriptSettings): Record<string, string> {
  return {
    SAMPLEDB_SCRIPT: 'sampledb-backup',
    PGHOST: settings.host,
    PGPORT: String(settings.port),
    PGAPPNAME: 'sampledb-backup',
    PGCONNECT_TIMEOUT: '10',
    HOME: '/tmp',
    SAMPLEDB_DATABASE: settings.database,
    SAMPLEDB_BACKUP_DIR: settings.directory,
    SAMPLEDB_BACKUP_NAME: settings.backupName,
    SAMPLEDB_WAIT_SECONDS: String(settings.waitSeconds ?? 120),
    SAMPLEDB_TERMINATION_LOG: settings.terminationLog ?? '/dev/termination-log',
    SAMPLEDB_VERIFY_QUERY_FILE: settings.verifyQueryFile ?? '',
  };
}

/** The last line of the backup's output and its termination message. */
export interface BackupResult {
  sizeBytes: number;
  checksum: string;
}

/** Parses the backup result from a termination message or log; `undefined` when there is none. */
export function parseBackupResult(text: string | undefined): BackupResult | undefined {
  const lines = (text ?? '').trim().split('\n');
  const last = lines[lines.length - 1]?.trim();
  if (!last?.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(last) as Partial<BackupResult>;
    if (
      typeof value.sizeBytes !== 'number' ||
      !Number.isSafeInteger(value.sizeBytes) ||
      value.sizeBytes < 0
    ) {
      return undefined;
    }
    if (typeof value.checksum !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(value.checksum)) return undefined;
    return { sizeBytes: value.sizeBytes, checksum: value.checksum };
  } catch {
    return undefined;
  }
}

export const BACKUP_SCRIPT = `${COMMON_FUNCTIONS}${String.raw`
wait_for_server

mkdir -p "$SAMPLEDB_BACKUP_DIR"
dump="$SAMPLEDB_BACKUP_DIR/$SAMPLEDB_BACKUP_NAME.dump"
counts="$SAMPLEDB_BACKUP_DIR/$SAMPLEDB_BACKUP_NAME.counts"
check="$SAMPLEDB_BACKUP_DIR/$SAMPLEDB_BACKUP_NAME.check"
# Written aside and renamed, so a dump that exists under its name is always complete.
partial="$dump.partial"
rm -f "$partial" "$counts.partial" "$check.partial"

# One snapshot for the dump and for what a verification checks it against (row counts, the user's query): a
# session holds it open (a transaction exporting it) while the counts and pg_dump read it.
work=$(mktemp -d /tmp/sampledb-backup.XXXXXX)
mkfifo "$work/in"
psql -X -q -tA -v ON_ERROR_STOP=1 -d "$SAMPLEDB_DATABASE" < "$work/in" > "$work/out" 2> "$work/err" &
holder=$!
exec 3> "$work/in"
printf '%s\n' 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;' 'SELECT pg_export_snapshot();' >&3
tries=0
snapshot=
until [ -n "$snapshot" ]; do
  kill -0 "$holder" 2>/dev/null || fail "could not open a snapshot: $(cat "$work/err")"
  tries=$((tries + 1))
  [ "$tries" -le 300 ] || fail "no snapshot from PostgreSQL within 60 seconds"
  sleep 0.2
  snapshot=$(head -n 1 "$work/out")
done
in_snapshot() {
  printf '%s\n' 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;' "SET TRANSACTION SNAPSHOT '$snapshot';"
  cat
  printf '%s\n' 'COMMIT;'
}
count_rows_sql | in_snapshot | psql_run -tA -d "$SAMPLEDB_DATABASE" > "$work/counts"
sort "$work/counts" > "$counts.partial"
if [ -n "$SAMPLEDB_VERIFY_QUERY_FILE" ]; then
  [ -f "$SAMPLEDB_VERIFY_QUERY_FILE" ] || fail "the verification query $SAMPLEDB_VERIFY_QUERY_FILE does not exist (is the ConfigMap key there?)"
  in_snapshot < "$SAMPLEDB_VERIFY_QUERY_FILE" | psql_run -tA -d "$SAMPLEDB_DATABASE" > "$check.partial"
fi
pg_dump -Fc --snapshot="$snapshot" -d "$SAMPLEDB_DATABASE" -f "$partial"
printf '%s\n' 'COMMIT;' >&3
exec 3>&-
wait "$holder" || true
rm -rf "$work"

checksum=$(sha256_of "$partial")
size=$(wc -c < "$partial" | tr -d ' ')
tables=$(wc -l < "$counts.partial" | tr -d ' ')
rows=$(sum_rows "$counts.partial")
mv -f "$counts.partial" "$counts"
[ ! -f "$check.partial" ] || mv -f "$check.partial" "$check"
mv -f "$partial" "$dump"
printf '%s  %s\n' "$checksum" "$SAMPLEDB_BACKUP_NAME.dump" > "$dump.sha256"
log "wrote $dump ($size bytes, sha256:$checksum, $tables tables, $rows rows)"

result=$(printf '{"sizeBytes":%s,"checksum":"sha256:%s","tables":%s,"rows":%s}' "$size" "$checksum" "$tables" "$rows")
printf '%s' "$result" > "$SAMPLEDB_TERMINATION_LOG"
printf '%s\n' "$result"
`}`;
