#!/usr/bin/env bash
# Compile cost of 200 tools: one generated crate written with our `#[tool]` + `tools![]`,
# one with rmcp's `#[tool_router]`/`#[tool]` macros, the same 200 tools (three
# parameters each: a string, an integer, an optional enum; text result).
# For each crate: a clean build of the crate itself (dependencies already built) and an
# incremental rebuild after editing one fn's body, in place and by adding a line (which
# moves every later tool); median of RUNS runs. Prints the ratios.
#
#   scripts/compile-bench.sh            # 200 tools, 3 runs
#   TOOLS=50 RUNS=1 scripts/compile-bench.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tools=${TOOLS:-200}
runs=${RUNS:-3}
out="$repo/target/compile-bench"
# Incremental rebuilds are what is measured, whatever the caller's environment says.
export CARGO_INCREMENTAL=1
mkdir -p "$out"

gen_ours() {
  local dir=$out/ours
  mkdir -p "$dir/src"
  cat > "$dir/Cargo.toml" <<TOML
[package]
name = "bench-ours"
version = "0.1.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
agent-core = { path = "$repo/agent-core" }
schemars = { version = "1", default-features = false, features = ["derive", "std"] }
serde = { version = "1", features = ["derive"] }
TOML
  {
    echo 'use agent_core::{ToolSet, tool, tools};'
    echo '#[derive(serde::Deserialize, schemars::JsonSchema)]'
    echo '#[serde(rename_all = "snake_case")]'
    echo 'pub enum Unit { Celsius, Fahrenheit }'
    for i in $(seq 0 $((tools - 1))); do
      cat <<RS
/// Forecast number $i for a city.
#[tool]
pub async fn forecast_$i(
    /// City name
    city: String,
    /// Days ahead
    days: u8,
    /// Temperature unit
    unit: Option<Unit>,
) -> String {
    let unit = if matches!(unit, Some(Unit::Fahrenheit)) { "F" } else { "C" };
    format!("{city} in {days} days: $i°{unit}")
}
RS
    done
    printf 'pub fn all() -> ToolSet {\n    tools![\n'
    for i in $(seq 0 $((tools - 1))); do printf '        forecast_%s,\n' "$i"; done
    printf '    ]\n}\n'
  } > "$dir/src/lib.rs"
}

gen_rmcp() {
  local dir=$out/rmcp
  mkdir -p "$dir/src"
  cat > "$dir/Cargo.toml" <<TOML
[package]
name = "bench-rmcp"
version = "0.1.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
rmcp = { version = "3", default-features = false, features = ["server", "macros"] }
serde = { version = "1", features = ["derive"] }
TOML
  {
    echo 'use rmcp::{handler::server::wrapper::Parameters, schemars, tool, tool_router};'
    echo '#[derive(serde::Deserialize, schemars::JsonSchema)]'
    echo '#[serde(rename_all = "snake_case")]'
    echo 'pub enum Unit { Celsius, Fahrenheit }'
    for i in $(seq 0 $((tools - 1))); do
      cat <<RS
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Forecast${i}Args {
    /// City name
    city: String,
    /// Days ahead
    days: u8,
    /// Temperature unit
    unit: Option<Unit>,
}
RS
    done
    echo '#[derive(Clone)]'
    echo 'pub struct Server;'
    echo '#[tool_router(server_handler)]'
    echo 'impl Server {'
    for i in $(seq 0 $((tools - 1))); do
      cat <<RS
    /// Forecast number $i for a city.
    #[tool]
    async fn forecast_$i(&self, Parameters(Forecast${i}Args { city, days, unit }): Parameters<Forecast${i}Args>) -> String {
        let unit = if matches!(unit, Some(Unit::Fahrenheit)) { "F" } else { "C" };
        format!("{city} in {days} days: $i°{unit}")
    }
RS
    done
    echo '}'
  } > "$dir/src/lib.rs"
}

# Median wall-clock seconds of "$@" over $runs runs, after running $prepare each time.
median_seconds() {
  local prepare=$1; shift
  local times=()
  for _ in $(seq "$runs"); do
    eval "$prepare"
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    end=$(date +%s.%N)
    times+=("$(echo "$end - $start" | bc)")
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

measure() {
  local name=$1 pkg=$2
  local dir=$out/$name
  # One fn edited in place: the literal in forecast_0's body changes each run, keeping its
  # length (five digits, from the first edit on, made before any timing), so nothing
  # after it moves (`$RANDOM` is expanded by the eval, once per run: a real edit each run).
  local edit="sed -i -E 's/ in \\{days\\} days: 0[0-9]*°/ in {days} days: 0'\$((10000 + RANDOM % 90000))'°/' src/lib.rs"
  (cd "$dir" && eval "$edit" && cargo build -q 2>&1) || { echo "build of $name failed" >&2; exit 1; }
  local clean incr shifted
  clean=$(cd "$dir" && median_seconds "cargo clean -q -p $pkg" cargo build -q)
  incr=$(cd "$dir" && median_seconds "$edit" cargo build -q)
  # One line added to forecast_0's body: everything after it moves down a line.
  local insert="sed -i -E '/ in \\{days\\} days: 0[0-9]*°/i\\    let _ = '\$RANDOM';' src/lib.rs"
  shifted=$(cd "$dir" && median_seconds "$insert" cargo build -q)
  echo "$clean $incr $shifted"
}

command -v bc >/dev/null || { echo "needs bc (apt-get install bc)" >&2; exit 1; }
gen_ours
gen_rmcp
read -r ours_clean ours_incr ours_shifted < <(measure ours bench-ours)
read -r rmcp_clean rmcp_incr rmcp_shifted < <(measure rmcp bench-rmcp)
echo "tools=$tools runs=$runs (median seconds)"
printf '%-28s %10s %10s %8s\n' "" "ours" "rmcp" "ratio"
printf '%-28s %10.2f %10.2f %8.2f\n' "clean build of the crate" "$ours_clean" "$rmcp_clean" "$(echo "$ours_clean / $rmcp_clean" | bc -l)"
printf '%-28s %10.2f %10.2f %8.2f\n' "incremental, one fn edited" "$ours_incr" "$rmcp_incr" "$(echo "$ours_incr / $rmcp_incr" | bc -l)"
printf '%-28s %10.2f %10.2f %8.2f\n' "incremental, one line added" "$ours_shifted" "$rmcp_shifted" "$(echo "$ours_shifted / $rmcp_shifted" | bc -l)"
