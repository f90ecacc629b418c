#!/usr/bin/env bash
# The project's test command: installs what the interoperability tests need (idempotent),
# then runs every test suite. Works on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== interop dependencies (Python MCP SDK, MCP conformance suite, node 22)"
bash scripts/install-interop-deps.sh

echo "== Postgres for the toolwright-store tests (DATABASE_URL)"
pg_env="$(bash scripts/postgres.sh)"
eval "$pg_env"

echo "== Restate for the toolwright-restate tests (RESTATE_INGRESS_URL, RESTATE_ADMIN_URL)"
restate_env="$(bash scripts/restate.sh)"
eval "$restate_env"

echo "== cargo test (unit, integration, ui, doc)"
cargo test --workspace --all-targets
# Tests behind a feature the workspace build does not turn on: MCP tasks in Restate.
cargo test -p toolwright-restate --features mcp --test tasks --test task_work
cargo test --workspace --doc

echo "== examples"
cargo run -q --example custom-tool >/dev/null
cargo run -q --example macro-tour >/dev/null
for dialect in openai-strict openai anthropic anthropic-strict gemini mcp; do
  cargo run -q --example schemas -- --dialect "$dialect" >/dev/null
done
# The scripted model, whatever keys the developer has in their environment.
env -u OPENAI_BASE_URL -u OPENAI_API_KEY -u ANTHROPIC_API_KEY \
  cargo run -q --example quickstart >/dev/null

echo "== MCP: the official Python SDK as client of interop/conformance-server.rs"
cargo build -q -p agent-examples --example conformance-server --example mcp-server
.venv-interop/bin/python -m pytest -q interop/test_python_client.py
# ... and over HTTP with a bearer token, against examples/mcp-server.rs --auth-token.
.venv-interop/bin/python -m pytest -q interop/test_python_http_auth.py
.venv-interop-v2/bin/python -m pytest -q interop/test_python_client_v2.py

echo "== MCP: the official conformance suite against interop/conformance-server.rs (HTTP)"
bash interop/run-conformance.sh
