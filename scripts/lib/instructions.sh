# Counting instructions under valgrind's callgrind, shared by scripts/dispatch-instructions.sh,
# scripts/compile-profile.sh and scripts/bench-goals.sh. Sourced, not run. Every function
# here stops (returns non-zero, with a message on stderr) rather than print a figure when
# what it runs fails, so `x=$(instructions ...)` under `set -e` stops the caller too.

need_valgrind() {
  command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; return 1; }
}

# target_dir_of [CARGO METADATA ARGS]: where cargo puts build outputs (CARGO_TARGET_DIR
# or the workspace's target/), e.g. `target_dir_of --manifest-path bench-mcp/Cargo.toml`.
target_dir_of() {
  local json
  json=$(cargo metadata --format-version 1 --no-deps "$@") || { echo "cargo metadata $* failed" >&2; return 1; }
  python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])' <<<"$json"
}

# built_executables CARGO ARGS: runs `cargo CARGO ARGS` (a build, a `bench --no-run`) and
# prints "NAME PATH" for each executable it built, wherever cargo put it. Cargo's
# diagnostics go to stderr; a failed build stops here.
built_executables() {
  local json
  if ! json=$(cargo "$@" --message-format=json-render-diagnostics); then
    echo "\`cargo $*\` failed" >&2
    return 1
  fi
  python3 -c '
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("reason") == "compiler-artifact" and message.get("executable"):
        print(message["target"]["name"], message["executable"])' <<<"$json"
}

# executable NAME CARGO ARGS: the path of the executable NAME that `cargo CARGO ARGS` builds.
executable() {
  local name=$1 built path
  shift
  built=$(built_executables "$@") || return 1
  path=$(awk -v name="$name" '$1 == name { print $2 }' <<<"$built" | tail -n 1)
  [ -n "$path" ] && [ -x "$path" ] || { echo "\`cargo $*\` built no executable named $name" >&2; return 1; }
  echo "$path"
}

# instructions CMD...: the instructions CMD executed, all its threads, counted by callgrind.
# When CMD fails (under valgrind, its exit status is CMD's), prints the end of its output.
instructions() {
  local log total
  log=$(mktemp)
  if ! valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" >"$log" 2>&1; then
    echo "failed under callgrind: $*" >&2
    tail -n 40 "$log" >&2
    rm -f "$log"
    return 1
  fi
  total=$(sed -n 's/.*Collected : *\([0-9][0-9]*\).*/\1/p' "$log")
  rm -f "$log"
  [ -n "$total" ] || { echo "callgrind gave no instruction count for: $*" >&2; return 1; }
  echo "$total"
}

# thread_profiles DIR CMD...: runs CMD under `callgrind --separate-threads=yes`, a
# profile per thread written to DIR (callgrind.out-01, -02, ...), for thread_instructions.
thread_profiles() {
  local dir=$1
  shift
  mkdir -p "$dir"
  if ! valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$dir/callgrind.out" "$@" >"$dir/log" 2>&1; then
    echo "failed under callgrind: $*" >&2
    tail -n 40 "$dir/log" >&2
    return 1
  fi
}

# thread_instructions DIR MARKER: "INSTRUCTIONS THREADS", the instructions of the threads
# of thread_profiles' run in DIR that ran the function MARKER, and how many threads these
# are. A thread is picked by what it ran, not by its number (which depends on the order
# threads start in).
thread_instructions() {
  local dir=$1 marker=$2 file total
  total=$(
    for file in "$dir"/callgrind.out-*; do
      # A function is named at its first mention, `fn=(id) name` or `cfn=(id) name`.
      if grep -q -E "^c?fn=\\([0-9]+\\) .*$marker" "$file"; then
        profile_total "$file" || exit 1
      fi
    done | awk '{ sum += $1; n++ } END { if (n) printf "%d %d\n", sum, n }'
  ) || return 1
  [ -n "$total" ] || { echo "no thread in the profiles in $dir ran $marker" >&2; return 1; }
  echo "$total"
}

# per_call FEW MANY CALLS: instructions of one call, from the counts of two runs CALLS
# calls apart (start-up and set-up cancel out).
per_call() {
  local few=$1 many=$2 calls=$3
  [ "$many" -gt "$few" ] || { echo "the run with more calls counted fewer instructions ($many <= $few)" >&2; return 1; }
  echo $(( (many - few) / calls ))
}

# profile_total FILE: the total instructions of a callgrind profile (all its threads).
profile_total() {
  local total
  total=$(sed -n -E 's/^(totals|summary): *([0-9]+).*/\2/p' "$1" | head -n 1)
  [ -n "$total" ] || { echo "no total in the callgrind profile $1" >&2; return 1; }
  echo "$total"
}

# The two edits of the generated crates of scripts/compile-bench.sh, each run by `eval`
# in a crate's directory: a literal of forecast_0's body changed in place (same length
# from the first edit on, so nothing after it moves; `$RANDOM` expands at each eval), and
# a line added to that body (every later tool moves down a line).
compile_edit_in_place="sed -i -E 's/ in \\{days\\} days: 0[0-9]*°/ in {days} days: 0'\$((10000 + RANDOM % 90000))'°/' src/lib.rs"
compile_add_line="sed -i -E '/ in \\{days\\} days: 0[0-9]*°/i\\    let _ = '\$RANDOM';' src/lib.rs"

# rustc_callgrind_wrapper DIR: writes DIR/callgrind-rustc.sh, a RUSTC_WRAPPER that runs
# rustc under callgrind for the generated bench crates only (dependencies run as usual),
# the profile written to $CALLGRIND_OUT.
rustc_callgrind_wrapper() {
  cat > "$1/callgrind-rustc.sh" <<'SH'
#!/usr/bin/env bash
rustc=$1; shift
case " $* " in
  *" --crate-name bench_"*) exec valgrind -q --tool=callgrind --callgrind-out-file="$CALLGRIND_OUT" "$rustc" "$@" ;;
esac
exec "$rustc" "$@"
SH
  chmod +x "$1/callgrind-rustc.sh"
}

# callgrind_build CRATE_DIR WRAPPER_DIR PROFILE PREPARE: brings the crate in CRATE_DIR up
# to date, runs PREPARE there (eval: an edit, a `cargo clean -p` of the crate), then
# builds it again with its rustc under callgrind (rustc_callgrind_wrapper in WRAPPER_DIR),
# the profile written to PROFILE. Cargo's output is shown only when a build fails.
callgrind_build() {
  local dir=$1 wrapper=$2/callgrind-rustc.sh profile=$3 prepare=$4 log
  log=$(mktemp)
  rm -f "$profile"
  if ! (cd "$dir" && cargo build -q && eval "$prepare" \
    && CALLGRIND_OUT="$profile" RUSTC_WRAPPER="$wrapper" cargo build -q) >"$log" 2>&1; then
    echo "build of $dir under callgrind failed (after: $prepare)" >&2
    cat "$log" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
  [ -s "$profile" ] || { echo "the build of $dir wrote no callgrind profile (did rustc run?)" >&2; return 1; }
}
