#!/usr/bin/env bash
# Installs what the MCP interoperability tests need, idempotently (a second run does
# nothing but check):
# - .venv-interop/: the official Python MCP SDK and pytest (interop/requirements.txt);
# - interop/node_modules/: the official MCP conformance suite and Node.js 22 (the suite
#   needs 22; the machine's own node is left alone), from interop/package-lock.json.
# Needs python3 (with venv) and npm on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv-interop
stamp="$venv/.installed-requirements"
if [ ! -x "$venv/bin/python" ]; then
  echo "== creating $venv"
  python3 -m venv "$venv"
fi
if ! cmp -s interop/requirements.txt "$stamp"; then
  echo "== pip install -r interop/requirements.txt"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r interop/requirements.txt
  cp interop/requirements.txt "$stamp"
fi

modules=interop/node_modules
if ! cmp -s interop/package-lock.json "$modules/.installed-package-lock.json" ||
   [ ! -x "$modules/.bin/conformance" ] || [ ! -x "$modules/.bin/node" ]; then
  echo "== npm ci (conformance suite, node@22)"
  (cd interop && npm ci --no-audit --no-fund --loglevel=error)
  cp interop/package-lock.json "$modules/.installed-package-lock.json"
fi

node_version=$("$modules/.bin/node" --version)
case "$node_version" in
  v22.*) ;;
  *) echo "interop/node_modules/.bin/node is $node_version, expected v22" >&2; exit 1 ;;
esac
