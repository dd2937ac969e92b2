// The major upgrade Jobs' scripts. They run with the database stopped (the StatefulSet at 0 replicas), on the data
// volume, in the new major's image; an init container in the old major's image copies its binaries in first
// (COPY_OLD_BINARIES_SCRIPT). One script, four modes, each safe to run again after a kill at any point:
//
//   preflight  the files are the old major; enough free space for a copy; `pg_upgrade --check` passes.
//   upgrade    row counts of every table (old server), pg_upgrade --copy into a staged directory, the same counts
//              on the new server, compared, then the staged directory becomes pgdata and the old one is set aside.
//   rollback   puts the old directory back as pgdata (the new one is removed): the old server starts as before.
//   cleanup    removes the old directory, once the new server has been verified.
//
// The servers these scripts start listen on a unix socket in /tmp only (no TCP), with a trust hba file of their own,
// so no password is needed and none is written anywhere.
import { COMMON_FUNCTIONS } from './common.ts';

export const UPGRADE_MODES = ['preflight', 'upgrade', 'rollback', 'cleanup'] as const;
export type UpgradeMode = (typeof UPGRADE_MODES)[number];

/** Where the init container puts the old major's installation (a relocatable copy of /usr/lib and /usr/share). */
export const OLD_INSTALL_ROOT = '/opt/sampledb-old';

export interface UpgradeScriptSettings {
  mode: UpgradeMode;
  oldMajor: number;
  newMajor: number;
  /** The mount of the data volume; pgdata is below it. */
  dataDirectory: string;
  /** Where COPY_OLD_BINARIES_SCRIPT put the old installation. Default: OLD_INSTALL_ROOT. */
  oldRoot?: string;
  /** Directory of the new binaries. */
  newBinDir: string;
  /** Scratch for the sockets (an emptyDir). */
  socketDirectory?: string;
  terminationLog?: string;
}

export function upgradeScriptEnv(settings: UpgradeScriptSettings): Record<string, string> {
  return {
    SAMPLEDB_SCRIPT: `sampledb-upgrade-${settings.mode}`,
    SAMPLEDB_UPGRADE_MODE: settings.mode,
    SAMPLEDB_OLD_MAJOR: String(settings.oldMajor),
    SAMPLEDB_NEW_MAJOR: String(settings.newMajor),
    SAMPLEDB_DATA: settings.dataDirectory,
    SAMPLEDB_OLD_ROOT: settings.oldRoot ?? OLD_INSTALL_ROOT,
    SAMPLEDB_OLD_BIN: `${settings.oldRoot ?? OLD_INSTALL_ROOT}/wrappers`,
    SAMPLEDB_NEW_BIN: settings.newBinDir,
    SAMPLEDB_SOCKETS: settings.socketDirectory ?? '/tmp/sockets',
    SAMPLEDB_TERMINATION_LOG: settings.terminationLog ?? '/dev/termination-log',
    HOME: '/tmp',
    PGAPPNAME: 'sampledb-upgrade',
  };
}

/**
 * The init container (old image): copies /usr/lib/postgresql/<old> and /usr/share/postgresql/<old> under
 * SAMPLEDB_OLD_ROOT at the same relative places (PostgreSQL finds its share and lib directories relative to its
 * binary), plus the shared libraries they link that are not glibc's, and puts wrappers in wrappers/ that run each binary
 * with those libraries. The new image may be a newer distribution (libicu of another soname, say): the main
 * container drops the libraries it has itself, so only the missing ones are taken from the old image.
 */
