#!/usr/bin/env bash
# Starts a throwaway Postgres for the store tests and prints `export DATABASE_URL=...`
# and `export AGENT_STORE_PG_DIR=...`:
#   eval "$(bash scripts/postgres.sh)"        # start (or reuse) it
#   bash scripts/postgres.sh restart [MODE]    # restart it: MODE fast (the default: sessions
#                                              # cut, then a clean shutdown) or immediate
#                                              # (as a crash: recovery from the WAL at start)
#   bash scripts/postgres.sh stop              # stop it
# Installs Debian's `postgresql` package when no server binaries are found. The cluster
# lives in $AGENT_STORE_PG_DIR (default: a folder under the temp dir), trusts local
# connections only, and listens on 127.0.0.1 on a free port, with TLS on beside plain
# TCP: its certificate, for IP 127.0.0.1 only, is signed by a CA made here,
# $AGENT_STORE_PG_DIR/tls/ca.crt. Everything but the export lines goes to stderr.
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

case "${1:-}" in
  stop)
    if [[ -f "$dir/data/postmaster.pid" ]]; then
      as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2
    fi
    exit 0
    ;;
  restart)
    mode="${2:-fast}"
    if [[ "$mode" != fast && "$mode" != immediate ]]; then
      log "restart takes fast or immediate, not \`$mode\`"
      exit 2
    fi
    # With the options it was started with (pg_ctl keeps them in postmaster.opts).
    as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m "$mode" -w -t 60 restart >&2
    exit 0
    ;;
esac

mkdir -p "$dir"
if [[ "$(id -u)" == 0 ]]; then
  chown postgres: "$dir"
fi
if [[ ! -f "$dir/data/PG_VERSION" ]]; then
  log "initialising a cluster in $dir/data"
  as_pg "$bin/initdb" -D "$dir/data" -U postgres -A trust --no-sync >/dev/null
fi

# A CA, and a server certificate it signs for 127.0.0.1 (not for `localhost`, which the
# tests use to see a name mismatch refused).
tls="$dir/tls"
if [[ ! -f "$tls/server.crt" ]]; then
  log "making a test CA and a server certificate in $tls"
  mkdir -p "$tls"
  ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
  openssl req -x509 "${ec[@]}" -keyout "$tls/ca.key" -out "$tls/ca.crt" -days 3650 \
    -subj "/CN=toolwright-store test CA" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  openssl req "${ec[@]}" -keyout "$tls/server.key" -out "$tls/server.csr" \
    -subj "/CN=127.0.0.1" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
    >"$tls/server.ext"
  openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" \
    -CAcreateserial -out "$tls/server.crt" -days 3650 -extfile "$tls/server.ext" 2>/dev/null
  chmod 600 "$tls/server.key" "$tls/ca.key"
  if [[ "$(id -u)" == 0 ]]; then
    chown -R postgres: "$tls"
  fi
fi

running=false
if as_pg "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1 && [[ -f "$dir/port" ]]; then
  running=true
  port="$(cat "$dir/port")"
  # A server started before TLS was set up here: started again with it.
  if [[ "$(as_pg "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -tAc 'SHOW ssl')" != on ]]; then
    log "restarting the server on 127.0.0.1:$port with TLS on"
    as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2
    running=false
  fi
fi
if [[ "$running" == true ]]; then
  log "reusing the server on 127.0.0.1:$port"
else
  port=$((20000 + RANDOM % 30000))
  # A port nothing answers on.
  while (: </dev/tcp/127.0.0.1/"$port") 2>/dev/null; do
    port=$((20000 + RANDOM % 30000))
  done
  as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=200 -c ssl=on \
        -c ssl_cert_file=$tls/server.crt -c ssl_key_file=$tls/server.key" \
    start >&2
  echo "$port" | as_pg tee "$dir/port" >/dev/null
  log "started on 127.0.0.1:$port"
fi

if ! as_pg "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -tAc \
  "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1; then
  as_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres "$db"
fi

echo "export DATABASE_URL=postgres://postgres@127.0.0.1:$port/$db"
echo "export AGENT_STORE_PG_DIR=$dir"
