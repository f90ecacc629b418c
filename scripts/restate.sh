#!/usr/bin/env bash
# Starts a throwaway Restate server for the toolwright-restate tests and prints
# `export RESTATE_INGRESS_URL=...`, `export RESTATE_ADMIN_URL=...` and
# `export RESTATE_DIR=...`:
#   eval "$(bash scripts/restate.sh)"          # start (or reuse) it
#   bash scripts/restate.sh register URL       # register the worker (deployment) at URL
#   bash scripts/restate.sh stop               # stop it
# Installs the server from npm (@restatedev/restate-server, a binary in the package) into
# .restate/ at the repository's root (git-ignored), once. The server listens on 127.0.0.1
# only, on free ports; its data lives in $RESTATE_DIR (default: a folder under the temp
# dir). Everything but the export lines goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

version="1.7.12"
dir="${RESTATE_DIR:-${TMPDIR:-/tmp}/toolwright-restate}"
prefix="$PWD/.restate"
server="$prefix/node_modules/.bin/restate-server"
log() { echo "restate.sh: $*" >&2; }

case "${1:-}" in
  stop)
    if [[ -f "$dir/pid" ]] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
      kill "$(cat "$dir/pid")"
    fi
    rm -f "$dir/pid"
    exit 0
    ;;
  register)
    url="${2:?register takes the URL of the worker, e.g. http://127.0.0.1:9080}"
    admin="http://127.0.0.1:$(cat "$dir/admin_port")"
    # `force`: a worker restarted with new code replaces the one registered at the URL.
    curl -sSf -X POST "$admin/deployments" -H 'content-type: application/json' \
      -d "{\"uri\": \"$url\", \"force\": true}" >&2
    echo >&2
    exit 0
    ;;
esac

if [[ ! -x "$server" ]] || ! "$server" --version 2>/dev/null | grep -q "$version"; then
  log "installing @restatedev/restate-server@$version into $prefix"
  npm install --prefix "$prefix" --no-audit --no-fund --silent \
    "@restatedev/restate-server@$version" >&2
fi

free_port() {
  local port=$((20000 + RANDOM % 30000))
  while (: </dev/tcp/127.0.0.1/"$port") 2>/dev/null; do
    port=$((20000 + RANDOM % 30000))
  done
  echo "$port"
}

mkdir -p "$dir"
if [[ -f "$dir/pid" ]] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
  log "reusing the server on 127.0.0.1:$(cat "$dir/ingress_port")"
else
  ingress=$(free_port)
  admin=$(free_port)
  fabric=$(free_port)
  # Retries a few times faster than the defaults: a test restarts a killed worker and
  # waits for Restate to come back to it.
  RESTATE_LISTEN_MODE=tcp RESTATE_BIND_IP=127.0.0.1 RESTATE_BIND_PORT="$fabric" \
    RESTATE_INGRESS__BIND_PORT="$ingress" RESTATE_ADMIN__BIND_PORT="$admin" \
    RESTATE_BASE_DIR="$dir/data" RESTATE_DISABLE_TELEMETRY=true \
    RESTATE_DEFAULT_RETRY_POLICY__INITIAL_INTERVAL=100ms \
    RESTATE_DEFAULT_RETRY_POLICY__MAX_INTERVAL=1s \
    RESTATE_DEFAULT_RETRY_POLICY__MAX_ATTEMPTS=1000 \
    nohup "$server" --no-logo >"$dir/server.log" 2>&1 &
  echo $! >"$dir/pid"
  echo "$ingress" >"$dir/ingress_port"
  echo "$admin" >"$dir/admin_port"
  # Ready when the admin API answers its health check.
  if ! curl -sf --retry 60 --retry-connrefused --retry-delay 1 \
    "http://127.0.0.1:$admin/health" >/dev/null; then
    log "the server did not come up; its log:"
    tail -n 40 "$dir/server.log" >&2
    exit 1
  fi
  log "started on 127.0.0.1:$ingress (ingress), 127.0.0.1:$admin (admin)"
fi

echo "export RESTATE_INGRESS_URL=http://127.0.0.1:$(cat "$dir/ingress_port")"
echo "export RESTATE_ADMIN_URL=http://127.0.0.1:$(cat "$dir/admin_port")"
echo "export RESTATE_DIR=$dir"
