#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for development and CI: `cluster.sh start DIR [PORT]` creates it
# in DIR (trust authentication, loopback only, socket in DIR) and prints its URL;
# `cluster.sh stop DIR` stops it. PostgreSQL refuses to run as root: as root the cluster runs as
# the `postgres` user (created by Debian's package), otherwise as yourself. Installs PostgreSQL
# from Debian's packages when its binaries are missing and apt-get can be used.
set -euo pipefail

command=${1:?usage: cluster.sh start|stop DIR [PORT]}
dir=${2:?usage: cluster.sh start|stop DIR [PORT]}
port=${3:-54329}

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$bin" ] && [ "$command" = start ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    echo "installing PostgreSQL from Debian's packages" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null 2>&1 \
      || { apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }
    bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  else
    echo "PostgreSQL is not installed (apt-get install postgresql)" >&2
    exit 69
  fi
fi

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$command" in
  start)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    [ "$(id -u)" -eq 0 ] && chown postgres "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      as_owner "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    # Durability is off: the cluster is thrown away. max_connections covers several instances' pools.
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 30 start \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" >/dev/null \
      || { cat "$dir/postgres.log" >&2; exit 1; }
    echo "postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
    ;;
  stop)
    [ -d "$dir/data" ] && as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
    ;;
  *)
    echo "usage: cluster.sh start|stop DIR [PORT]" >&2
    exit 64
    ;;
esac
