#!/usr/bin/env bash
# Where the compile time of the 200-tool crate goes: the crates of compile-bench.sh (ours
# with `#[tool]`, and the plain `async fn` floor), profiled three ways.
#   1. The expanded code per tool: `-Zunpretty=expanded`, lines and bytes per tool,
#      ours against plain.
#   2. `cargo llvm-lines`: the LLVM IR the crate makes, by function (ours, top 25).
#   3. `-Z time-passes`: rustc's passes over 0.05 s, for a clean build of each crate and
#      for an incremental rebuild of ours after one literal is edited in place.
#   4. With CALLGRIND=1: an in-place edit, an added line and a clean build of each crate
#      run under valgrind's callgrind, in instructions executed, split by phase (macro
#      expansion and, within it, our macro; type checking; LLVM; metadata; the
#      incremental cache). Exact and repeatable where wall and CPU time are not on a
#      shared machine; takes about ten minutes.
# Needs cargo-llvm-lines (`cargo install cargo-llvm-lines`); uses RUSTC_BOOTSTRAP=1 for
# the -Z flags on a stable toolchain; CALLGRIND=1 needs valgrind.
#
#   scripts/compile-profile.sh              # 200 tools
#   TOOLS=50 scripts/compile-profile.sh
#   CALLGRIND=1 scripts/compile-profile.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib/instructions.sh
source "$repo/scripts/lib/instructions.sh"
tools=${TOOLS:-200}
export CARGO_INCREMENTAL=1
out=$(TOOLS=$tools GEN_ONLY=1 bash "$repo/scripts/compile-bench.sh")
report=$out/profile
mkdir -p "$report"

# Dependencies built first, so only the crate itself is measured.
for name in ours plain; do
  (cd "$out/$name" && cargo build -q)
done

echo "== expanded code per tool (tools=$tools)"
for name in ours plain; do
  (cd "$out/$name" && RUSTC_BOOTSTRAP=1 cargo rustc -q --lib -- -Zunpretty=expanded > "$report/$name-expanded.rs")
  lines=$(wc -l < "$report/$name-expanded.rs")
  bytes=$(wc -c < "$report/$name-expanded.rs")
  printf '%-6s %8d lines %10d bytes   %6d lines/tool %7d bytes/tool\n' \
    "$name" "$lines" "$bytes" $((lines / tools)) $((bytes / tools))
done

echo
echo "== LLVM IR by function, ours (cargo llvm-lines, top 25)"
if command -v cargo-llvm-lines >/dev/null; then
  (cd "$out/ours" && cargo llvm-lines --lib 2>/dev/null | head -27) | tee "$report/ours-llvm-lines.txt"
  (cd "$out/plain" && cargo llvm-lines --lib 2>/dev/null | head -3) > "$report/plain-llvm-lines.txt"
  echo "plain: $(sed -n 3p "$report/plain-llvm-lines.txt")"
else
  echo "cargo-llvm-lines is not installed: cargo install cargo-llvm-lines"
fi

# rustc's passes over 0.05 s of wall time, largest first.
passes() {
  grep -E '^time: +[0-9.]+;' "$1" | awk '{gsub(";","",$2); if ($2 + 0 >= 0.05) print}' \
    | sort -t: -k2 -rn -s | head -20
}

echo
for name in ours plain; do
  echo "== -Z time-passes, clean build of $name"
  (cd "$out/$name" && cargo clean -q -p "bench-$name" \
    && RUSTC_BOOTSTRAP=1 cargo rustc -q --lib -- -Ztime-passes > "$report/$name-clean-passes.txt" 2>&1)
  passes "$report/$name-clean-passes.txt"
  echo
done

echo "== -Z time-passes, ours after one literal edited in place"
(cd "$out/ours" \
  && eval "$compile_edit_in_place" \
  && RUSTC_BOOTSTRAP=1 cargo rustc -q --lib -- -Ztime-passes > "$report/ours-edit-passes.txt" 2>&1)
passes "$report/ours-edit-passes.txt"

if [ "${CALLGRIND:-0}" = 1 ]; then
  need_valgrind
  # rustc, under callgrind for the bench crate only (dependencies run as usual).
  rustc_callgrind_wrapper "$report"
  # Inclusive instructions of the functions naming each phase (the first match), from
  # the profile's annotation, written once beside it.
  phase() {
    local file=$1 label=$2 pattern=$3
    [ -s "$file.txt" ] || callgrind_annotate --inclusive=yes "$file" 2>/dev/null | grep -v "'2" > "$file.txt"
    grep -m1 -E "$pattern" "$file.txt" \
      | awk -v l="$label" '{gsub(",", "", $1); printf "  %-34s %8.2f G\n", l, $1 / 1e9}' || true
  }
  # build KIND PREPARE: the crate built under callgrind after PREPARE, phases printed.
  build() {
    local kind=$1 prepare=$2
    echo "$name, $kind"
    rm -f "$report/$name-$kind.callgrind.txt"
    file=$report/$name-$kind.callgrind
    callgrind_build "$out/$name" "$report" "$file" "$prepare"
    phase "$file" "total" "PROGRAM TOTALS"
    phase "$file" "macro expansion" "MacroExpander>::expand_crate "
    phase "$file" "  #[tool] itself" "toolwright_macros::expand::tool "
    phase "$file" "type checking" "rustc_hir_typeck::typeck_with_inspect::\\{closure#0\\} "
    phase "$file" "LLVM (codegen threads)" "spawn_named_thread<rustc_codegen_ssa::back::write"
    phase "$file" "MIR to LLVM IR" "rustc_codegen_ssa::base::codegen_crate::<"
    phase "$file" "metadata" "rustc_metadata::rmeta::encoder::encode_metadata "
    phase "$file" "incremental: verify cached results" "DepGraphData>::try_mark_previous_green"
    phase "$file" "incremental: save" "rustc_incremental::persist::save::save_dep_graph "
  }
  echo
  echo "== callgrind: one literal edited in place, one line added, a clean build (instructions)"
  for name in ours plain; do
    build edit "$compile_edit_in_place"
    build line "$compile_add_line"
    build clean "cargo clean -q -p bench-$name"
  done
fi
echo
echo "full reports in $report"
