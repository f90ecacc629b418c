//! `ToolSet::call` on a tool with three parameters (a string, an integer, an optional
//! enum) returning text, against the same work written by hand (decode into an
//! equivalent struct, call directly, wrap in `Content::text`), in two forms: the common
//! `serde_json::from_value` of the `&Value` a tool receives, and the physical limit,
//! `Deserialize` from the borrowed value.

use agent_core::{AgentResult, Content, ToolContext, ToolSet, TypedTool, tool, tools};
use async_trait::async_trait;
use criterion::{Criterion, criterion_group, criterion_main};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::hint::black_box;

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ForecastArgs {
    city: String,
    days: u8,
    #[serde(default)]
    unit: Option<Unit>,
}

async fn forecast(city: String, days: u8, unit: Option<Unit>) -> String {
    let unit = match unit {
        Some(Unit::Fahrenheit) => "F",
        _ => "C",
    };
    format!("{city}: {days} days, 22°{unit}")
}

/// Forecast for a city.
#[tool(name = "forecast")]
async fn forecast_tool(city: String, days: u8, unit: Option<Unit>) -> String {
    forecast(city, days, unit).await
}

struct Forecast;

#[async_trait]
impl TypedTool for Forecast {
    type Args = ForecastArgs;
    type Output = String;

    fn name(&self) -> &'static str {
        "forecast"
    }

    fn description(&self) -> &'static str {
        "Forecast for a city."
    }

    async fn call_typed(&self, args: ForecastArgs, _ctx: &ToolContext) -> AgentResult<String> {
        Ok(forecast(args.city, args.days, args.unit).await)
    }
}

/// The hand-written tool as most are written: `serde_json::from_value` into the
/// struct. `Tool::call` receives `&Value`, so the value is cloned first.
async fn by_hand_from_value(args: &Value) -> AgentResult<Vec<Content>> {
    let args: ForecastArgs = serde_json::from_value(args.clone())
        .map_err(|e| agent_core::ToolError::invalid_arguments(e.to_string()))?;
    Ok(vec![Content::text(
        forecast(args.city, args.days, args.unit).await,
    )])
}

/// The physical limit: decoded straight from the borrowed value, no lookup, no checks,
/// no dynamic dispatch.
async fn by_hand(args: &Value) -> AgentResult<Vec<Content>> {
    let args = ForecastArgs::deserialize(args)
        .map_err(|e| agent_core::ToolError::invalid_arguments(e.to_string()))?;
    Ok(vec![Content::text(
        forecast(args.city, args.days, args.unit).await,
    )])
}

fn dispatch(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let typed = ToolSet::new().with_tool(Forecast).expect("valid tool");
    let macro_set = tools![forecast_tool];
    let ctx = ToolContext::default();
    let args = json!({"city": "Beijing", "days": 3, "unit": "celsius"});
    let mut group = c.benchmark_group("dispatch");
    group.bench_function("hand_written", |b| {
        b.to_async(&runtime).iter(|| by_hand(black_box(&args)))
    });
    group.bench_function("hand_written_from_value", |b| {
        b.to_async(&runtime)
            .iter(|| by_hand_from_value(black_box(&args)))
    });
    group.bench_function("tool_macro", |b| {
        b.to_async(&runtime)
            .iter(|| macro_set.call(black_box("forecast"), black_box(&args), &ctx))
    });
    group.bench_function("typed_tool", |b| {
        b.to_async(&runtime)
            .iter(|| typed.call(black_box("forecast"), black_box(&args), &ctx))
    });
    group.finish();
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
