// The in-place restore Job's script (SampleDBRestore, ADR 0014). The live database is not touched until the restored
// copy is complete and checked: the dump (checksum verified) is restored into a new database made like the live one
// (owner, encoding, locale, connection limit, grants, per-database settings), as the superuser with the owners the
// dump recorded; its tables are checked against the row counts the backup recorded; then one transaction renames the
// live database to the "previous" name and the restored one to the live name. Any failure before that commit leaves
// the live data as it was and drops the unfinished copy. The previous database is what the operator backs up as the
// safety backup afterwards, then drops.
import { COMMON_FUNCTIONS } from './common.ts';
import { type RestoreScriptSettings, restoreScriptEnv } from './restore.ts';

/** A checksum is required here: an in-place restore never trusts a dump it cannot check. */
export type InPlaceRestoreSettings = RestoreScriptSettings & {
  checksum: string;
  /** The database the dump is restored into before the switch (`restoreStagingDatabase`). */
  stagingDatabase: string;
  /** The name the live database gets at the switch (`restorePreviousDatabase`). */
  previousDatabase: string;
};

/** A failure of the check after pg_restore starts with this, so the status can tell "restore" from "verify". */
export const VERIFY_FAILURE_PREFIX = 'verification failed:';
/** A failure of the renaming transaction starts with this. */
export const SWITCH_FAILURE_PREFIX = 'switch failed:';

/** The restore script's variables (the dump, its checksum, the database and its owner) and the two other names. */
export function inPlaceRestoreEnv(settings: InPlaceRestoreSettings): Record<string, string> {
  return {
    ...restoreScriptEnv(settings),
    SAMPLEDB_RESTORE_STAGING_DATABASE: settings.stagingDatabase,
    SAMPLEDB_RESTORE_PREVIOUS_DATABASE: settings.previousDatabase,
  };
}

export interface InPlaceRestoreResult {
  restored: true;
  /** Tables checked against the recorded counts (0: the backup recorded none). */
  tables: number;
  /** The database that now holds the data the restore replaced (absent from Jobs of older operators). */
  previous?: string;
}

export function parseInPlaceRestoreResult(text: string | undefined): InPlaceRestoreResult | undefined {
  const last = (text ?? '').trim().split('\n').at(-1)?.trim();
  if (!last?.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(last) as Partial<InPlaceRestoreResult>;
    if (value.restored !== true || typeof value.tables !== 'number' || !Number.isSafeInteger(value.tables))
      return undefined;
    return {
      restored: true,
      tables: value.tables,
      ...(typeof value.previous === 'string' ? { previous: value.previous } : {}),
    };
  } catch {
    return undefined;
  }
}

export const IN_PLACE_RESTORE_SCRIPT = `${COMMON_FUNCTIONS}${String.raw`
wait_for_server
dump="$SAMPLEDB_RESTORE_DUMP"
recorded="$(dirname "$dump")/$(basename "$dump" .dump).counts"
live="$SAMPLEDB_DATABASE"
staging="$SAMPLEDB_RESTORE_STAGING_DATABASE"
previous="$SAMPLEDB_RESTORE_PREVIOUS_DATABASE"
verify_dump "$dump"

database_exists() {
  [ "$(psql_run -d postgres -tA -v name="$1" <<'SQL'
SELECT count(*) FROM pg_database WHERE datname = :'name';
SQL
)" = 1 ]
}

drop_staging() {
  psql_run -d postgres -v db="$staging" <<'SQL'
DROP DATABASE IF EXISTS :"db" WITH (FORCE);
SQL
}

end_sessions() {
  psql_run -d postgres -tA -v live="$live" -v staging="$staging" > /dev/null <<'SQL'
SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
WHERE datname IN (:'live', :'staging') AND pid <> pg_backend_pid();
SQL
}

database_exists "$live" || fail "database $live does not exist"
# A database of that name holds data an earlier restore of the same name replaced: never overwrite it.
if database_exists "$previous"; then
  fail "database $previous already exists (the data a restore of the same name replaced); drop it or use another SampleDBRestore name"
fi

# Clients are cut off at the Service; sessions still open on the database end here.
end_sessions
# A copy left by a restore whose pod was lost is incomplete: start from nothing.
drop_staging
trap 'drop_staging > /dev/null 2>&1 || true' EXIT

