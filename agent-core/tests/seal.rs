//! Sealed run states: what `export_state` writes and what `import_state` refuses.

mod support;

use proptest::prelude::*;
use serde_json::{Value, json};
use support::{KEY, paused, pay, payment_agent};
use toolwright_core::{
    Agent, AgentError, RunState, run::STATE_FORMAT_VERSION, testing::ScriptedLlm, tools,
};

fn agent(key: Option<&[u8]>) -> Agent {
    payment_agent(key)
}

fn refusal(result: Result<RunState, AgentError>) -> String {
    match result {
        Err(AgentError::InvalidState(message)) => message,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn a_sealed_state_round_trips_and_names_its_version_and_seal() {
    let agent = agent(Some(KEY));
    let run = paused(&agent).await;
    let text = agent.export_state(&run);
    let envelope: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(envelope["format"], "agent-run-state");
    assert_eq!(envelope["version"], STATE_FORMAT_VERSION);
    assert_eq!(envelope["seal"], "hmac-sha256");
    assert_eq!(envelope["mac"].as_str().unwrap().len(), 64);
    assert_eq!(agent.import_state(&text).unwrap(), run);
}

#[tokio::test]
async fn without_a_key_the_state_is_versioned_and_says_it_is_unsealed() {
    let agent = agent(None);
    let run = paused(&agent).await;
    let text = agent.export_state(&run);
    let envelope: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(envelope["version"], STATE_FORMAT_VERSION);
    assert_eq!(envelope["seal"], "unsealed");
    assert!(envelope.get("mac").is_none());
    assert_eq!(agent.import_state(&text).unwrap(), run);
}

#[tokio::test]
async fn edited_arguments_approvals_pending_calls_or_history_are_refused() {
    let agent = agent(Some(KEY));
    let text = agent.export_state(&paused(&agent).await);
    let edits = [
        ("arguments", "\"ACME-1\"", "\"EVIL-9\""),
        ("approval", "\"awaiting_approval\"", "\"approved\""),
        (
            "history",
            "Pay ACME their invoice",
            "Pay EVIL their invoice",
        ),
        ("pending call", "\"id\":\"c1\"", "\"id\":\"c2\""),
        ("status", "\"waiting_for_human\"", "\"ready\""),
    ];
    for (what, from, to) in edits {
        assert!(text.contains(from), "{what}: `{from}` not in {text}");
        let edited = text.replacen(from, to, 1);
        let message = refusal(agent.import_state(&edited));
        assert!(message.contains("seal does not match"), "{what}: {message}");
    }
}

#[tokio::test]
async fn an_edited_state_that_was_also_approved_never_runs_the_call() {
    let agent = agent(Some(KEY));
    let text = agent.export_state(&paused(&agent).await);
    // The attacker's version: approved, paying another account.
    let forged = text.replacen("\"ACME-1\"", "\"EVIL-9\"", 1).replacen(
        "\"awaiting_approval\"",
        "\"approved\"",
        1,
    );
    let message = refusal(agent.import_state(&forged));
    assert!(message.contains("its seal does not match"), "{message}");
}

#[tokio::test]
async fn a_state_sealed_with_another_key_or_without_one_is_refused() {
    let ours = agent(Some(KEY));
    let theirs = agent(Some(b"another key, also thirty-two b."));
    let keyless = agent(None);
    let run = paused(&ours).await;

    let message = refusal(ours.import_state(&theirs.export_state(&run)));
    assert!(message.contains("its seal does not match"), "{message}");
    assert!(message.contains("another key"), "{message}");

    let message = refusal(ours.import_state(&keyless.export_state(&run)));
    assert!(message.contains("it is unsealed"), "{message}");
    assert!(message.contains("accept_unsealed_states"), "{message}");

    let message = refusal(keyless.import_state(&ours.export_state(&run)));
    assert!(message.contains("this agent has no key"), "{message}");

    // Dropping the MAC and calling the state unsealed is still unsealed.
    let sealed: Value = serde_json::from_str(&ours.export_state(&run)).unwrap();
    let mut stripped = sealed.clone();
    stripped["seal"] = json!("unsealed");
    stripped.as_object_mut().unwrap().remove("mac");
    let message = refusal(ours.import_state(&stripped.to_string()));
    assert!(message.contains("it is unsealed"), "{message}");
    assert!(message.contains("accept_unsealed_states"), "{message}");
}

#[tokio::test]
async fn unsealed_states_are_taken_in_only_when_the_application_opts_in() {
    let keyless = agent(None);
    let run = paused(&keyless).await;
    let migrating = Agent::builder(ScriptedLlm::new([]))
        .tools(tools![pay])
        .state_key(KEY)
        .accept_unsealed_states()
        .build()
        .unwrap();
    let imported = migrating.import_state(&keyless.export_state(&run)).unwrap();
    assert_eq!(imported, run);
    // Exported again, it is sealed.
    let resealed: Value = serde_json::from_str(&migrating.export_state(&imported)).unwrap();
    assert_eq!(resealed["seal"], "hmac-sha256");
}

#[tokio::test]
async fn format_version_0_a_plain_run_state_is_migrated_as_unsealed() {
    let keyless = agent(None);
    let run = paused(&keyless).await;
    let plain = serde_json::to_string(&run).unwrap();
    assert_eq!(keyless.import_state(&plain).unwrap(), run);
    let message = refusal(agent(Some(KEY)).import_state(&plain));
    assert!(message.contains("format version 0"), "{message}");
}

#[tokio::test]
async fn a_newer_or_missing_format_version_is_refused_clearly() {
    let agent = agent(Some(KEY));
    let text = agent.export_state(&paused(&agent).await);
    let newer = text.replacen(
        &format!("\"version\":{STATE_FORMAT_VERSION}"),
        &format!("\"version\":{}", STATE_FORMAT_VERSION + 1),
        1,
    );
    let message = refusal(agent.import_state(&newer));
    assert!(message.contains("newer than this build reads"), "{message}");

    let mut envelope: Value = serde_json::from_str(&text).unwrap();
    envelope.as_object_mut().unwrap().remove("version");
    let message = refusal(agent.import_state(&envelope.to_string()));
    assert!(message.contains("no format `version`"), "{message}");
}

#[tokio::test]
async fn every_truncation_is_an_error() {
    let agent = agent(Some(KEY));
    let text = agent.export_state(&paused(&agent).await);
    for end in (0..text.len()).filter(|&end| text.is_char_boundary(end)) {
        let message = match agent.import_state(&text[..end]) {
            Err(AgentError::InvalidState(message)) => message,
            other => panic!("a state cut at byte {end}: expected a refusal, got {other:?}"),
        };
        // Any cut of the envelope leaves text that is not one whole JSON object.
        assert!(
            message.contains("it is not a JSON object as `export_state` writes")
                && message.contains("truncated or garbled"),
            "a state cut at byte {end}: {message}"
        );
    }
}

#[test]
fn a_short_key_is_a_build_error() {
    let error = Agent::builder(ScriptedLlm::new([]))
        .state_key(b"short")
        .build()
        .unwrap_err();
    let AgentError::InvalidState(message) = &error else {
        panic!("expected an invalid state key error, got {error:?}");
    };
    assert!(message.contains("the state key has 5 bytes"), "{message}");
    assert!(message.contains("at least 16"), "{message}");
}

#[derive(Debug, Clone)]
enum Edit {
    Replace(usize, char),
    Insert(usize, char),
    Delete(usize),
    Truncate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    let ch = prop_oneof![
        any::<char>(),
        prop::sample::select(vec!['"', '{', '}', '[', ']', ',', ':', '\\', '0', 'a', ' ']),
    ];
    prop_oneof![
        (any::<usize>(), ch.clone()).prop_map(|(at, c)| Edit::Replace(at, c)),
        (any::<usize>(), ch).prop_map(|(at, c)| Edit::Insert(at, c)),
        any::<usize>().prop_map(Edit::Delete),
        any::<usize>().prop_map(Edit::Truncate),
    ]
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for edit in edits {
        let len = chars.len().max(1);
        match *edit {
            Edit::Replace(at, c) if !chars.is_empty() => chars[at % len] = c,
            Edit::Insert(at, c) => chars.insert(at % (chars.len() + 1), c),
            Edit::Delete(at) if !chars.is_empty() => {
                chars.remove(at % len);
            }
            Edit::Truncate(at) => chars.truncate(at % len),
            _ => {}
        }
    }
    chars.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    // Whatever the edits, import answers without panicking, and whatever it accepts is
    // the state that was sealed (an edit outside the state, such as a space between
    // envelope fields, changes nothing that matters).
    #[test]
    fn random_edits_never_panic_and_never_change_an_accepted_state(
        edits in prop::collection::vec(edit(), 1..4),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let agent = agent(Some(KEY));
        let run = runtime.block_on(paused(&agent));
        let text = agent.export_state(&run);
        let edited = apply(&text, &edits);
        if let Ok(imported) = agent.import_state(&edited) {
            prop_assert_eq!(imported, run);
        }
    }
}
