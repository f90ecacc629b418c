#!/usr/bin/env bash
# Compile cost of 200 tools: one generated crate written with our `#[tool]` + `tools![]`,
# one with rmcp's `#[tool_router]`/`#[tool]` macros, and the floor: the same 200 fns as
# plain `async fn`s with the same dependencies and no macro (three parameters each: a
# string, an integer, an optional enum; text result).
# For each crate: a clean build of the crate itself (dependencies already built) and an
# incremental rebuild after editing one fn's body, in place and by adding a line (which
# moves every later tool); median of RUNS runs. Prints the ratios.
#
#   scripts/compile-bench.sh            # 200 tools, 3 runs
#   TOOLS=50 RUNS=1 scripts/compile-bench.sh
#   SKIP_RMCP=1 TOOLS=50 RUNS=1 scripts/compile-bench.sh   # ours and plain only
#   GEN_ONLY=1 scripts/compile-bench.sh                    # write the crates, print where
#   BASELINE=/path/to/checkout scripts/compile-bench.sh    # also ours over that checkout
#   CLOCK=cpu scripts/compile-bench.sh                     # CPU seconds, not wall time
#   MACROS_OPT=1 scripts/compile-bench.sh                  # also ours with optimized macros
#   KIND=features scripts/compile-bench.sh                 # 200 resources and prompts instead
#
# KIND=features: TOOLS items, half resource templates (`notes_{i}://{id}`, a typed id)
# and half prompts (a topic and an optional tone), written with our `#[resource]`/
# `#[prompt]` + `resources![]`/`prompts![]`, with rmcp's `#[prompt_router]`/`#[prompt]`
# and a hand-written `read_resource` (rmcp has no resource macro), and as plain fns.
set -euo pipefail
# Failures inside $(...) stop the script too (bash does not apply -e there by default):
# a build that fails must never be recorded as a time.
shopt -s inherit_errexit
repo=$(cd "$(dirname "$0")/.." && pwd)
tools=${TOOLS:-200}
runs=${RUNS:-3}
target_dir=${CARGO_TARGET_DIR:-$(cd "$repo" && cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')}
out="$target_dir/compile-bench"
# Incremental rebuilds are what is measured, whatever the caller's environment says.
export CARGO_INCREMENTAL=1
mkdir -p "$out"

# Writes the manifest of a generated crate `bench-$2` in folder $1: a workspace of its
# own, with serde and the dependency lines given as $3 (and anything after them, $4).
manifest() {
  cat > "$1/Cargo.toml" <<TOML
[package]
name = "bench-$2"
version = "0.1.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
serde = { version = "1", features = ["derive"] }
$3
${4:-}
TOML
}

# A crate of the forecast fns over toolwright-core: `gen_forecasts ours` writes them with
# `#[tool]` and lists them in `tools![]`; `gen_forecasts plain` writes the floor, the same
# fns as plain `async fn`s with the same dependencies and no macro (a blank line where
# the attribute was, so both crates keep the same lines).
gen_forecasts() {
  local name=$1 dir=$out/$1 core=${2:-$repo}/agent-core
  local attr='#[tool]' doc='///'
  [ "$name" = plain ] && attr='' doc='//'
  # `ours-opt`: proc macros (ours, serde's, schemars') and their dependencies optimized,
  # the setting BENCHMARKS.md suggests for crates with many tools.
  local profile=''
  [ "$name" = ours-opt ] && profile=$'\n[profile.dev.build-override]\nopt-level = 3\n'
  mkdir -p "$dir/src"
  manifest "$dir" "$name" "toolwright-core = { path = \"$core\" }
schemars = { version = \"1\", default-features = false, features = [\"derive\", \"std\"] }" "$profile"
  {
    [ "$name" != plain ] && echo 'use toolwright_core::{ToolSet, tool, tools};'
    echo '#[derive(serde::Deserialize, schemars::JsonSchema)]'
    echo '#[serde(rename_all = "snake_case")]'
    echo 'pub enum Unit { Celsius, Fahrenheit }'
    for i in $(seq 0 $((tools - 1))); do
      cat <<RS
/// Forecast number $i for a city.
$attr
pub async fn forecast_$i(
    $doc City name
    city: String,
    $doc Days ahead
    days: u8,
    $doc Temperature unit
    unit: Option<Unit>,
) -> String {
    let unit = if matches!(unit, Some(Unit::Fahrenheit)) { "F" } else { "C" };
    format!("{city} in {days} days: $i°{unit}")
}
RS
    done
    if [ "$name" != plain ]; then
      printf 'pub fn all() -> ToolSet {\n    tools![\n'
      for i in $(seq 0 $((tools - 1))); do printf '        forecast_%s,\n' "$i"; done
      printf '    ]\n}\n'
    fi
  } > "$dir/src/lib.rs"
}

rmcp_dependency='rmcp = { version = "3", default-features = false, features = ["server", "macros"] }'

gen_rmcp() {
  local dir=$out/rmcp
  mkdir -p "$dir/src"
  manifest "$dir" rmcp "$rmcp_dependency"
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

# The KIND=features crates: `gen_features ours` writes the resources and prompts with our
# macros over toolwright-mcp, `gen_features plain` the same fns with no macro. The edited
# fn (the first resource) keeps the `forecast_0` crates' edit pattern: ` in {days} days: 0`.
gen_features() {
  local name=$1 dir=$out/$1 mcp=${2:-$repo}/agent-mcp
  local res='' tpl='' prm='' doc='///'
  if [ "$name" = plain ]; then doc='//'; else res='#[resource(template = "notes'; prm='#[prompt]'; fi
  mkdir -p "$dir/src"
  manifest "$dir" "$name" "toolwright-mcp = { path = \"$mcp\" }"
  local half=$((tools / 2))
  {
    [ "$name" != plain ] && echo 'use toolwright_mcp::{prompt, prompts, resource, resources, prompts::PromptSet, resources::ResourceSet};'
    for i in $(seq 0 $((half - 1))); do
      [ "$name" != plain ] && tpl="${res}${i}://{days}\")]"
      cat <<RS
/// Notes number $i, by day.
$tpl
pub async fn notes_$i(days: u32) -> String {
    format!("notes in {days} days: $i°")
}
RS
    done
    for i in $(seq 0 $((tools - half - 1))); do
      cat <<RS
/// Asks for a summary number $i.
$prm
pub async fn summary_$i(
    $doc What to summarize
    topic: String,
    $doc How it should sound
    tone: Option<String>,
) -> String {
    format!("Summarize {topic} ($i), {}.", tone.as_deref().unwrap_or("plainly"))
}
RS
    done
    if [ "$name" != plain ]; then
      printf 'pub fn all_resources() -> ResourceSet {\n    resources![\n'
      for i in $(seq 0 $((half - 1))); do printf '        notes_%s,\n' "$i"; done
      printf '    ]\n}\n'
      printf 'pub fn all_prompts() -> PromptSet {\n    prompts![\n'
      for i in $(seq 0 $((tools - half - 1))); do printf '        summary_%s,\n' "$i"; done
      printf '    ]\n}\n'
    fi
  } > "$dir/src/lib.rs"
}

# rmcp's counterpart of the KIND=features crate: the prompts through `#[prompt_router]`,
# each with its arguments struct; the resources matched by hand in `read_resource`.
gen_rmcp_features() {
  local dir=$out/rmcp
  local half=$((tools / 2))
  mkdir -p "$dir/src"
  manifest "$dir" rmcp "$rmcp_dependency"
  {
    cat <<'RS'
use rmcp::handler::server::router::prompt::PromptRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{ErrorData, PromptMessage, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ResourceContents, Role, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, prompt_handler, prompt_router, schemars};
RS
    for i in $(seq 0 $((half - 1))); do
      cat <<RS
/// Notes number $i, by day.
pub async fn notes_$i(days: u32) -> String {
    format!("notes in {days} days: $i°")
}
RS
    done
    for i in $(seq 0 $((tools - half - 1))); do
      cat <<RS
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Summary${i}Args {
    /// What to summarize
    pub topic: String,
    /// How it should sound
    pub tone: Option<String>,
}
RS
    done
    echo '#[derive(Clone)]'
    echo 'pub struct Server { prompt_router: PromptRouter<Self> }'
    echo '#[prompt_router]'
    echo 'impl Server {'
    for i in $(seq 0 $((tools - half - 1))); do
      cat <<RS
    /// Asks for a summary number $i.
    #[rmcp::prompt]
    async fn summary_$i(&self, Parameters(Summary${i}Args { topic, tone }): Parameters<Summary${i}Args>) -> Vec<PromptMessage> {
        vec![PromptMessage::new_text(Role::User, format!("Summarize {topic} ($i), {}.", tone.as_deref().unwrap_or("plainly")))]
    }
RS
    done
    echo '}'
    cat <<'RS'
#[prompt_handler(router = self.prompt_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_resources().enable_prompts().build())
    }
    async fn read_resource(&self, request: ReadResourceRequestParams, _context: RequestContext<RoleServer>) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let not_found = || ErrorData::resource_not_found(format!("no resource at `{uri}`"), None);
        let (scheme, rest) = uri.split_once("://").ok_or_else(not_found)?;
        let days: u32 = rest.parse().map_err(|_| not_found())?;
        let text = match scheme {
RS
    for i in $(seq 0 $((half - 1))); do
      printf '            "notes%s" => notes_%s(days).await,\n' "$i" "$i"
    done
    cat <<'RS'
            _ => return Err(not_found()),
        };
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, uri.clone())]).into())
    }
}
RS
  } > "$dir/src/lib.rs"
}

