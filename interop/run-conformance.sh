#!/usr/bin/env bash
# Runs the official MCP conformance suite (server mode) against interop/conformance-server.rs
# over Streamable HTTP on 127.0.0.1, scenario by scenario, and prints which pass.
# Exits non-zero if any listed scenario fails. Needs scripts/install-interop-deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

# Every tools scenario of the suite, plus the lifecycle and schema ones the issue names.
SCENARIOS=(
  server-initialize
  ping
  json-schema-2020-12
  tools-list
  tools-call-simple-text
  tools-call-image
  tools-call-audio
  tools-call-embedded-resource
  tools-call-mixed-content
  tools-call-with-logging
  tools-call-error
  tools-call-with-progress
  tools-call-sampling
  tools-call-elicitation
  # Beyond the issue's list, the other scenarios a tools-only server can pass:
  logging-set-level
  elicitation-sep1034-defaults
  elicitation-sep1330-enums
  server-sse-multiple-streams
  dns-rebinding-protection
)

cargo build --quiet -p agent-examples --example conformance-server
target_dir=${CARGO_TARGET_DIR:-$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')}
log=$(mktemp)
"$target_dir/debug/examples/conformance-server" --http 127.0.0.1:0 2>"$log" &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -f "$log"' EXIT

url=""
for _ in $(seq 100); do
  url=$(grep -o 'http://[^ ]*/mcp' "$log" || true)
  [ -n "$url" ] && break
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "the example server did not start:" >&2
  cat "$log" >&2
  exit 1
fi

# Node.js 22 for the suite only: its bin first on PATH, nothing else changed.
export PATH="$PWD/interop/node_modules/.bin:$PATH"
echo "conformance $(conformance --version) with node $(node --version) against $url"

passed=0
failed=0
failures=()
for scenario in "${SCENARIOS[@]}"; do
  out=$(timeout 120 conformance server --url "$url" --scenario "$scenario" 2>&1) && status=0 || status=$?
  # The suite exits 0 only when every check of the scenario passed.
  if [ "$status" -eq 0 ] && grep -q ", 0 failed" <<<"$out"; then
    printf '  PASS  %s\n' "$scenario"
    passed=$((passed + 1))
  else
    printf '  FAIL  %s\n' "$scenario"
    failed=$((failed + 1))
    failures+=("$scenario")
    printf '%s\n' "$out" | sed 's/^/        /'
  fi
done

echo "conformance: $passed passed, $failed failed"
if [ "$failed" -ne 0 ]; then
  echo "failing scenarios: ${failures[*]}" >&2
  exit 1
fi