export const COPY_OLD_BINARIES_SCRIPT = `${String.raw`
set -eu
src=/usr/lib/postgresql/$SAMPLEDB_OLD_MAJOR
[ -x "$src/bin/postgres" ] || { echo "this image has no PostgreSQL $SAMPLEDB_OLD_MAJOR in $src" > "$SAMPLEDB_TERMINATION_LOG"; exit 1; }
root=$SAMPLEDB_OLD_ROOT
cd "$root"
rm -rf usr libs wrappers
mkdir -p "$root/usr/lib/postgresql" "$root/usr/share/postgresql" "$root/libs"
cp -a "$src" "$root/usr/lib/postgresql/"
cp -a "/usr/share/postgresql/$SAMPLEDB_OLD_MAJOR" "$root/usr/share/postgresql/"
if command -v ldd > /dev/null 2>&1; then
  for f in "$src"/bin/* "$src"/lib/*.so; do
    ldd "$f" 2> /dev/null | awk '$3 ~ /^\// { print $3 }'
  done | sort -u | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*|libresolv.so.*) ;;
      *) cp -L "$lib" "$root/libs/" ;;
    esac
  done
fi
# The real binaries stay in .../<major>/bin: PostgreSQL finds its lib and share directories relative to it only when
# its directory is still called bin. The wrappers live apart and are what pg_upgrade is given as the old bindir.
real=$root/usr/lib/postgresql/$SAMPLEDB_OLD_MAJOR/bin
mkdir -p wrappers
for f in "$real"/*; do
  name=$(basename "$f")
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s/libs exec %s/%s "$@"\n' "$root" "$real" "$name" > "wrappers/$name"
  chmod 0755 "wrappers/$name"
done
echo "copied PostgreSQL $SAMPLEDB_OLD_MAJOR to $root"
`}`;

/**
 * \`failed_checks <pg_upgrade output>\`: one line naming the checks pg_upgrade failed and the offending objects from
 * the files it names (at most 5 files, 10 lines each, 300 characters a file, 600 in all); empty when no check failed.
 */
export const FAILED_CHECKS_FUNCTION = String.raw`
# The first line of a failure: the checks that failed and, from the files pg_upgrade names, the offending objects
# (e.g. "In database: app public.procs.p"), bounded; then the end of its output. pg_upgrade up to 16 prints
# "Checking for reg* data types in user tables   fatal"; 17 prints "Checking data type usage   failed check: Checking
# for reg* data types in user tables".
failed_checks() { # log
  checks=$( { sed -n -E 's/^.*failed check: *//p' "$1"
    grep -E '[[:space:]]fatal[[:space:]]*$' "$1" | sed -E 's/[[:space:]]*fatal[[:space:]]*$//; s/^[[:space:]]+//'
  } | sed -E 's/[[:space:]]+$//' | head -n 5 | paste -sd ';' - | sed 's/;/; /g')
  objects=
  for f in $(grep -E '^[[:space:]]+/[^[:space:]]+\.txt[[:space:]]*$' "$1" | head -n 5); do
    [ -r "$f" ] || continue
    objects="$objects $(grep -v '^[[:space:]]*$' "$f" | head -n 10 | sed -E 's/^[[:space:]]+//' | tr '\n' ' ' | cut -c 1-300)"
  done
  [ -n "$checks" ] || return 0
  objects=$(printf '%s' "$objects" | sed -E 's/^ +//; s/ +$//')
  if [ -n "$objects" ]; then printf '%s: %s\n' "$checks" "$objects"; else printf '%s\n' "$checks"; fi | cut -c 1-600
}
`;

export const UPGRADE_SCRIPT = `${COMMON_FUNCTIONS}${FAILED_CHECKS_FUNCTION}${String.raw`
old=$SAMPLEDB_OLD_MAJOR
new=$SAMPLEDB_NEW_MAJOR
data=$SAMPLEDB_DATA
current=$data/pgdata
staged=$data/pgdata-$new.staged
aside=$data/pgdata-$old.old
work=$data/sampledb-upgrade-$new
sockets=$SAMPLEDB_SOCKETS
old_port=50432
new_port=50433

version_of() {
  cat "$1/PG_VERSION" 2> /dev/null || echo none
}