# Runs "$@" quietly; when it fails, prints its output and stops the script, so a failed
# build is an error, never a time.
run_or_fail() {
  local log
  log=$(mktemp)
  if ! "$@" >"$log" 2>&1; then
    echo "compile-bench.sh: \`$*\` failed in $PWD:" >&2
    cat "$log" >&2
    rm -f "$log"
    exit 1
  fi
  rm -f "$log"
}

# Median wall-clock seconds of "$@" over $runs runs, after running $prepare each time.
# CLOCK=cpu: CPU seconds (user + system, the build's processes included) instead of wall
# time; steadier on a machine whose other users come and go.
median_seconds() {
  local prepare=$1; shift
  local times=()
  for _ in $(seq "$runs"); do
    eval "$prepare"
    if [ "${CLOCK:-wall}" = cpu ]; then
      local TIMEFORMAT='%U %S' cpu
      cpu=$( { time run_or_fail "$@"; } 2>&1 )
      times+=("$(echo "$cpu" | awk '{print $1 + $2}')")
    else
      local start end
      start=$(date +%s.%N)
      run_or_fail "$@"
      end=$(date +%s.%N)
      times+=("$(echo "$end - $start" | bc)")
    fi
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
  (cd "$dir" && eval "$edit" && cargo build -q >&2 2>&1) || { echo "build of $name failed" >&2; exit 1; }
  local clean incr shifted
  clean=$(cd "$dir" && median_seconds "cargo clean -q -p $pkg" cargo build -q)
  incr=$(cd "$dir" && median_seconds "$edit" cargo build -q)
  # One line added to forecast_0's body: everything after it moves down a line.
  local insert="sed -i -E '/ in \\{days\\} days: 0[0-9]*°/i\\    let _ = '\$RANDOM';' src/lib.rs"
  shifted=$(cd "$dir" && median_seconds "$insert" cargo build -q)
  echo "$clean $incr $shifted"
}

