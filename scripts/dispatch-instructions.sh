#!/usr/bin/env bash
# Instructions of one call through each path of the dispatch benchmark, counted by
# valgrind's callgrind: the `dispatch_calls` example run at two numbers of calls, the
# difference divided by the calls between them, so start-up and set-up cancel out.
# Unlike a timing, the count does not move with the machine's load, so two builds can be
# compared run after run.
#
#   scripts/dispatch-instructions.sh                 # every path, 1,000 and 11,000 calls
#   CALLS=2000 MORE=20000 scripts/dispatch-instructions.sh tool_macro
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
target_dir=${CARGO_TARGET_DIR:-$(cd "$repo" && cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')}
calls=${CALLS:-1000}
more=${MORE:-11000}
paths=("$@")
[ ${#paths[@]} -gt 0 ] || paths=(hand_written hand_written_from_value tool_macro typed_tool)

(cd "$repo" && cargo build -q --release -p agent-benches --example dispatch_calls)
bin="$target_dir/release/examples/dispatch_calls"

# instructions PATH CALLS: the instructions the whole run executed.
instructions() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" 2>&1 \
    | sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}

printf '%-26s %s\n' path "instructions per call"
for path in "${paths[@]}"; do
  "$bin" "$path" 1 # an unknown path or a failing call stops here, with its message
  few=$(instructions "$path" "$calls")
  many=$(instructions "$path" "$more")
  printf '%-26s %d\n' "$path" $(( (many - few) / (more - calls) ))
done
