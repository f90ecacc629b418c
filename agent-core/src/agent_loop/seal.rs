//! Sealed, versioned run states: [`Agent::export_state`](crate::Agent::export_state)
//! writes a [`RunState`] as text a store can keep, and
//! [`Agent::import_state`](crate::Agent::import_state) reads it back, refusing any state
//! that was changed after it was written.
//!
//! A stored state decides what runs next: the arguments of a call a person is about to
//! approve, whether it was approved, what the model said. Whoever can write the row could
//! otherwise change the account to pay and mark the payment approved. With a key
//! ([`AgentBuilder::state_key`](crate::agent_loop::agent::AgentBuilder::state_key)) the state is sealed with
//! HMAC-SHA256, and an edited state, or one sealed with another key, is an error on
//! import.
//!
//! The text is one JSON object, the envelope:
//!
//! ```text
//! {"format":"agent-run-state","version":1,"seal":"hmac-sha256","mac":"<64 hex>","state":{...}}
//! ```
//!
//! The MAC covers the format name, the version and the state's bytes exactly as written,
//! so nothing is re-serialized to check it. Without a key the envelope says
//! `"seal":"unsealed"` and carries no MAC. A plain serialized `RunState` (as written before
//! envelopes existed) reads as format version 0, unsealed.
//!
//! ```
//! use toolwright_core::{Agent, llm::AssistantMessage, testing::ScriptedLlm};
//!
//! # fn main() -> toolwright_core::AgentResult<()> {
//! let llm = ScriptedLlm::new([AssistantMessage::text("Hello.")]);
//! let agent = Agent::builder(llm).state_key(b"a key of at least sixteen bytes").build()?;
//! let run = agent.start("Hi");
//! let text = agent.export_state(&run);
//! assert_eq!(agent.import_state(&text)?, run);
//!
//! // Changing the stored text (here the user's message) breaks the seal.
//! let edited = text.replace("Hi", "Pay me");
//! assert!(agent.import_state(&edited).is_err());
//! # Ok(()) }
//! ```

use crate::agent_loop::run::RunState;
use crate::model::error::{AgentError, AgentResult};
use hmac::{Hmac, KeyInit, Mac};
use serde::Deserialize;
use serde_json::value::RawValue;
use sha2::Sha256;
use std::fmt::{self, Write as _};

/// The format version [`Agent::export_state`](crate::Agent::export_state) writes.
/// [`Agent::import_state`](crate::Agent::import_state) reads it and every older one; a
/// newer one is refused.
pub const STATE_FORMAT_VERSION: u32 = 1;

/// The shortest key [`AgentBuilder::state_key`](crate::agent_loop::agent::AgentBuilder::state_key) takes, in
/// bytes.
pub const MIN_STATE_KEY_LEN: usize = 16;

const FORMAT: &str = "agent-run-state";
const SEALED: &str = "hmac-sha256";
const UNSEALED: &str = "unsealed";

/// How an agent seals the states it exports and checks the ones it imports.
#[derive(Clone, Default)]
pub(crate) struct StateSeal {
    key: Option<Hmac<Sha256>>,
    pub(crate) accept_unsealed: bool,
    /// A key that cannot be used, reported by `AgentBuilder::build`.
    invalid: Option<String>,
}

impl fmt::Debug for StateSeal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the key.
        f.debug_struct("StateSeal")
            .field("sealed", &self.key.is_some())
            .field("accept_unsealed", &self.accept_unsealed)
            .finish()
    }
}

impl StateSeal {
    /// The error `build` reports for an unusable key.
    pub(crate) fn check(&self) -> AgentResult<()> {
        match &self.invalid {
            Some(reason) => Err(AgentError::InvalidState(reason.clone())),
            None => Ok(()),
        }
    }

    fn mac(&self, version: u32, state: &str) -> Option<Hmac<Sha256>> {
        let mut mac = self.key.clone()?;
        mac.update(FORMAT.as_bytes());
        mac.update(&[0]);
        mac.update(&version.to_be_bytes());
        mac.update(&[0]);
        mac.update(state.as_bytes());
        Some(mac)
    }

