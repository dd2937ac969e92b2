// The in-place restore Job's script (SampleDBRestore), also used to put the safety backup back: end the sessions
// still open on the database (clients are already cut off at the Service), restore the verified dump with
// pg_restore --clean in one transaction (as the superuser, keeping the owners the dump recorded), then check the
// restored tables against the row counts the backup recorded.
import { COMMON_FUNCTIONS } from './common.ts';
import { type RestoreScriptSettings, restoreScriptEnv } from './restore.ts';

/** A checksum is required here: an in-place restore never trusts a dump it cannot check. */
export type InPlaceRestoreSettings = RestoreScriptSettings & { checksum: string };

/** A failure of the check after pg_restore starts with this, so the status can tell "restore" from "verify". */
export const VERIFY_FAILURE_PREFIX = 'verification failed:';

/** The same variables as the restore script's (the dump, its checksum, the database and its owner). */
export function inPlaceRestoreEnv(settings: InPlaceRestoreSettings): Record<string, string> {
  return restoreScriptEnv(settings);
}

export interface InPlaceRestoreResult {
  restored: true;
  /** Tables checked against the recorded counts (0: the backup recorded none). */
  tables: number;
}

export function parseInPlaceRestoreResult(text: string | undefined): InPlaceRestoreResult | undefined {
  const last = (text ?? '').trim().split('\n').at(-1)?.trim();
  if (!last?.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(last) as Partial<InPlaceRestoreResult>;
    if (value.restored !== true || typeof value.tables !== 'number' || !Number.isSafeInteger(value.tables))
      return undefined;
    return { restored: true, tables: value.tables };
  } catch {
    return undefined;
  }
}

export const IN_PLACE_RESTORE_SCRIPT = `${COMMON_FUNCTIONS}${String.raw`
wait_for_server
dump="$SAMPLEDB_RESTORE_DUMP"
recorded="$(dirname "$dump")/$(basename "$dump" .dump).counts"
verify_dump "$dump"
psql_run -d postgres -tA -v db="$SAMPLEDB_DATABASE" <<'SQL'
SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = :'db' AND pid <> pg_backend_pid();
SQL
restore_own_dump "$dump"
tables=0
if [ -f "$recorded" ]; then
  count_rows_sql | psql_run -tA -d "$SAMPLEDB_DATABASE" | sort > /tmp/restored.counts
  # Tables created after the backup are not in it and stay; every table it recorded must hold its rows again.
  differing=$(grep -Fxv -f /tmp/restored.counts "$recorded" | head -n 20 | tr '\n' ';' || true)
  [ -z "$differing" ] || fail "verification failed: after the restore these tables differ from the row counts the backup recorded: $differing"
  tables=$(wc -l < "$recorded" | tr -d ' ')
  log "verified $tables tables against the recorded row counts"
fi
result=$(printf '{"restored":true,"tables":%s}' "$tables")
printf '%s' "$result" > "$SAMPLEDB_TERMINATION_LOG"
printf '%s\n' "$result"
`}`;
