#!/usr/bin/env bash
# Starts a throwaway Postgres for the store tests and prints `export DATABASE_URL=...`:
#   eval "$(bash scripts/postgres.sh)"        # start (or reuse) it
#   bash scripts/postgres.sh stop              # stop it
# Installs Debian's `postgresql` package when no server binaries are found. The cluster
# lives in $AGENT_STORE_PG_DIR (default: a folder under the temp dir), trusts local
# connections only, and listens on 127.0.0.1 on a free port. Everything but the export
# line goes to stderr.
set -euo pipefail

dir="${AGENT_STORE_PG_DIR:-${TMPDIR:-/tmp}/agent-store-postgres}"
db="agent_store_test"
log() { echo "postgres.sh: $*" >&2; }

bin_dir() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

bin="$(bin_dir)"
if [[ -z "$bin" || ! -x "$bin/initdb" ]]; then
  log "installing Debian's postgresql package"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq postgresql >&2
  bin="$(bin_dir)"
fi

# As root, the server runs as the `postgres` user (it refuses to run as root).
as_pg() {
  if [[ "$(id -u)" == 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

if [[ "${1:-}" == "stop" ]]; then
  if [[ -f "$dir/data/postmaster.pid" ]]; then
    as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2
  fi
  exit 0
fi

mkdir -p "$dir"
if [[ "$(id -u)" == 0 ]]; then
  chown postgres: "$dir"
fi
if [[ ! -f "$dir/data/PG_VERSION" ]]; then
  log "initialising a cluster in $dir/data"
  as_pg "$bin/initdb" -D "$dir/data" -U postgres -A trust --no-sync >/dev/null
fi

if as_pg "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1 && [[ -f "$dir/port" ]]; then
  port="$(cat "$dir/port")"
  log "reusing the server on 127.0.0.1:$port"
else
  port=$((20000 + RANDOM % 30000))
  # A port nothing answers on.
  while (: </dev/tcp/127.0.0.1/"$port") 2>/dev/null; do
    port=$((20000 + RANDOM % 30000))
  done
  as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=200" \
    start >&2
  echo "$port" | as_pg tee "$dir/port" >/dev/null
  log "started on 127.0.0.1:$port"
fi

if ! as_pg "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -tAc \
  "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1; then
  as_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres "$db"
fi

echo "export DATABASE_URL=postgres://postgres@127.0.0.1:$port/$db"
