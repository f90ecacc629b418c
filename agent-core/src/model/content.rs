//! What a tool returns: text, images, audio, structured JSON and resources.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One block of a tool's result.
///
/// Binary data (`Image`, `Audio`, blob resources) is base64, as every provider and MCP
/// expect it, so a result can be stored and sent without re-encoding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// Base64-encoded bytes.
        data: String,
        /// MIME type, e.g. `image/png`.
        mime_type: String,
    },
    /// An audio clip.
    Audio {
        /// Base64-encoded bytes.
        data: String,
        /// MIME type, e.g. `audio/wav`.
        mime_type: String,
    },
    /// A structured value (MCP's `structuredContent`). Tools that return JSON also return
    /// the same value as text, so text-only consumers lose nothing.
    Json {
        /// The value.
        value: Value,
    },
    /// A resource embedded in the result.
    Resource {
        /// The resource's URI.
        uri: String,
        /// MIME type, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Textual contents.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// Base64-encoded binary contents.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        blob: Option<String>,
    },
    /// A link to a resource the client may read.
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// A short name for it.
        name: String,
        /// What it is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// MIME type, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// An image block from base64 `data` and its MIME type.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// An audio block from base64 `data` and its MIME type.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// A structured JSON block.
    pub fn json(value: Value) -> Self {
        Self::Json { value }
    }

    /// An embedded text resource.
    pub fn text_resource(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Self::Resource {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            text: Some(text.into()),
            blob: None,
        }
    }

    /// A link to a resource.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            description: None,
            mime_type: None,
        }
    }

    /// The text, if this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text { text } => Some(text),
            _ => None,
        }
    }

    /// The structured value, if this is a JSON block.
    pub fn as_json(&self) -> Option<&Value> {
        match self {
            Self::Json { value } => Some(value),
            _ => None,
        }
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Self::text(text)
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Self::text(text)
    }
}
