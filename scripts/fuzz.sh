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
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(RUSTC_BOOTSTRAP=1 cargo fuzz list)
for target in "${targets[@]}"; do
  # The working corpus is not committed; each run starts from the committed seeds.
  mkdir -p "corpus/$target"
  cp -n seeds/"$target"/* "corpus/$target/" 2>/dev/null || true
  echo "== fuzz $target for ${seconds}s"
  # An input that takes over 10 s is a failure too (it would block a thread that long).
  RUSTC_BOOTSTRAP=1 cargo fuzz run "${build[@]}" "$target" -s none -- -max_total_time="$seconds" -timeout=10 -print_final_stats=1 2>&1 \
    | grep -E '^(Done|stat::|==|INFO: seed)|panicked|ERROR|SUMMARY' || true
  # A crash or a slow input leaves an artifact and a non-zero exit above; make it fail
  # the script.
  if compgen -G "artifacts/$target/crash-*" >/dev/null || compgen -G "artifacts/$target/timeout-*" >/dev/null; then
    echo "fuzz $target found a crash or a slow input: fuzz/artifacts/$target/" >&2
    exit 1
  fi
done
