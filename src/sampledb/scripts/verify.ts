// The verification Job's script: restore a backup into a throw-away server started inside the Job's own pod (on an
// emptyDir; the database image has initdb and pg_ctl), then check the copy against what the backup recorded in its
// snapshot: per-table row counts, and the output of the user's query when there is one. Never touches the SampleDB.
import { COMMON_FUNCTIONS } from './common.ts';

export interface VerifyScriptSettings {
  /** The dump on the backup volume; its row counts are `<dump without .dump>.counts` next to it. */
  dump: string;
  /** "sha256:<hex>" from the SampleDBBackup's status. */
  checksum: string;
  /** An empty directory for the temporary server's data and socket (an emptyDir). */
  dataDirectory: string;
  /** The user's verification query (a mounted ConfigMap key); its output must equal the one recorded. */
  queryFile?: string;
  terminationLog?: string;
}

export function verifyScriptEnv(settings: VerifyScriptSettings): Record<string, string> {
  return {
    SAMPLEDB_SCRIPT: 'sampledb-verify',
    HOME: '/tmp',
    SAMPLEDB_VERIFY_DUMP: settings.dump,
    SAMPLEDB_RESTORE_CHECKSUM: settings.checksum,
    SAMPLEDB_VERIFY_DATA: settings.dataDirectory,
    SAMPLEDB_VERIFY_QUERY_FILE: settings.queryFile ?? '',
    SAMPLEDB_TERMINATION_LOG: settings.terminationLog ?? '/dev/termination-log',
  };
}

/** What a passed verification reports (the last line of its output and its termination message). */
export interface VerifyResult {
  verified: true;
  tables: number;
  rows: number;
  /** How long pg_restore took into the empty server: the measured restore time (RTO) of this backup. */
  restoreMs: number;
  /** Whether the user's query was checked too. */
  query: boolean;
}

const count = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** Parses the verification result; `undefined` when the text holds none (a failure's message instead). */
export function parseVerifyResult(text: string | undefined): VerifyResult | undefined {
  const last = (text ?? '').trim().split('\n').at(-1)?.trim();
  if (!last?.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(last) as Partial<VerifyResult>;
    if (value.verified !== true || !count(value.tables) || !count(value.rows) || !count(value.restoreMs))
      return undefined;
    return {
      verified: true,
      tables: value.tables,
      rows: value.rows,
      restoreMs: value.restoreMs,
      query: value.query === true,
    };
  } catch {
    return undefined;
  }
}

export const VERIFY_SCRIPT = `${COMMON_FUNCTIONS}${String.raw`
dump="$SAMPLEDB_VERIFY_DUMP"
recorded="$(dirname "$dump")/$(basename "$dump" .dump)"
verify_dump "$dump"
[ -f "$recorded.counts" ] || fail "$recorded.counts does not exist: the backup recorded no row counts to verify against (taken by an older operator?)"
if [ -n "$SAMPLEDB_VERIFY_QUERY_FILE" ]; then
  [ -f "$SAMPLEDB_VERIFY_QUERY_FILE" ] || fail "the verification query $SAMPLEDB_VERIFY_QUERY_FILE does not exist (is the ConfigMap key there?)"
  [ -f "$recorded.check" ] || fail "$recorded.check does not exist: the backup did not run the verification query when it was taken"
fi

root="$SAMPLEDB_VERIFY_DATA"
data="$root/pgdata"
socket="$root/socket"
rm -rf "$data" "$socket"
mkdir -p "$socket"
# A server only this pod can reach: no TCP listener, a socket in the emptyDir, trust for the local user.
initdb -D "$data" -U sampledb_verify --auth=trust --encoding=UTF8 --locale=C --no-sync > "$root/initdb.log" 2>&1 \
  || fail "initdb failed: $(tail -c 1024 "$root/initdb.log")"
stop_server() {
  pg_ctl -D "$data" -m immediate -w stop > /dev/null 2>&1 || true
}
trap stop_server EXIT
pg_ctl -D "$data" -l "$root/server.log" -w -t 60 \
  -o "-c listen_addresses= -k $socket -c fsync=off -c full_page_writes=off -c shared_buffers=32MB -c max_connections=10" \
  start > /dev/null || fail "the temporary server did not start: $(tail -c 1024 "$root/server.log")"
export PGHOST="$socket" PGUSER=sampledb_verify PGPORT=5432
unset PGPASSWORD || true
psql_run -d postgres -c 'CREATE DATABASE verify'

started=$(now_ms)
pg_restore --no-owner --no-acl --exit-on-error --single-transaction -d verify "$dump" 2> "$root/restore.err" \
  || fail "pg_restore of $dump failed, the backup cannot be restored: $(tail -c 1024 "$root/restore.err")"
restore_ms=$(( $(now_ms) - started ))
log "restored $dump into a temporary server in $restore_ms ms"

count_rows_sql | psql_run -tA -d verify | sort > "$root/restored.counts"
if ! cmp -s "$recorded.counts" "$root/restored.counts"; then
  differences=$(diff "$recorded.counts" "$root/restored.counts" | grep '^[<>]' | head -n 20 \
    | sed 's/^</recorded/; s/^>/restored/' | tr '\n' ';')
  fail "row counts of the restored copy differ from those recorded when the backup was taken: $differences"
fi
query=false
if [ -n "$SAMPLEDB_VERIFY_QUERY_FILE" ]; then
  psql_run -tA -d verify -f "$SAMPLEDB_VERIFY_QUERY_FILE" > "$root/restored.check" 2> "$root/query.err" \
    || fail "the verification query failed on the restored copy: $(tail -c 1024 "$root/query.err")"
  cmp -s "$recorded.check" "$root/restored.check" \
    || fail "the verification query returned something else on the restored copy than when the backup was taken"
  query=true
fi

tables=$(wc -l < "$root/restored.counts" | tr -d ' ')
rows=$(sum_rows "$root/restored.counts")
log "verified: $tables tables, $rows rows as recorded"
result=$(printf '{"verified":true,"tables":%s,"rows":%s,"restoreMs":%s,"query":%s}' "$tables" "$rows" "$restore_ms" "$query")
printf '%s' "$result" > "$SAMPLEDB_TERMINATION_LOG"
printf '%s\n' "$result"
`}`;
