//! Clients configured from environment variables.

use crate::client::{Builder, Client};
use crate::provider::Provider;
use std::fmt;
use toolwright_core::AgentError;

/// Why a client could not be made from the environment.
#[derive(Debug)]
#[non_exhaustive]
pub enum EnvError {
    /// None of the variables that select this provider is set (or each is blank), so
    /// the environment does not ask for it: an application can try another provider.
    NotConfigured {
        /// The variables, any one of which would have selected the provider.
        expected: &'static [&'static str],
    },
    /// The environment asks for the provider, but the client cannot be built as it
    /// says (an unusable base URL...).
    Invalid(AgentError),
    /// A model name ([`model`](crate::model)) that names no provider this crate has,
    /// or names a provider and then no model.
    UnknownProvider {
        /// The name given.
        given: String,
        /// The providers a name may start with.
        known: &'static [&'static str],
    },
}

impl fmt::Display for EnvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotConfigured { expected } => {
                write!(f, "no model is configured: set {}", expected.join(" or "))
            }
            Self::Invalid(error) => write!(f, "the model configured by the environment: {error}"),
            Self::UnknownProvider { given, known } => write!(
                f,
                "`{given}` names no model: expected `provider:model` or `provider`, the \
                 provider one of {}",
                known.join(", ")
            ),
        }
    }
}

impl std::error::Error for EnvError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::NotConfigured { .. } | Self::UnknownProvider { .. } => None,
            Self::Invalid(error) => Some(error),
        }
    }
}

impl From<EnvError> for AgentError {
    fn from(error: EnvError) -> Self {
        match error {
            EnvError::Invalid(error) => error,
            other => AgentError::InvalidState(other.to_string()),
        }
    }
}

impl EnvError {
    /// Whether the environment simply does not ask for this provider.
    pub fn is_not_configured(&self) -> bool {
        matches!(self, Self::NotConfigured { .. })
    }
}

/// A non-blank environment variable.
pub(crate) fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// What one provider reads from the environment.
pub(crate) struct EnvVars {
    /// The API key's variables, the first set winning.
    pub keys: &'static [&'static str],
    /// The base URL's variable: set alone, it selects the provider too (a local or
    /// compatible server that needs no key).
    pub base_url: &'static str,
    /// The model's variable.
    pub model: &'static str,
    /// Every variable that selects the provider, for the error when none is set.
    pub selecting: &'static [&'static str],
}

/// A client from the environment: the key from the first of `vars.keys` set, the base
/// URL from its variable, the model `model` or else from its variable (else the
/// default), or [`EnvError::NotConfigured`] when neither a key nor a base URL is set.
pub(crate) fn from_env<P: Provider>(
    vars: &EnvVars,
    model: Option<&str>,
    default_model: &str,
    builder: impl FnOnce(String) -> Builder<P>,
) -> Result<Client<P>, EnvError> {
    let api_key = vars.keys.iter().find_map(|name| env_var(name));
    let base_url = env_var(vars.base_url);
    if api_key.is_none() && base_url.is_none() {
        return Err(EnvError::NotConfigured {
            expected: vars.selecting,
        });
    }
    let model = match model {
        Some(model) => model.to_owned(),
        None => env_var(vars.model).unwrap_or_else(|| default_model.to_owned()),
    };
    let mut builder = builder(model);
    if let Some(url) = base_url {
        builder = builder.base_url(url);
    }
    if let Some(key) = api_key {
        builder = builder.api_key(key);
    }
    builder.build().map_err(EnvError::Invalid)
}
