// The start script of the postgres container of a replicated SampleDB. The election record (the ConfigMap mounted at
// SAMPLEDB_ELECTION_FILE) decides the role at every start: the pod it names runs the image's entrypoint as a
// primary; any other pod is a standby, cloned with pg_basebackup from the client Service (which selects the
// primary) when its volume is empty, then streaming from it. So an old primary the operator fenced by deleting its
// pod comes back as a standby, never as a second primary. A standby whose files are of an older major than its server
// (the primary was upgraded) is cloned again. The replication password goes to a passfile in /tmp
// (an emptyDir), never onto a command line, and is removed from the server's environment.
export const REPLICATION_START_SCRIPT = String.raw`set -eu
log() { printf 'sampledb-start: %s\n' "$*" >&2; }
umask 077
hba=/tmp/pg_hba.conf
# As the image's own (local and loopback trusted, remote SCRAM), plus streaming for the replication role only.
cat > "$hba" <<HBA
local all all trust
host all all 127.0.0.1/32 trust
host all all ::1/128 trust
local replication all trust
host replication $SAMPLEDB_REPLICATION_USER all scram-sha-256
host all all all scram-sha-256
HBA
printf '*:*:*:%s:%s\n' "$SAMPLEDB_REPLICATION_USER" "$SAMPLEDB_REPLICATION_PASSWORD" > /tmp/pgpass
unset SAMPLEDB_REPLICATION_PASSWORD
primary=$(cat "$SAMPLEDB_ELECTION_FILE")
# No synchronous_standby_names here: a command-line setting would override the one the operator sets with ALTER
# SYSTEM once standbys stream, and at the first start the image's bootstrap server would wait for ever on its
# CREATE DATABASE for a standby that cannot exist yet (replication/synchronous.ts).
set -- "$@" -c "hba_file=$hba"
if [ "$primary" = "$SAMPLEDB_POD" ]; then
  log "the election record names this pod ($SAMPLEDB_POD): starting as the primary"
  rm -f "$PGDATA/standby.signal"
  exec docker-entrypoint.sh postgres "$@"
fi
named=$primary
[ -n "$named" ] || named='no pod (the primary is being replaced)'
log "the election record names $named: starting $SAMPLEDB_POD as a standby"
# After a major upgrade of the primary (ADR 0009) a standby's volume still holds the older major's files, which this
# server cannot run: they are a copy of the primary's past, so they are replaced by a clone of the upgraded primary.
# Only older files: newer ones are never removed (the server refuses them, and the pod says why).
server_major=$(postgres -V | sed -n 's/^[^0-9]*\([0-9][0-9]*\).*/\1/p')
files_major=$(cat "$PGDATA/PG_VERSION" 2>/dev/null || true)
case "$files_major" in
  '' | *[!0-9]*) ;;
  *)
    if [ -n "$server_major" ] && [ "$files_major" -lt "$server_major" ]; then
      log "the volume holds PostgreSQL $files_major files, this server is $server_major: re-cloning from the upgraded primary"
      rm -rf "$PGDATA"
    fi
    ;;
esac
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  rm -rf "$PGDATA"
  until PGPASSFILE=/tmp/pgpass pg_basebackup -w -h "$SAMPLEDB_PRIMARY_HOST" -p "$SAMPLEDB_PRIMARY_PORT" \
    -U "$SAMPLEDB_REPLICATION_USER" -D "$PGDATA" -X stream -c fast; do
    log "pg_basebackup from $SAMPLEDB_PRIMARY_HOST failed; retrying in 2 s"
    rm -rf "$PGDATA"
    sleep 2
  done
  log "cloned from $SAMPLEDB_PRIMARY_HOST"
fi
touch "$PGDATA/standby.signal"
# Stream from the elected primary's pod directly (its stable name through the headless Service), the client Service
# second. A switchover's fence takes the primary label, and with it the client Service's endpoint, before the old
# primary's shutdown has sent its last WAL; a connection to the pod itself keeps receiving it until the end.
# target_session_attrs=primary skips a host that is no longer the primary (the old one after a handover restarts as
# a standby), so the client Service then leads to the new one.
hosts=$SAMPLEDB_PRIMARY_HOST
ports=$SAMPLEDB_PRIMARY_PORT
if [ -n "$primary" ]; then
  hosts="$primary.$SAMPLEDB_PEER_DOMAIN,$hosts"
  ports="$SAMPLEDB_PEER_PORT,$ports"
fi
# A primary that hangs keeps the TCP connection (through the Service's conntrack entry) open: without a short
# receiver timeout the standby would wait 60 s before it looks for the new primary, and with synchronous
# replication the new primary's commits would wait that long for it.
exec postgres "$@" -c recovery_target_timeline=latest -c wal_receiver_timeout=5s \
  -c "primary_conninfo=host=$hosts port=$ports target_session_attrs=primary user=$SAMPLEDB_REPLICATION_USER passfile=/tmp/pgpass application_name=$SAMPLEDB_POD connect_timeout=5"
`;
