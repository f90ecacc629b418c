#!/usr/bin/env bash
# The project's test command: installs what the interoperability tests need (idempotent),
# then runs every test suite. Works on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo test (unit, integration, ui, doc)"
cargo test --workspace --all-targets
cargo test --workspace --doc

echo "== examples"
cargo run -q --example custom-tool >/dev/null