# Libraries the new image has itself are taken from it (same soname, newer build); only missing ones from the old.
trim_old_libraries() {
  libs=$SAMPLEDB_OLD_ROOT/libs
  [ -d "$libs" ] || return 0
  for lib in "$libs"/*; do
    [ -e "$lib" ] || continue
    name=$(basename "$lib")
    for dir in /lib /usr/lib /lib/*-linux-gnu /usr/lib/*-linux-gnu; do
      if [ -e "$dir/$name" ]; then rm -f "$lib"; break; fi
    done
  done
}

prepare() {
  mkdir -p "$work" "$sockets"
  chmod 0700 "$sockets"
  printf 'local all all trust\n' > "$sockets/hba.conf"
  cd "$work"
}

# A server of this Job: socket only, trust on that socket only.
start_server() { # bin datadir port
  "$1/pg_ctl" -D "$2" -l "$work/server-$3.log" -w -t 600 \
    -o "-p $3 -c listen_addresses='' -c unix_socket_directories=$sockets -c hba_file=$sockets/hba.conf" start > /dev/null ||
    fail "PostgreSQL in $2 did not start: $(tail -n 5 "$work/server-$3.log" 2> /dev/null | tr '\n' ' ')"
}

stop_server() { # bin datadir
  "$1/pg_ctl" -D "$2" -m fast -w -t 600 stop > /dev/null
}

sql() { # bin port database query
  "$1/psql" -X -At -v ON_ERROR_STOP=1 -h "$sockets" -p "$2" -U "$install_user" -d "$3" -c "$4"
}

# Exact row counts of every table of every database, sorted: "database|schema.table|count".
row_counts() { # bin port
  for db in $(sql "$1" "$2" postgres "SELECT datname FROM pg_database WHERE datallowconn ORDER BY 1"); do
    sql "$1" "$2" "$db" "SELECT format('SELECT %L, count(*) FROM %I.%I', n.nspname || '.' || c.relname, n.nspname, c.relname)
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
        AND n.nspname NOT LIKE 'pg_toast%' ORDER BY 1" |
      while read -r query; do
        printf '%s|%s\n' "$db" "$(sql "$1" "$2" "$db" "$query")"
      done
  done | LC_ALL=C sort
}

# Copy mode is pg_upgrade's default (the --copy flag exists only from 16 on), so the old files are never touched.
# The old cluster's install user (pg_upgrade must run as it on both), encoding, locale and checksums, which the new
# cluster must share. Starting and stopping the old server also leaves its files cleanly shut down (pg_upgrade
# refuses files left by a crash). PGUSER is the superuser of the credentials Secret; trust needs no password.
inspect_old() {
  install_user=$PGUSER
  start_server "$SAMPLEDB_OLD_BIN" "$current" "$old_port"
  install_user=$(sql "$SAMPLEDB_OLD_BIN" "$old_port" postgres "SELECT rolname FROM pg_roles WHERE oid = 10")
  settings=$(sql "$SAMPLEDB_OLD_BIN" "$old_port" postgres \
    "SELECT pg_encoding_to_char(encoding) || ' ' || datcollate || ' ' || datctype FROM pg_database WHERE datname = 'template1'")
  checksums=$(sql "$SAMPLEDB_OLD_BIN" "$old_port" postgres "SHOW data_checksums")
  if [ "$1" = counts ]; then
    row_counts "$SAMPLEDB_OLD_BIN" "$old_port" > "$work/counts-before"
    log "counted the rows of $(wc -l < "$work/counts-before") tables on PostgreSQL $old"
  fi
  stop_server "$SAMPLEDB_OLD_BIN" "$current"
}

init_staged() {
  rm -rf "$staged"
  # shellcheck disable=SC2086
  set -- $settings
  checksum_flag=
  if [ "$checksums" = on ]; then checksum_flag=--data-checksums
  elif [ "$new" -ge 18 ]; then checksum_flag=--no-data-checksums
  fi
  "$SAMPLEDB_NEW_BIN/initdb" -D "$staged" -U "$install_user" --encoding="$1" --lc-collate="$2" --lc-ctype="$3" \
    --auth-local=trust --auth-host=scram-sha-256 $checksum_flag > "$work/initdb.log" 2>&1 ||
    fail "initdb of PostgreSQL $new failed: $(tail -n 3 "$work/initdb.log" | tr '\n' ' ')"
}

run_pg_upgrade() { # extra flags
  if ! "$SAMPLEDB_NEW_BIN/pg_upgrade" -b "$SAMPLEDB_OLD_BIN" -B "$SAMPLEDB_NEW_BIN" -d "$current" -D "$staged" \
    -U "$install_user" -s "$sockets" -p "$old_port" -P "$new_port" \
    -o "-c hba_file=$sockets/hba.conf" -O "-c hba_file=$sockets/hba.conf" "$@" > "$work/pg_upgrade.log" 2>&1; then
    checks=$(failed_checks "$work/pg_upgrade.log")
    tail_text=$(grep -v '^$' "$work/pg_upgrade.log" | tail -n 6 | tr '\n' ' ')
    if [ -n "$checks" ]; then
      fail "pg_upgrade $* failed: $checks
$tail_text"
    fi
    fail "pg_upgrade $* failed: $tail_text"
  fi
}

check_space() {
  used_kb=$(du -sk "$current" | cut -f 1)
  free_kb=$(df -Pk "$data" | awk 'NR == 2 { print $4 }')
  # A copy of the files, plus room for WAL and the new catalog.
  need_kb=$(( used_kb + used_kb / 10 + 65536 ))
  if [ "$free_kb" -lt "$need_kb" ]; then
    fail "not enough free space on the data volume for pg_upgrade --copy: $(( free_kb / 1024 )) MiB free, $(( need_kb / 1024 )) MiB needed (the old files stay until the new server is verified); raise spec.storage.size"
  fi
  log "free space: $(( free_kb / 1024 )) MiB, needed $(( need_kb / 1024 )) MiB"
}

report() {
  log "$1"
  printf '%s\n' "$1" > "$SAMPLEDB_TERMINATION_LOG" 2> /dev/null || true
}

# An interrupted swap (killed between the two renames) is finished first, whatever the mode.
if [ ! -d "$current" ] && [ -d "$aside" ] && [ -d "$staged" ]; then
  mv "$staged" "$current"
  log "finished an interrupted swap: pgdata is PostgreSQL $(version_of "$current")"
fi

prepare
case "$SAMPLEDB_UPGRADE_MODE" in
  preflight)
    [ "$(version_of "$current")" = "$old" ] ||
      fail "the data files are PostgreSQL $(version_of "$current"), not $old: refusing to upgrade them"
    trim_old_libraries
    check_space
    inspect_old no-counts
    init_staged
    run_pg_upgrade --check
    rm -rf "$staged"
    report "preflight passed: pg_upgrade --check from $old to $new"
    ;;
  upgrade)
    if [ "$(version_of "$current")" = "$new" ] && [ -d "$aside" ]; then
      report "already upgraded: pgdata is PostgreSQL $new, the $old files are kept in $aside"
      exit 0
    fi
    [ "$(version_of "$current")" = "$old" ] ||
      fail "the data files are PostgreSQL $(version_of "$current"), not $old: refusing to upgrade them"
    trim_old_libraries
    check_space
    inspect_old counts
    init_staged
    run_pg_upgrade
    # pg_upgrade carries no client authentication settings over: the old ones apply to the new server.
    cp "$current/pg_hba.conf" "$current/pg_ident.conf" "$staged/"
    start_server "$SAMPLEDB_NEW_BIN" "$staged" "$new_port"
    row_counts "$SAMPLEDB_NEW_BIN" "$new_port" > "$work/counts-after"
    # The planner's statistics are not carried over: without them the first queries on 17 would be slow.
    "$SAMPLEDB_NEW_BIN/vacuumdb" -h "$sockets" -p "$new_port" -U "$install_user" --all --analyze-in-stages > /dev/null 2>&1 ||
      log "vacuumdb --analyze-in-stages failed; the statistics build up with autovacuum"
    stop_server "$SAMPLEDB_NEW_BIN" "$staged"
    if ! cmp -s "$work/counts-before" "$work/counts-after"; then
      fail "row counts differ after pg_upgrade: $(diff "$work/counts-before" "$work/counts-after" | grep '^[<>]' | head -n 5 | tr '\n' ' ')"
    fi
    log "row counts of $(wc -l < "$work/counts-after") tables are equal on $old and $new"
    mv "$current" "$aside"
    mv "$staged" "$current"
    report "upgraded from PostgreSQL $old to $new; row counts of $(wc -l < "$work/counts-after") tables equal; the $old files are kept in $aside"
    ;;
  rollback)
    if [ -d "$aside" ]; then
      if [ -d "$current" ]; then
        rm -rf "$data/pgdata-$new.failed"
        mv "$current" "$data/pgdata-$new.failed"
      fi
      mv "$aside" "$current"
    fi
    rm -rf "$staged" "$data/pgdata-$new.failed"
    [ "$(version_of "$current")" = "$old" ] ||
      fail "after the rollback pgdata is PostgreSQL $(version_of "$current"), not $old"
    report "rolled back: pgdata holds the PostgreSQL $old files again"
    ;;
  cleanup)
    [ "$(version_of "$current")" = "$new" ] ||
      fail "pgdata is PostgreSQL $(version_of "$current"), not $new: refusing to remove the $old files"
    rm -rf "$aside" "$staged" "$data/pgdata-$new.failed"
    cd "$data"
    rm -rf "$work"
    report "removed the PostgreSQL $old files"
    ;;
  *)
    fail "unknown mode $SAMPLEDB_UPGRADE_MODE"
    ;;
esac
`}`;
