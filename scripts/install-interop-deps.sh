#!/usr/bin/env bash
# Installs what the MCP interoperability tests need, idempotently (a second run does
# nothing but check):
# - .venv-interop/: the official Python MCP SDK 1.x and pytest (interop/requirements.txt);
# - .venv-interop-v2/: the SDK's 2.x line, protocol 2026-07-28 (interop/requirements-v2.txt);
# - interop/node_modules/: the official MCP conformance suite and Node.js 22 (the suite
#   needs 22; the machine's own node is left alone), from interop/package-lock.json.
# Needs python3 (with venv) and npm on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

# python_env DIR REQUIREMENTS: a venv at DIR with REQUIREMENTS installed, redone only
# when the requirements file changed.
python_env() {
  local venv=$1 requirements=$2
  if [ ! -x "$venv/bin/python" ]; then
    echo "== creating $venv"
    rm -rf "$venv"
    python3 -m venv "$venv"
  fi
  if ! cmp -s "$requirements" "$venv/.installed-requirements"; then
    echo "== pip install -r $requirements"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
    cp "$requirements" "$venv/.installed-requirements"
  fi
}
python_env .venv-interop interop/requirements.txt
python_env .venv-interop-v2 interop/requirements-v2.txt

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