    pub(crate) fn export(&self, state: &RunState) -> String {
        // A RunState holds only strings, numbers and JSON values with string keys, which
        // serde_json always serializes.
        let body = serde_json::to_string(state).expect("a RunState always serializes to JSON");
        let mut out = String::with_capacity(body.len() + 160);
        let _ = write!(
            out,
            r#"{{"format":"{FORMAT}","version":{STATE_FORMAT_VERSION},"seal":""#
        );
        match self.mac(STATE_FORMAT_VERSION, &body) {
            Some(mac) => {
                let _ = write!(out, r#"{SEALED}","mac":""#);
                for byte in mac.finalize().into_bytes() {
                    let _ = write!(out, "{byte:02x}");
                }
                out.push('"');
            }
            None => {
                let _ = write!(out, r#"{UNSEALED}""#);
            }
        }
        out.push_str(r#","state":"#);
        out.push_str(&body);
        out.push('}');
        out
    }

    pub(crate) fn import(&self, text: &str) -> AgentResult<RunState> {
        let envelope: Envelope<'_> = serde_json::from_str(text).map_err(|error| {
            refused(format!(
                "it is not a JSON object as `export_state` writes ({error}); it may be truncated or garbled"
            ))
        })?;
        let Some(format) = envelope.format else {
            return self.import_legacy(text);
        };
        if format != FORMAT {
            return Err(refused(format!(
                "its format is `{format}`, expected `{FORMAT}`"
            )));
        }
        let version = match envelope.version {
            None => return Err(refused("it has no format `version`".to_owned())),
            Some(0) => {
                return Err(refused(
                    "format version 0 has no envelope; found one".to_owned(),
                ));
            }
            Some(v) if v > u64::from(STATE_FORMAT_VERSION) => {
                return Err(refused(format!(
                    "it was written in format version {v}, newer than this build reads (up to {STATE_FORMAT_VERSION}); upgrade toolwright-core to read it"
                )));
            }
            // Checked against STATE_FORMAT_VERSION just above.
            Some(v) => u32::try_from(v).unwrap_or(STATE_FORMAT_VERSION),
        };
        let Some(body) = envelope.state else {
            return Err(refused("it has no `state`".to_owned()));
        };
        match envelope.seal.as_deref() {
            Some(SEALED) => {
                let Some(mac) = self.mac(version, body.get()) else {
                    return Err(refused(
                        "it is sealed, but this agent has no key to check the seal; give it the same `state_key` it was exported with".to_owned(),
                    ));
                };
                let tag = envelope
                    .mac
                    .as_deref()
                    .and_then(decode_hex)
                    .ok_or_else(|| {
                        refused("its `mac` is missing or is not 64 hex digits".to_owned())
                    })?;
                // Constant time: the comparison reveals nothing about where it differs.
                mac.verify_slice(&tag).map_err(|_| {
                    refused(
                        "its seal does not match: it was changed after it was exported (arguments, approvals, pending calls or history), or it was sealed with another key".to_owned(),
                    )
                })?;
            }
            Some(UNSEALED) => self.check_unsealed(version)?,
            Some(other) => {
                return Err(refused(format!(
                    "its seal is `{other}`, expected `{SEALED}` or `{UNSEALED}`"
                )));
            }
            None => return Err(refused("it has no `seal`".to_owned())),
        }
        decode_state(body.get())
    }

    /// Format version 0: a `RunState` serialized as it is, from before envelopes.
    fn import_legacy(&self, text: &str) -> AgentResult<RunState> {
        self.check_unsealed(0)?;
        decode_state(text)
    }

    fn check_unsealed(&self, version: u32) -> AgentResult<()> {
        if self.key.is_some() && !self.accept_unsealed {
            return Err(refused(format!(
                "it is unsealed (format version {version}) and this agent seals its states, so anyone could have written it; to take in states exported without a key, build the agent with `accept_unsealed_states()`"
            )));
        }
        Ok(())
    }
}

/// The envelope's fields, all optional so each missing one gets its own error.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow)]
    format: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    version: Option<u64>,
    #[serde(default, borrow)]
    seal: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    mac: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    state: Option<&'a RawValue>,
}

fn refused(reason: String) -> AgentError {
    AgentError::InvalidState(format!("the run state was refused: {reason}"))
}

fn decode_state(body: &str) -> AgentResult<RunState> {
    serde_json::from_str(body).map_err(|error| {
        refused(format!(
            "its `state` is not a run state ({error}); it may be truncated or garbled"
        ))
    })
}

fn decode_hex(text: &str) -> Option<[u8; 32]> {
    let digits = text.as_bytes();
    if digits.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        let pair = std::str::from_utf8(pair).ok()?;
        *byte = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(out)
}

impl StateSeal {
    /// Seals with `key` from now on; a key shorter than [`MIN_STATE_KEY_LEN`] is kept as
    /// the reason the agent cannot be built.
    pub(crate) fn set_key(&mut self, key: &[u8]) {
        if key.len() < MIN_STATE_KEY_LEN {
            self.invalid = Some(format!(
                "the state key has {} bytes; it needs at least {MIN_STATE_KEY_LEN} (32 random bytes are best)",
                key.len()
            ));
            return;
        }
        self.invalid = None;
        self.key = Hmac::<Sha256>::new_from_slice(key).ok();
    }
}
