#!/usr/bin/env bash
# Instructions of one call through each path of the dispatch benchmark, counted by
# valgrind's callgrind: the `dispatch_calls` example run at two numbers of calls, the
# difference divided by the calls between them, so start-up and set-up cancel out.
# Unlike a timing, the count does not move with the machine's load, so two builds can be
# compared run after run.
#
#   scripts/dispatch-instructions.sh                 # every path, 1,000 and 11,000 calls
#   CALLS=2000 MORE=20000 scripts/dispatch-instructions.sh tool_macro
#   FIGURES=1 scripts/dispatch-instructions.sh       # "PATH INSTRUCTIONS" lines, no header
#   BUILD_ONLY=1 scripts/dispatch-instructions.sh    # build the example, print its path
#   DISPATCH_PACKAGES="-p agent-benches -p toolwright-llm" scripts/dispatch-instructions.sh
#     (the packages built with the example, as `cargo build -p ...`: to reuse a release
#     build made with the same set, whose features are unified)
#
# Paths: hand_written, hand_written_from_value, tool_macro, typed_tool (the dispatch
# benchmark), and noop_among_10, noop_among_10000 (a no-op's call in the scale benchmark).
set -euo pipefail
shopt -s inherit_errexit
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib/instructions.sh
source "$repo/scripts/lib/instructions.sh"
need_valgrind
calls=${CALLS:-1000}
more=${MORE:-11000}
paths=("$@")
[ ${#paths[@]} -gt 0 ] || paths=(hand_written hand_written_from_value tool_macro typed_tool)
read -r -a packages <<<"${DISPATCH_PACKAGES:--p agent-benches}"

bin=$(cd "$repo" && executable dispatch_calls build -q --release "${packages[@]}" --example dispatch_calls)
# BUILD_ONLY=1: the build alone, its path printed (scripts/bench-goals.sh times it apart).
[ "${BUILD_ONLY:-0}" = 1 ] && { echo "$bin"; exit 0; }

[ "${FIGURES:-0}" = 1 ] || printf '%-26s %s\n' path "instructions per call"
for path in "${paths[@]}"; do
  "$bin" "$path" 1 # an unknown path or a failing call stops here, with its message
  few=$(instructions "$bin" "$path" "$calls")
  many=$(instructions "$bin" "$path" "$more")
  per=$(per_call "$few" "$many" $((more - calls)))
  if [ "${FIGURES:-0}" = 1 ]; then
    printf '%s %d\n' "$path" "$per"
  else
    printf '%-26s %d\n' "$path" "$per"
  fi
done