command -v bc >/dev/null || { echo "needs bc (apt-get install bc)" >&2; exit 1; }
if [ "${KIND:-tools}" = features ]; then
  # Their own folder: GEN_ONLY's callers find the tools crates where they always were.
  out="$out/features"
  gen_features ours
  gen_features plain
  [ -n "${BASELINE:-}" ] && gen_features base "$BASELINE"
  [ "${MACROS_OPT:-0}" = 1 ] && { echo "MACROS_OPT is for the tools crates" >&2; exit 1; }
  gen_rmcp_features
else
  gen_forecasts ours
  gen_forecasts plain
  # BASELINE=/path/to/another/checkout: the same `#[tool]` crate over that checkout's
  # toolwright-core too, measured in the same run (before/after a change, side by side).
  [ -n "${BASELINE:-}" ] && gen_forecasts base "$BASELINE"
  [ "${MACROS_OPT:-0}" = 1 ] && gen_forecasts ours-opt
  gen_rmcp
fi
# GEN_ONLY=1: write the crates and stop (scripts/compile-profile.sh profiles them).
[ "${GEN_ONLY:-0}" = 1 ] && { echo "$out"; exit 0; }
figures=$(measure ours bench-ours)
read -r ours_clean ours_incr ours_shifted <<<"$figures"
figures=$(measure plain bench-plain)
read -r plain_clean plain_incr plain_shifted <<<"$figures"
if [ -n "${BASELINE:-}" ]; then
  figures=$(measure base bench-base)
  read -r base_clean base_incr base_shifted <<<"$figures"
