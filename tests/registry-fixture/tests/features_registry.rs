//! The resource and prompt registries across crates: this test binary registers items of
//! its own and sees them beside those of `agent_registry_fixture`, whose toolbox shares
//! its registered value between its tool and its resource.

use std::collections::BTreeMap;
use toolwright_core::ToolContext;
use toolwright_mcp::prompts::{PromptMessage, PromptSet};
use toolwright_mcp::resources::{ResourceBody, ResourceContent, ResourceSet, UriParams};
use toolwright_mcp::{prompt, resource};

/// This binary's settings.
#[resource(register, uri = "local://settings", tags = ["read"])]
async fn settings() -> String {
    "debug = false".to_owned()
}

/// Asks for a review.
#[prompt(register, name = "local_review")]
async fn review(
    /// The code.
    code: String,
) -> String {
    format!("Review: {code}")
}

fn text(contents: &[ResourceContent]) -> &str {
    match &contents[0].body {
        ResourceBody::Text(text) => text,
        other => panic!("not text: {other:?}"),
    }
}

fn sorted<'a>(items: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut items: Vec<&str> = items.collect();
    items.sort_unstable();
    items
}

#[tokio::test]
async fn the_sets_hold_the_registered_items_of_both_crates() {
    let (fixture_uris, fixture_prompts) = agent_registry_fixture::registered_features();
    let resources = ResourceSet::registered().unwrap();
    let mut uris: Vec<&str> = resources.resources().iter().map(|r| r.uri()).collect();
    uris.extend(resources.templates().iter().map(|t| t.template().as_str()));
    let mut expected = vec!["local://settings"];
    expected.extend(fixture_uris);
    expected.sort_unstable();
    assert_eq!(sorted(uris.into_iter()), expected);

    let prompts = PromptSet::registered().unwrap();
    let mut expected = vec!["local_review"];
    expected.extend(fixture_prompts);
    expected.sort_unstable();
    assert_eq!(sorted(prompts.iter().map(|p| p.name())), expected);

    // Items of the other crate are read and got like this crate's own.
    let ctx = ToolContext::default();
    let motd = resources.resource("fixture://motd").unwrap();
    assert_eq!(text(&motd.read(&ctx).await.unwrap()), "Ship it.");
    let notes = resources.template("fixture://notes/{day}").unwrap();
    let params: UriParams = [("day".to_owned(), "3".to_owned())].into();
    let read = notes
        .read("fixture://notes/3", &params, &ctx)
        .await
        .unwrap();
    assert_eq!(text(&read), "notes of day 3");
    // The fixture's registered toolbox made its value with its own constructor.
    let greeting = resources.resource("fixture://greeting").unwrap();
    assert_eq!(text(&greeting.read(&ctx).await.unwrap()), "Hello");
    let summary = prompts.get("fixture_summary").unwrap();
    let args = BTreeMap::from([("text".to_owned(), "the plan".to_owned())]);
    let messages = summary.get(&args, &ctx).await.unwrap();
    assert_eq!(
        messages,
        [PromptMessage::user("Summarize: the plan".to_owned())]
    );
}

#[test]
fn filters_take_either_crates_items_by_tag_and_by_module() {
    let read = ResourceSet::registered_where(|e| e.has_tag("read")).unwrap();
    let uris = sorted(read.resources().iter().map(|r| r.uri()));
    assert_eq!(uris, ["fixture://motd", "local://settings"]);
    // A toolbox's tags label its resources too.
    let people = ResourceSet::registered_where(|e| e.has_tag("people")).unwrap();
    assert_eq!(people.resources()[0].uri(), "fixture://greeting");
    assert_eq!(people.resources().len(), 1);

    let fixture = ResourceSet::registered_in_module("agent_registry_fixture::features").unwrap();
    assert_eq!(fixture.resources().len(), 1);
    assert_eq!(fixture.templates().len(), 1);
    let prompts = PromptSet::registered_where(|e| e.has_tag("read")).unwrap();
    assert_eq!(
        sorted(prompts.iter().map(|p| p.name())),
        ["fixture_summary"]
    );
    let local = PromptSet::registered_in_module("features_registry").unwrap();
    assert_eq!(sorted(local.iter().map(|p| p.name())), ["local_review"]);
}