# The new database is made like the live one. pg_db_role_setting rows are copied as stored: ALTER DATABASE SET
# would need each value re-quoted by its setting's type (list settings such as search_path), as pg_dumpall does.
psql_run -d postgres -tA -v live="$live" -v staging="$staging" <<'SQL'
SELECT format('CREATE DATABASE %I OWNER %I TEMPLATE template0 ENCODING %L LC_COLLATE %L LC_CTYPE %L CONNECTION LIMIT %s',
         :'staging', pg_get_userbyid(d.datdba), pg_encoding_to_char(d.encoding), d.datcollate, d.datctype,
         d.datconnlimit)
       || CASE to_jsonb(d) ->> 'datlocprovider'
            WHEN 'c' THEN ' LOCALE_PROVIDER libc'
            WHEN 'i' THEN format(' LOCALE_PROVIDER icu ICU_LOCALE %L',
                                 coalesce(to_jsonb(d) ->> 'datlocale', to_jsonb(d) ->> 'daticulocale'))
            WHEN 'b' THEN format(' LOCALE_PROVIDER builtin BUILTIN_LOCALE %L', to_jsonb(d) ->> 'datlocale')
            ELSE '' END
FROM pg_database d WHERE d.datname = :'live' \gexec
SELECT format('REVOKE ALL ON DATABASE %I FROM PUBLIC', :'staging')
FROM pg_database WHERE datname = :'live' AND datacl IS NOT NULL \gexec
SELECT format('GRANT %s ON DATABASE %I TO %s%s', a.privilege_type, :'staging',
         CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END,
         CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END)
FROM pg_database d, aclexplode(d.datacl) a WHERE d.datname = :'live' AND a.grantee <> d.datdba \gexec
INSERT INTO pg_db_role_setting (setdatabase, setrole, setconfig)
SELECT n.oid, s.setrole, s.setconfig
FROM pg_db_role_setting s JOIN pg_database o ON o.oid = s.setdatabase, pg_database n
WHERE o.datname = :'live' AND n.datname = :'staging';
SQL
log "created database $staging like $live"

if ! pg_restore --exit-on-error -d "$staging" "$dump" 2> /tmp/pg_restore.err; then
  cat /tmp/pg_restore.err >&2
  fail "pg_restore into a new database failed, the live data is unchanged: $(tail -n 3 /tmp/pg_restore.err | tr '\n' ' ')"
fi
log "restored $dump into $staging (owners as recorded)"

tables=0
if [ -f "$recorded" ]; then
  count_rows_sql | psql_run -tA -d "$staging" | sort > /tmp/restored.counts
  differing=$(grep -Fxv -f /tmp/restored.counts "$recorded" | head -n 20 | tr '\n' ';' || true)
  [ -z "$differing" ] || fail "verification failed: these tables of the restored copy differ from the row counts the backup recorded: $differing; the live data is unchanged"
  tables=$(wc -l < "$recorded" | tr -d ' ')
  log "verified $tables tables against the recorded row counts"
fi

# Renaming needs the two databases without sessions; a client that reconnects in between makes it fail, so retry.
tries=0
until end_sessions && psql_run -d postgres -v live="$live" -v staging="$staging" -v previous="$previous" 2> /tmp/switch.err <<'SQL'
BEGIN;
ALTER DATABASE :"live" RENAME TO :"previous";
ALTER DATABASE :"staging" RENAME TO :"live";
COMMIT;
SQL
do
  # The COMMIT may have succeeded with its answer lost (a broken connection): then the names are switched already.
  if database_exists "$previous" && ! database_exists "$staging"; then break; fi
  tries=$((tries + 1))
  if [ "$tries" -ge 20 ] || ! grep -q 'being accessed by other users' /tmp/switch.err; then
    fail "switch failed: $(tail -n 3 /tmp/switch.err | tr '\n' ' '); the live data is unchanged"
  fi
  sleep 0.5
done
log "switched: $live holds the restored data, $previous the data it replaced"
result=$(printf '{"restored":true,"tables":%s,"previous":"%s"}' "$tables" "$previous")
printf '%s' "$result" > "$SAMPLEDB_TERMINATION_LOG"
printf '%s\n' "$result"
`}`;
