//! URI templates (RFC 6570) at the levels MCP resource templates use: literal text,
//! simple expressions `{name}` and reserved expressions `{+name}`. A template is parsed
//! once, when it is registered (a malformed one is an error then, not at a read), and
//! matched against the URIs clients read: matching is the inverse of expansion, so a
//! simple variable's value never spans a reserved character such as `/`, while a
//! reserved one may, and percent-encoded octets are decoded in the values returned.
//!
//! No crate on crates.io offers matching (the inverse direction) for these levels
//! without pulling in a regex engine, so this is a small hand-written matcher; it never
//! panics, whatever the URI (see the property test).

use std::collections::BTreeMap;
use std::fmt;

/// A parsed URI template, e.g. `file:///{+path}` or `test://template/{id}/data`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Variable { name: String, reserved: bool },
}

/// Why a string is not a URI template this crate can serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplateError(String);

impl fmt::Display for UriTemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UriTemplateError {}

/// The values a URI gave a template's variables, by variable name (percent-decoded).
pub type UriParams = BTreeMap<String, String>;

impl UriTemplate {
    /// Parses `template`. Accepts literal text, `{name}` and `{+name}`; a name is
    /// letters, digits, `_` and `.`. Anything else (an unclosed brace, an empty or
    /// repeated name, another operator such as `{?q}` or `{#f}`, a list `{a,b}`, two
    /// variables with no text between them) is an error saying what was found.
    pub fn parse(template: &str) -> Result<Self, UriTemplateError> {
        let mut parts = Vec::new();
        let mut rest = template;
        let mut names: Vec<String> = Vec::new();
        while !rest.is_empty() {
            match rest.find(['{', '}']) {
                Some(at) if rest[at..].starts_with('}') => {
                    return Err(UriTemplateError(format!(
                        "URI template `{template}` has a `}}` with no `{{` before it"
                    )));
                }
                Some(open) => {
                    if open > 0 {
                        parts.push(Part::Literal(rest[..open].to_owned()));
                    }
                    let after = &rest[open + 1..];
                    let close = after.find('}').ok_or_else(|| {
                        UriTemplateError(format!(
                            "URI template `{template}` has a `{{` that is never closed"
                        ))
                    })?;
                    let expression = &after[..close];
                    let (reserved, name) = match expression.strip_prefix('+') {
                        Some(name) => (true, name),
                        None => (false, expression),
                    };
                    check_name(template, expression, name)?;
                    if names.iter().any(|n| n == name) {
                        return Err(UriTemplateError(format!(
                            "URI template `{template}` uses `{name}` twice; give each \
                             variable its own name"
                        )));
                    }
                    if matches!(parts.last(), Some(Part::Variable { .. })) {
                        return Err(UriTemplateError(format!(
                            "URI template `{template}` has two variables with nothing \
                             between them before `{{{expression}}}`; a URI could not say \
                             where one ends"
                        )));
                    }
                    names.push(name.to_owned());
                    parts.push(Part::Variable {
                        name: name.to_owned(),
                        reserved,
                    });
                    rest = &after[close + 1..];
                }
                None => {
                    parts.push(Part::Literal(rest.to_owned()));
                    rest = "";
                }
            }
        }
        Ok(Self {
            source: template.to_owned(),
            parts,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The names of its variables, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|part| match part {
            Part::Variable { name, .. } => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// The variables' values if `uri` is an expansion of this template, else `None`.
    pub fn matches(&self, uri: &str) -> Option<UriParams> {
        if uri.len() > MAX_URI_BYTES {
            return None;
        }
        let mut params = UriParams::new();
        let mut budget = MATCH_BUDGET;
        match_parts(&self.parts, uri, &mut params, &mut budget).then_some(params)
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl std::str::FromStr for UriTemplate {
    type Err = UriTemplateError;

    fn from_str(template: &str) -> Result<Self, Self::Err> {
        Self::parse(template)
    }
}

fn check_name(template: &str, expression: &str, name: &str) -> Result<(), UriTemplateError> {
    if name.is_empty() {
        return Err(UriTemplateError(format!(
            "URI template `{template}` has an empty expression `{{{expression}}}`; write \
             `{{name}}` or `{{+name}}`"
        )));
    }
    if let Some(operator) = expression
        .chars()
        .next()
        .filter(|c| "#./;?&=,!@|".contains(*c))
    {
        return Err(UriTemplateError(format!(
            "URI template `{template}`: the operator `{operator}` in `{{{expression}}}` is \
             not supported; resource templates take `{{name}}` and `{{+name}}`"
        )));
    }
    if name.contains(',') {
        return Err(UriTemplateError(format!(
            "URI template `{template}`: `{{{expression}}}` names several variables; give \
             each its own braces, with text between them"
        )));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '.'))
    {
        return Err(UriTemplateError(format!(
            "URI template `{template}`: `{bad}` cannot appear in the variable name \
             `{name}`; names are letters, digits, `_` and `.`"
        )));
    }
    Ok(())
}

/// Whether `c` may appear in the expansion of a simple (`{name}`) variable: RFC 6570
/// percent-encodes everything outside the unreserved set, so only those and `%`.
fn simple_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._~%".contains(c)
}

/// Whether `c` may appear in the expansion of a reserved (`{+name}`) variable: the
/// unreserved and reserved sets, and `%`.
fn reserved_char(c: char) -> bool {
    simple_char(c) || ":/?#[]@!$&'()*+,;=".contains(c)
}

/// The most places a match tries for variables' ends. Reserved variables separated by
/// the same text (`{+a}.{+b}.{+c}`) could otherwise make a URI the client chose cost
/// time growing as a power of its length; a URI that needs more tries does not match.
const MATCH_BUDGET: usize = 2_000;

/// The longest URI a template matches, so that a match's searches stay short whatever
/// the URI; eight times the 8 000 octets HTTP asks every implementation to accept.
const MAX_URI_BYTES: usize = 64 * 1024;

fn match_parts(parts: &[Part], uri: &str, params: &mut UriParams, budget: &mut usize) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return uri.is_empty();
    };
    match first {
        Part::Literal(text) => uri
            .strip_prefix(text.as_str())
            .is_some_and(|tail| match_parts(rest, tail, params, budget)),
        Part::Variable { name, reserved } => {
            let allowed = if *reserved {
                reserved_char
            } else {
                simple_char
            };
            // The longest run the variable could take; the value ends where the next
            // literal begins (parsing rules out two variables in a row), so try each
            // such place, shortest first.
            let run = uri.find(|c| !allowed(c)).unwrap_or(uri.len());
            let ends: Box<dyn Iterator<Item = usize>> = match rest.first() {
                None => Box::new(std::iter::once(run)),
                // Found as they are tried: the search stops at the first that fits.
                Some(Part::Literal(next)) => Box::new(
                    uri.match_indices(next.as_str())
                        .map(|(at, _)| at)
                        .take_while(move |at| *at <= run),
                ),
                Some(Part::Variable { .. }) => return false,
            };
            for end in ends {
                if *budget == 0 {
                    return false;
                }
                *budget -= 1;
                let Some(value) = percent_decode(&uri[..end]) else {
                    continue;
                };
                if match_parts(rest, &uri[end..], params, budget) {
                    params.insert(name.clone(), value);
                    return true;
                }
            }
            false
        }
    }
}

/// `text` with its `%XX` octets decoded, if they are well-formed and decode to UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            // `from_str_radix` would take a sign; an escape is exactly two hex digits.
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn params(pairs: &[(&str, &str)]) -> UriParams {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn a_simple_variable_takes_one_segment() {
        let t = UriTemplate::parse("test://template/{id}/data").unwrap();
        assert_eq!(
            t.matches("test://template/123/data"),
            Some(params(&[("id", "123")]))
        );
        assert_eq!(t.matches("test://template/1/2/data"), None);
        assert_eq!(t.matches("test://template/123/other"), None);
        assert_eq!(
            t.matches("test://template//data"),
            Some(params(&[("id", "")]))
        );
    }

    #[test]
    fn a_reserved_variable_spans_slashes() {
        let t = UriTemplate::parse("file:///{+path}").unwrap();
        assert_eq!(
            t.matches("file:///etc/hosts"),
            Some(params(&[("path", "etc/hosts")]))
        );
        let simple = UriTemplate::parse("file:///{path}").unwrap();
        assert_eq!(simple.matches("file:///etc/hosts"), None);
    }

    #[test]
    fn values_are_percent_decoded_and_bad_escapes_do_not_match() {
        let t = UriTemplate::parse("users://{name}/profile").unwrap();
        assert_eq!(
            t.matches("users://a%20b/profile"),
            Some(params(&[("name", "a b")]))
        );
        assert_eq!(t.matches("users://a%2/profile"), None);
        assert_eq!(t.matches("users://%ff/profile"), None);
    }

    #[test]
    fn several_variables_each_find_their_own() {
        let t = UriTemplate::parse("repo://{owner}/{name}/issues/{number}").unwrap();
        assert_eq!(
            t.matches("repo://rust-lang/rust/issues/42"),
            Some(params(&[
                ("owner", "rust-lang"),
                ("name", "rust"),
                ("number", "42")
            ]))
        );
        assert_eq!(
            t.variables().collect::<Vec<_>>(),
            ["owner", "name", "number"]
        );
    }

    #[test]
    fn a_literal_after_a_reserved_variable_is_found_at_its_last_fit() {
        let t = UriTemplate::parse("docs://{+path}.md").unwrap();
        assert_eq!(
            t.matches("docs://a.md/b.md"),
            Some(params(&[("path", "a.md/b")]))
        );
    }

    #[test]
    fn malformed_templates_say_what_is_wrong() {
        for (template, says) in [
            ("a://{x", "never closed"),
            ("a://x}", "no `{`"),
            ("a://{}", "empty expression"),
            ("a://{?q}", "operator `?`"),
            ("a://{a,b}", "several variables"),
            ("a://{a}{b}", "nothing between them"),
            ("a://{a}/{a}", "twice"),
            ("a://{a b}", "cannot appear"),
        ] {
            let error = UriTemplate::parse(template).unwrap_err().to_string();
            assert!(error.contains(says), "{template}: {error}");
        }
    }

    #[test]
    fn a_uri_longer_than_the_limit_does_not_match() {
        let t = UriTemplate::parse("file:///{+path}").unwrap();
        assert!(
            t.matches(&format!("file:///{}", "a".repeat(MAX_URI_BYTES)))
                .is_none()
        );
        assert!(
            t.matches(&format!("file:///{}", "a".repeat(1_000)))
                .is_some()
        );
    }

    #[test]
    fn a_uri_that_would_take_too_many_tries_does_not_match() {
        let t = UriTemplate::parse("x://{+a}.{+b}.{+c}.{+d}!").unwrap();
        let hostile = format!("x://{}?", ".".repeat(2_000));
        assert_eq!(t.matches(&hostile), None);
        // An ordinary URI of the same template still matches.
        assert_eq!(
            t.matches("x://1.2.3.4!"),
            Some(params(&[("a", "1"), ("b", "2"), ("c", "3"), ("d", "4")]))
        );
    }

    proptest! {
        #[test]
        fn matching_never_panics(uri in ".{0,40}", template in "[a-z:/{}+%.]{0,20}") {
            if let Ok(t) = UriTemplate::parse(&template) {
                let _ = t.matches(&uri);
            }
        }

        #[test]
        fn expansions_match_back(id in "[A-Za-z0-9_~.-]{0,12}", path in "[a-z0-9/]{0,20}") {
            let t = UriTemplate::parse("x://{id}/f/{+path}").unwrap();
            let got = t.matches(&format!("x://{id}/f/{path}"));
            prop_assert_eq!(got, Some(params(&[("id", &id), ("path", &path)])));
        }
    }
}
