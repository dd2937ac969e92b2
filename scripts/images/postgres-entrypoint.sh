#!/usr/bin/env bash
# Entrypoint of the PostgreSQL images built by scripts/build-images.sh for the real test node. It keeps the
# documented contract of the official postgres image (https://hub.docker.com/_/postgres), which the operator's pod
# spec relies on, so a SampleDB runs the same way on these images and on docker.io/library/postgres:
#   - arguments starting with "-" are passed to `postgres`;
#   - when PGDATA holds no cluster, initdb creates one with POSTGRES_USER (default postgres) as superuser and
#     POSTGRES_PASSWORD (or POSTGRES_HOST_AUTH_METHOD=trust), POSTGRES_INITDB_ARGS, POSTGRES_INITDB_WALDIR;
#     POSTGRES_DB (default POSTGRES_USER) is created; /docker-entrypoint-initdb.d/*.sh|*.sql|*.sql.gz run once;
#     remote connections get `host all all all <POSTGRES_HOST_AUTH_METHOD, default scram-sha-256>` in pg_hba.conf;
#   - each POSTGRES_* variable may instead be read from a file named by <NAME>_FILE;
#   - first initialisation runs a temporary server on the Unix socket only, so nothing connects over TCP before the
#     real server starts;
#   - started as root it prepares PGDATA and re-executes itself as postgres (uid 999); started as uid 999 (the
#     operator's pods: non-root, read-only root file system) it writes only to PGDATA and /var/run/postgresql.
# Not provided: nss_wrapper for arbitrary uids (the images run as 999, as the operator's pods do).
set -Eeo pipefail

die() {
  printf 'docker-entrypoint: error: %s\n' "$*" >&2
  exit 1
}

# file_env VAR [DEFAULT]: VAR from the environment, or from the file named by VAR_FILE, else DEFAULT.
file_env() {
  local var=$1 file_var="${1}_FILE" default=${2:-}
  if [[ -n ${!var:-} && -n ${!file_var:-} ]]; then die "both $var and $file_var are set (they are exclusive)"; fi
  local value=$default
  if [[ -n ${!var:-} ]]; then
    value=${!var}
  elif [[ -n ${!file_var:-} ]]; then
    value=$(<"${!file_var}")
  fi
  export "$var"="$value"
  unset "$file_var"
}

create_directories() {
  mkdir -p "$PGDATA"
  chmod 00700 "$PGDATA" || :
  mkdir -p /var/run/postgresql || :
  chmod 03775 /var/run/postgresql 2>/dev/null || :
  if [[ -n ${POSTGRES_INITDB_WALDIR:-} ]]; then
    mkdir -p "$POSTGRES_INITDB_WALDIR"
    chmod 00700 "$POSTGRES_INITDB_WALDIR" || :
  fi
  if [[ $(id -u) == 0 ]]; then
    chown -R postgres:postgres "$PGDATA" /var/run/postgresql ${POSTGRES_INITDB_WALDIR:+"$POSTGRES_INITDB_WALDIR"}
  fi
}

init_database_dir() {
  local args=()
  [[ -n ${POSTGRES_INITDB_WALDIR:-} ]] && args+=(--waldir "$POSTGRES_INITDB_WALDIR")
  # Word splitting of POSTGRES_INITDB_ARGS is the documented behaviour ("--data-checksums --locale=C").
  # shellcheck disable=SC2086
  initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") "${args[@]}" $POSTGRES_INITDB_ARGS
}

setup_hba() {
  local method=${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}
  printf '\n# added by docker-entrypoint: remote connections\nhost all all all %s\n' "$method" >> "$PGDATA/pg_hba.conf"
}

# The server's own arguments ("$@" after `postgres`) apply to the temporary server too: the operator passes
# `-c config_file=...`, which sets the socket directory.
temp_server_start() {
  local options
  options=$(printf '%q ' "$@" -c "listen_addresses=" -p "${PGPORT:-5432}")
  PGUSER=$POSTGRES_USER pg_ctl -D "$PGDATA" -o "$options" -w start
}

temp_server_stop() {
  PGUSER=$POSTGRES_USER pg_ctl -D "$PGDATA" -m fast -w stop
}

psql_local() {
  PGPASSWORD='' psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --no-password --no-psqlrc "$@"
}

# psql interpolates :"db" (an identifier) and :'db' (a literal) in SQL read from stdin, not inside string literals.
create_database() {
  [[ $POSTGRES_DB == postgres ]] && return 0
  local exists
  exists=$(psql_local --dbname postgres --set db="$POSTGRES_DB" --tuples-only --no-align <<'SQL'
SELECT 1 FROM pg_database WHERE datname = :'db';
SQL
)
  [[ -n $exists ]] && return 0
  psql_local --dbname postgres --set db="$POSTGRES_DB" <<'SQL'
CREATE DATABASE :"db";
SQL
}

run_init_scripts() {
  local file
  for file in /docker-entrypoint-initdb.d/*; do
    [[ -e $file ]] || continue
    case $file in
      *.sh)
        if [[ -x $file ]]; then
          printf 'docker-entrypoint: running %s\n' "$file"
          "$file"
        else
          printf 'docker-entrypoint: sourcing %s\n' "$file"
          # shellcheck disable=SC1090
          . "$file"
        fi
        ;;
      *.sql) printf 'docker-entrypoint: running %s\n' "$file"; psql_local --dbname "$POSTGRES_DB" -f "$file" ;;
      *.sql.gz) printf 'docker-entrypoint: running %s\n' "$file"; gunzip -c "$file" | psql_local --dbname "$POSTGRES_DB" ;;
      *) printf 'docker-entrypoint: ignoring %s\n' "$file" ;;
    esac
  done
}

if [[ ${1:0:1} == - ]]; then
  set -- postgres "$@"
fi

if [[ ${1:-} == postgres ]]; then
  : "${PGDATA:?PGDATA must be set}"
  create_directories
  if [[ $(id -u) == 0 ]]; then
    exec setpriv --reuid=postgres --regid=postgres --init-groups "${BASH_SOURCE[0]}" "$@"
  fi
  if [[ ! -s $PGDATA/PG_VERSION ]]; then
    file_env POSTGRES_PASSWORD
    file_env POSTGRES_USER postgres
    file_env POSTGRES_DB "$POSTGRES_USER"
    file_env POSTGRES_INITDB_ARGS
    if [[ -z $POSTGRES_PASSWORD && ${POSTGRES_HOST_AUTH_METHOD:-} != trust ]]; then
      die 'the database is uninitialized and POSTGRES_PASSWORD is not set: set it (or POSTGRES_PASSWORD_FILE), or POSTGRES_HOST_AUTH_METHOD=trust to allow every connection without a password'
    fi
    init_database_dir
    setup_hba
    shift
    temp_server_start "$@"
    create_database
    run_init_scripts
    temp_server_stop
    set -- postgres "$@"
    printf 'docker-entrypoint: PostgreSQL init process complete; ready for start up.\n'
  else
    printf 'docker-entrypoint: PostgreSQL database directory appears to contain a database; skipping initialization\n'
  fi
fi

exec "$@"
