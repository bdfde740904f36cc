#!/usr/bin/env bash
# The services the tests and benchmarks need, on any Debian machine: installs PostgreSQL and Redis where they are
# missing (apt, as root), then starts them on loopback. Safe to run again: what is installed and running is left be.
#
# What the tests and benchmarks assume of these services (written down here and nowhere else):
#   PostgreSQL  127.0.0.1:5432, trust authentication from loopback; the superuser roles `postgres` (.ci/run
#               creates and drops one database per run with it) and `root` (the README's TEST_DATABASE_URL);
#               a database `root` so that `psql -h 127.0.0.1` works as root without naming one.
#   Redis       127.0.0.1:6379, no password, nothing persisted; the rate-limit tests use database 15.
#
# Usage: bash scripts/services.sh [postgresql] [redis]   (both when none is named; scripts/test.sh names redis,
# the one service the SQLite run needs; .ci/run starts both).
# SERVICES_NO_INSTALL=1 never installs: it only starts what is there, and says what to install otherwise.
set -euo pipefail

PG_HOST=127.0.0.1
PG_PORT=5432
REDIS_PORT=6379

say() { printf 'services: %s\n' "$*"; }
die() { printf 'services: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo "$@"
  else return 1
  fi
}

APT_UPDATED=
apt_install() {
  if [ -n "${SERVICES_NO_INSTALL:-}" ] || ! command -v apt-get >/dev/null; then
    die "$1 is not installed. Install it (Debian: apt-get install -y $*), or point the tests at a running one."
  fi
  if [ -z "$APT_UPDATED" ]; then
    as_root apt-get update -qq || die "apt-get update needs root: run as root, or: sudo apt-get install -y $*"
    APT_UPDATED=1
  fi
  say "installing $*"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null \
    || die "could not install $*: run as root, or: sudo apt-get install -y $*"
}

# --- PostgreSQL -----------------------------------------------------------------------------------------------
pg_server_installed() { compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null && command -v pg_ctlcluster >/dev/null; }

start_postgresql() {
  if pg_isready -h "$PG_HOST" -p "$PG_PORT" -q 2>/dev/null; then
    say "PostgreSQL answers on $PG_HOST:$PG_PORT"
  else
    pg_server_installed || apt_install postgresql
    local version cluster_dir
    version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
    if ! pg_lsclusters -h 2>/dev/null | awk '{print $1" "$2}' | grep -qx "$version main"; then
      say "creating the PostgreSQL $version cluster 'main'"
      as_root pg_createcluster "$version" main --port "$PG_PORT" >/dev/null || die "pg_createcluster needs root"
    fi
    cluster_dir=/etc/postgresql/$version/main
    # Trust on loopback, before every other rule (the first matching line wins). Written once.
    if ! as_root grep -q '^# research-repository: trust on loopback' "$cluster_dir/pg_hba.conf"; then
      as_root sh -c "{ printf '%s\n' '# research-repository: trust on loopback' \
        'local all all trust' 'host all all 127.0.0.1/32 trust' 'host all all ::1/128 trust'; \
        cat '$cluster_dir/pg_hba.conf'; } > '$cluster_dir/pg_hba.conf.new' \
        && chown --reference='$cluster_dir/pg_hba.conf' '$cluster_dir/pg_hba.conf.new' \
        && mv '$cluster_dir/pg_hba.conf.new' '$cluster_dir/pg_hba.conf'"
    fi
    as_root mkdir -p "$cluster_dir/conf.d"
    printf "listen_addresses = '127.0.0.1'\nport = %s\n" "$PG_PORT" | as_root tee "$cluster_dir/conf.d/research-repository.conf" >/dev/null
    say "starting PostgreSQL $version"
    as_root pg_ctlcluster --skip-systemctl-redirect "$version" main restart 2>/dev/null \
      || as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start \
      || die "PostgreSQL did not start: see /var/log/postgresql/postgresql-$version-main.log"
    for _ in $(seq 1 30); do pg_isready -h "$PG_HOST" -p "$PG_PORT" -q && break; sleep 1; done
    pg_isready -h "$PG_HOST" -p "$PG_PORT" -q || die "PostgreSQL started but does not answer on $PG_HOST:$PG_PORT"
  fi
  # The roles and database the tests use, made as the superuser over loopback (trust, as configured above).
  local admin=(psql -h "$PG_HOST" -p "$PG_PORT" -U postgres -qAt -v ON_ERROR_STOP=1 -d postgres)
  "${admin[@]}" -c 'SELECT 1' >/dev/null 2>&1 \
    || die "PostgreSQL answers but not with trust for 'postgres' on $PG_HOST: add 'host all all 127.0.0.1/32 trust' first in pg_hba.conf"
  [ "$("${admin[@]}" -c "SELECT 1 FROM pg_roles WHERE rolname = 'root'")" = 1 ] || "${admin[@]}" -c 'CREATE ROLE root SUPERUSER LOGIN'
  [ "$("${admin[@]}" -c "SELECT 1 FROM pg_database WHERE datname = 'root'")" = 1 ] || "${admin[@]}" -c 'CREATE DATABASE root OWNER root'
  say "PostgreSQL ready: roles postgres and root, trust on $PG_HOST:$PG_PORT"
}

# --- Redis ----------------------------------------------------------------------------------------------------
start_redis() {
  if command -v redis-cli >/dev/null && redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG; then
    say "Redis answers on 127.0.0.1:$REDIS_PORT"
    return
  fi
  command -v redis-server >/dev/null || apt_install redis-server
  say "starting Redis"
  # Nothing is saved: the tests' counters are thrown away with the process.
  redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no \
    --dir "${TMPDIR:-/tmp}" --logfile "${TMPDIR:-/tmp}/research-repository-redis.log" >/dev/null
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG && break; sleep 0.5; done
  redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG \
    || die "Redis did not answer on 127.0.0.1:$REDIS_PORT: see ${TMPDIR:-/tmp}/research-repository-redis.log"
  say "Redis ready on 127.0.0.1:$REDIS_PORT"
}

[ $# -gt 0 ] || set -- postgresql redis
for service in "$@"; do
  case "$service" in
    postgresql) command -v pg_isready >/dev/null || apt_install postgresql-client; start_postgresql ;;
    redis) start_redis ;;
    *) die "unknown service '$service' (postgresql, redis)" ;;
  esac
done
