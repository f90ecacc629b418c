//! Tools made by a `macro_rules!` macro: the generated code is resolved at the fn's name,
//! whatever hygiene the macro gives it, and finds the macro's own items and parameters.
use toolwright_core::{ToolContext, tool, tools};

macro_rules! echo_tool {
    ($name:ident, $prefix:expr) => {
        /// Echoes its text with a prefix.
        #[tool]
        async fn $name(text: String, ctx: &ToolContext) -> String {
            let _ = ctx.call_id();
            format!("{}{}", $prefix, text)
        }
    };
}

macro_rules! fixed_tool {
    () => {
        /// Says hello.
        #[tool]
        async fn hello(#[arg(default)] times: u8) -> String {
            "hello ".repeat(usize::from(times))
        }
    };
}

echo_tool!(shout, "!");
echo_tool!(whisper, "...");
fixed_tool!();

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let set = tools![shout, whisper, hello];
    let ctx = ToolContext::default();
    let out = set
        .call("whisper", &serde_json::json!({"text": "hi"}), &ctx)
        .await
        .unwrap();
    assert_eq!(out[0].as_text(), Some("...hi"));
    let out = set
        .call("hello", &serde_json::json!({"times": 2}), &ctx)
        .await
        .unwrap();
    assert_eq!(out[0].as_text(), Some("hello hello "));
}
