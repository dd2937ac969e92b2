// Shell functions shared by the data-path scripts. POSIX sh (the official images have dash or busybox ash), so no
// arrays, no `local`, no `[[`. Written as String.raw so psql's backslash commands stay literal; the scripts use
// `$VAR`, never brace expansions, because `${` would be a template substitution here. Every variable a script
// reads is set by its Job (see the *Env functions), so `set -u` catches a missing one.

/** A backtick inside String.raw. */
export const BT = '`';

export const COMMON_FUNCTIONS = String.raw`
set -eu

log() {
  printf '%s %s: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$SAMPLEDB_SCRIPT" "$*" >&2
}

# The Job's container reports the last message as its termination message, which the operator shows in a condition.
fail() {
  log "error: $*"
  printf '%s\n' "$*" > "$SAMPLEDB_TERMINATION_LOG" 2>/dev/null || true
  exit 1
}

# Waits until the server accepts connections, at most SAMPLEDB_WAIT_SECONDS.
wait_for_server() {
  deadline=$(( $(date +%s) + SAMPLEDB_WAIT_SECONDS ))
  until pg_isready -q -t 5 -d postgres; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      fail "PostgreSQL at $PGHOST:$PGPORT did not accept connections within $SAMPLEDB_WAIT_SECONDS seconds"
    fi
    # The init Job starts while initdb runs: a short pause lets it in soon after the server listens.
    sleep 0.5
  done
  log "PostgreSQL at $PGHOST:$PGPORT accepts connections"
}

psql_run() {
  psql -X -q -v ON_ERROR_STOP=1 "$@"
}

sha256_of() {
  sha256sum "$1" | cut -d ' ' -f 1
}

# Refuses a dump whose sha256 is not the expected one: SAMPLEDB_RESTORE_CHECKSUM ("sha256:<hex>" or "<hex>"), or
# else the "<dump>.sha256" file the backup wrote next to it.
verify_dump() {
  dump=$1
  [ -f "$dump" ] || fail "backup file $dump does not exist"
  expected=$SAMPLEDB_RESTORE_CHECKSUM
  if [ -z "$expected" ] && [ -f "$dump.sha256" ]; then
    expected=$(cut -d ' ' -f 1 < "$dump.sha256")
  fi
  expected=$(printf '%s' "$expected" | sed 's/^sha256://')
  [ -n "$expected" ] || fail "no checksum for $dump: refusing to restore an unverified backup"
  actual=$(sha256_of "$dump")
  if [ "$actual" != "$expected" ]; then
    fail "checksum mismatch for $dump: expected sha256:$expected, found sha256:$actual; the backup is corrupt or was modified, refusing to restore"
  fi
  log "checksum of $dump verified (sha256:$actual)"
}

# Restores a dump into SAMPLEDB_DATABASE in one transaction (a failure changes nothing), after verifying it, with
# every object owned by SAMPLEDB_OWNER: a dump restored into another server, whose roles may differ.
restore_dump() {
  verify_dump "$1"
  pg_restore --clean --if-exists --no-owner --role="$SAMPLEDB_OWNER" --single-transaction \
    -d "$SAMPLEDB_DATABASE" "$1"
  log "restored $1 into database $SAMPLEDB_DATABASE"
}

# Restores an already verified dump of this same database back into it, in one transaction, as the superuser with
# the owners the dump recorded: objects that another role owns (a table the superuser created, an extension) are
# dropped and come back as they were, where restoring as the owner would fail on them ("must be owner of table").
restore_own_dump() {
  pg_restore --clean --if-exists --single-transaction -d "$SAMPLEDB_DATABASE" "$1"
  log "restored $1 into database $SAMPLEDB_DATABASE (owners as recorded)"
}

# Per-table row counts of the database psql connects to, one "schema.table|rows" line per table: what a backup
# records in its snapshot and what a verification compares the restored copy against. Prints psql input: a query
# that writes the count queries, and psql's \gexec to run them.
count_rows_sql() {
  printf '%s \\gexec\n' "SELECT format('SELECT %L, count(*) FROM %I.%I', schemaname || '.' || tablename, schemaname, tablename) FROM pg_catalog.pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY schemaname, tablename"
}

# The total of the row counts in a counts file.
sum_rows() {
  sed 's/.*|//' "$1" | {
    total=0
    while read -r n; do total=$((total + n)); done
    echo "$total"
  }
}

# Milliseconds since the epoch (GNU date's %N; whole seconds where date has no %N).
now_ms() {
  n=$(date +%s%N)
  case $n in
    *N) echo $(( $(date +%s) * 1000 )) ;;
    *) echo $(( n / 1000000 )) ;;
  esac
}
`;
