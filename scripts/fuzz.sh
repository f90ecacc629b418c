#!/usr/bin/env bash
# Runs the fuzz targets with cargo-fuzz on the stable toolchain (RUSTC_BOOTSTRAP lets it
# pass libFuzzer's flags; no sanitizer, since the crates forbid unsafe code).
#   scripts/fuzz.sh [SECONDS] [TARGET...]     default: 600 seconds, every target
#   FUZZ_QUICK_BUILD=1 scripts/fuzz.sh 30     # for short runs: built in a third less time
# FUZZ_QUICK_BUILD builds at opt-level 1 without debuginfo rather than in release: the
# dispatch target runs as fast, mcp_messages at half the rate, and the build takes
# about 190 s rather than 300 s on two cores, which is most of a 30-second run.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds=${1:-600}
shift || true
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
build=()
if [ "${FUZZ_QUICK_BUILD:-0}" = 1 ]; then
  build=(--dev)
  export CARGO_PROFILE_DEV_OPT_LEVEL=1 CARGO_PROFILE_DEV_DEBUG=0
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  # Not read through a process substitution: its exit status would be lost.
  listed=$(RUSTC_BOOTSTRAP=1 cargo fuzz list)
  mapfile -t targets <<<"$listed"
fi
if [ ${#targets[@]} -eq 0 ] || [ -z "${targets[0]}" ]; then
  echo "fuzz.sh: no fuzz targets found: nothing would be fuzzed" >&2
  exit 1
fi
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
for target in "${targets[@]}"; do
  # A target that does not build fails here, with the compiler's errors in full.
  RUSTC_BOOTSTRAP=1 cargo fuzz build "${build[@]}" "$target" -s none
  # The working corpus is not committed; each run starts from the committed seeds.
  mkdir -p "corpus/$target"
  cp -n seeds/"$target"/* "corpus/$target/" 2>/dev/null || true
  # Artifacts of earlier runs are not this run's findings.
  rm -rf "artifacts/$target"
  echo "== fuzz $target for ${seconds}s"
  # An input that takes over 10 s is a failure too (it would block a thread that long).
  status=0
  RUSTC_BOOTSTRAP=1 cargo fuzz run "${build[@]}" "$target" -s none -- -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
    >"$logs/$target.log" 2>&1 || status=$?
  # The run's summary; the whole log when it failed.
  if [ "$status" -ne 0 ]; then
    cat "$logs/$target.log"
  else
    grep -E '^(Done|stat::|INFO: seed)' "$logs/$target.log" || true
  fi
  # Every kind of finding (crash, timeout, oom, leak, slow unit...) leaves an artifact.
  findings=$(find "artifacts/$target" -type f 2>/dev/null || true)
  if [ "$status" -ne 0 ] || [ -n "$findings" ]; then
    echo "fuzz $target failed (exit $status)${findings:+; findings: $findings}" >&2
    exit 1
  fi
done