fi
if [ "${MACROS_OPT:-0}" = 1 ]; then
  figures=$(measure ours-opt bench-ours-opt)
  read -r opt_clean opt_incr opt_shifted <<<"$figures"
fi
if [ "${SKIP_RMCP:-0}" = 1 ]; then
  rmcp_clean=nan rmcp_incr=nan rmcp_shifted=nan
else
  figures=$(measure rmcp bench-rmcp)
  read -r rmcp_clean rmcp_incr rmcp_shifted <<<"$figures"
fi
ratio() { if [ "$2" = nan ]; then echo nan; else echo "$1 / $2" | bc -l; fi; }
echo "kind=${KIND:-tools} items=$tools runs=$runs (median ${CLOCK:-wall} seconds)"
printf '%-28s %8s %8s %8s %12s %12s\n' "" "ours" "plain" "rmcp" "ours/plain" "ours/rmcp"
row() {
  printf '%-28s %8.2f %8.2f %8.2f %12.2f %12.2f\n' "$1" "$2" "$3" "$4" "$(ratio "$2" "$3")" "$(ratio "$2" "$4")"
}
row "clean build of the crate" "$ours_clean" "$plain_clean" "$rmcp_clean"
row "incremental, one fn edited" "$ours_incr" "$plain_incr" "$rmcp_incr"
row "incremental, one line added" "$ours_shifted" "$plain_shifted" "$rmcp_shifted"
if [ "${MACROS_OPT:-0}" = 1 ]; then
  row "optimized macros: clean" "$opt_clean" "$plain_clean" "$rmcp_clean"
  row "optimized macros: edited" "$opt_incr" "$plain_incr" "$rmcp_incr"
  row "optimized macros: line" "$opt_shifted" "$plain_shifted" "$rmcp_shifted"
fi
if [ -n "${BASELINE:-}" ]; then
  echo
  echo "baseline: the same #[tool] crate over $BASELINE"
  printf '%-28s %8s %8s %12s %12s\n' "" "ours" "baseline" "ours/base" "base/plain"
  for what in clean incr shifted; do
    o=ours_$what b=base_$what p=plain_$what
    printf '%-28s %8.2f %8.2f %12.2f %12.2f\n' "$what" "${!o}" "${!b}" "$(ratio "${!o}" "${!b}")" "$(ratio "${!b}" "${!p}")"
  done
fi
