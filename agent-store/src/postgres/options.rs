//! How a [`PostgresStore`](super::PostgresStore) connects: the builder, and the TLS
//! settings read from the connection URL (`sslmode`, `sslrootcert`), which tokio-postgres
//! does not all understand and the store therefore takes out before handing the rest on.

use std::time::Duration;
use toolwright_core::run::StoreError;

/// Whether and how a connection uses TLS: libpq's `sslmode` values, with libpq's meanings.
///
/// Set by `sslmode=...` in the URL or by [`PostgresStoreBuilder::tls`]; the default is
/// [`Prefer`](Self::Prefer), as with libpq.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PostgresTls {
    /// Plain TCP (or a Unix socket), never TLS.
    Disable,
    /// TLS when the server offers it, plain otherwise; the certificate is not checked.
    /// Guards against eavesdroppers only: anyone on the path can answer instead of the
    /// server, or refuse TLS and get plain text.
    Prefer,
    /// TLS or no connection; the certificate is not checked unless root certificates are
    /// given, and then it is checked as with [`VerifyCa`](Self::VerifyCa) (libpq's rule).
    Require,
    /// TLS or no connection, with a certificate signed by a trusted root (the ones given,
    /// or the system's); the host name is not checked.
    VerifyCa,
    /// TLS or no connection, with a certificate signed by a trusted root and issued for
    /// the host connected to. What a connection crossing any network should use.
    VerifyFull,
}

impl PostgresTls {
    /// The mode named by an `sslmode` value.
    pub(crate) fn parse(value: &str) -> Result<Self, StoreError> {
        Ok(match value {
            "disable" => Self::Disable,
            "prefer" => Self::Prefer,
            "require" => Self::Require,
            "verify-ca" => Self::VerifyCa,
            "verify-full" => Self::VerifyFull,
            other => {
                return Err(StoreError::backend(
                    "reading the Postgres URL",
                    format!(
                        "sslmode `{other}` is not supported; expected one of disable, prefer, \
                         require, verify-ca, verify-full"
                    ),
                ));
            }
        })
    }

    /// The mode that applies once root certificates are or are not given: libpq checks
    /// the chain under `require` when it has a root certificate.
    pub(crate) fn with_roots(self, have_roots: bool) -> Self {
        match self {
            Self::Require if have_roots => Self::VerifyCa,
            other => other,
        }
    }
}

/// Builds a [`PostgresStore`](super::PostgresStore) with settings beyond the URL's;
/// from [`PostgresStore::builder`](super::PostgresStore::builder).
#[derive(Clone, Debug)]
#[must_use = "a builder does nothing until `connect` is called"]
pub struct PostgresStoreBuilder {
    pub(crate) url: String,
    pub(crate) tls: Option<PostgresTls>,
    pub(crate) root_certificates: Vec<Vec<u8>>,
    pub(crate) max_connections: usize,
    pub(crate) connect_timeout: Duration,
    pub(crate) reconnect_timeout: Duration,
}

impl PostgresStoreBuilder {
    pub(crate) fn new(url: String) -> Self {
        Self {
            url,
            tls: None,
            root_certificates: Vec::new(),
            max_connections: 16,
            connect_timeout: Duration::from_secs(10),
            reconnect_timeout: Duration::from_secs(10),
        }
    }

    /// How the connections use TLS, in place of the URL's `sslmode`.
    /// [`PostgresTls::VerifyFull`] requires TLS with a certificate checked for the host.
    pub fn tls(mut self, mode: PostgresTls) -> Self {
        self.tls = Some(mode);
        self
    }

    /// Trusts the certificates in `pem` (one or more PEM `CERTIFICATE` blocks) as roots,
    /// in place of the system's: the CA that signed the server's certificate, or a
    /// self-signed server certificate itself. Adds to any `sslrootcert` file the URL names.
    /// Checked under `require` (which then checks as `verify-ca` does), `verify-ca` and
    /// `verify-full`; `prefer` checks no certificate.
    pub fn root_certificates(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.root_certificates.push(pem.into());
        self
    }

    /// The most connections the store keeps open at once (16 unless set; at least 1).
    /// Operations beyond it wait for a connection to be free.
    pub fn max_connections(mut self, max: usize) -> Self {
        self.max_connections = max.max(1);
        self
    }

    /// How long opening one connection may take, TLS and authentication included
    /// (10 seconds unless set).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long an operation waits for the database to accept connections again when it
    /// cannot reach it (10 seconds unless set; zero fails at once). Covers a restart or a
    /// failover; nothing has been sent while it waits, so waiting never applies a save
    /// twice.
    pub fn reconnect_timeout(mut self, timeout: Duration) -> Self {
        self.reconnect_timeout = timeout;
        self
    }
}

/// A connection URL with the TLS settings taken out: what tokio-postgres parses, and the
/// `sslmode` and `sslrootcert` it named.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TlsParams {
    pub(crate) rest: String,
    pub(crate) mode: Option<PostgresTls>,
    pub(crate) root_file: Option<String>,
}

/// Splits `sslmode` and `sslrootcert` off `url`, in either of tokio-postgres's forms:
/// `postgres://...?sslmode=...` or `host=... sslmode=...`.
pub(crate) fn take_tls_params(url: &str) -> Result<TlsParams, StoreError> {
    let mut mode = None;
    let mut root_file = None;
    let mut take = |key: &str, value: String| -> Result<bool, StoreError> {
        match key {
            "sslmode" => mode = Some(PostgresTls::parse(&value)?),
            "sslrootcert" => root_file = Some(value),
            _ => return Ok(false),
        }
        Ok(true)
    };
    let rest = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        match url.split_once('?') {
            None => url.to_owned(),
            Some((base, query)) => {
                let mut kept = Vec::new();
                for pair in query.split('&').filter(|pair| !pair.is_empty()) {
                    let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                    if !take(&percent_decode(key)?, percent_decode(value)?)? {
                        kept.push(pair);
                    }
                }
                if kept.is_empty() {
                    base.to_owned()
                } else {
                    format!("{base}?{}", kept.join("&"))
                }
            }
        }
    } else {
        let mut kept = String::new();
        for (start, end, key, value) in key_value_pairs(url)? {
            if !take(&key, value)? {
                kept.push_str(&url[start..end]);
                kept.push(' ');
            }
        }
        kept.trim_end().to_owned()
    };
    Ok(TlsParams {
        rest,
        mode,
        root_file,
    })
}

/// `%XX` escapes decoded, as in a URL's query.
fn percent_decode(text: &str) -> Result<String, StoreError> {
    let bad = || {
        StoreError::backend(
            "reading the Postgres URL",
            format!("`{text}` has a `%` not followed by two hex digits"),
        )
    };
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text
                .get(i + 1..i + 3)
                .filter(|hex| hex.bytes().all(|b| b.is_ascii_hexdigit()))
                .ok_or_else(bad)?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| bad())?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| {
        StoreError::backend(
            "reading the Postgres URL",
            format!("`{text}` does not decode to UTF-8"),
        )
    })
}

/// The `key=value` pairs of a connection string, each with the byte span it covers and
/// its value unquoted (libpq's rules: a value may be single-quoted, with `\'` and `\\`).
fn key_value_pairs(text: &str) -> Result<Vec<(usize, usize, String, String)>, StoreError> {
    let malformed = |why: &str| StoreError::backend("reading the Postgres URL", why.to_owned());
    let mut pairs = Vec::new();
    let mut chars = text.char_indices().peekable();
    loop {
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        let Some(&(start, _)) = chars.peek() else {
            return Ok(pairs);
        };
        let mut key = String::new();
        while let Some((_, c)) = chars.next_if(|(_, c)| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        if chars.next_if(|(_, c)| *c == '=').is_none() {
            return Err(malformed(&format!(
                "`{key}` is not followed by `=`; expected `key=value` pairs or a postgres:// URL"
            )));
        }
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if(|(_, c)| *c == '\'').is_some() {
            loop {
                match chars.next() {
                    Some((_, '\'')) => break,
                    Some((_, '\\')) => match chars.next() {
                        Some((_, c)) => value.push(c),
                        None => return Err(malformed("a quoted value ends in `\\`")),
                    },
                    Some((_, c)) => value.push(c),
                    None => return Err(malformed(&format!("the value of `{key}` is not closed"))),
                }
            }
        } else {
            while let Some((_, c)) = chars.next_if(|(_, c)| !c.is_whitespace()) {
                if c == '\\' {
                    if let Some((_, escaped)) = chars.next() {
                        value.push(escaped);
                    }
                } else {
                    value.push(c);
                }
            }
        }
        let end = chars.peek().map_or(text.len(), |&(at, _)| at);
        pairs.push((start, end, key, value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(url: &str) -> TlsParams {
        take_tls_params(url).unwrap()
    }

    #[test]
    fn a_url_without_tls_settings_is_left_alone() {
        let url = "postgres://me@db:5432/runs?application_name=x";
        assert_eq!(
            params(url),
            TlsParams {
                rest: url.to_owned(),
                mode: None,
                root_file: None
            }
        );
    }

    #[test]
    fn sslmode_and_sslrootcert_are_taken_out_of_a_url() {
        let got = params(
            "postgresql://me@db/runs?sslmode=verify-full&application_name=x&sslrootcert=%2Fetc%2Fca.pem",
        );
        assert_eq!(got.rest, "postgresql://me@db/runs?application_name=x");
        assert_eq!(got.mode, Some(PostgresTls::VerifyFull));
        assert_eq!(got.root_file.as_deref(), Some("/etc/ca.pem"));
        assert_eq!(
            params("postgres://db/runs?sslmode=disable").rest,
            "postgres://db/runs"
        );
    }

    #[test]
    fn sslmode_and_sslrootcert_are_taken_out_of_key_value_pairs() {
        let got = params(
            "host=db  sslmode = require user='a b\\'c' sslrootcert='/my certs/ca.pem' dbname=runs",
        );
        assert_eq!(got.rest, "host=db user='a b\\'c' dbname=runs");
        assert_eq!(got.mode, Some(PostgresTls::Require));
        assert_eq!(got.root_file.as_deref(), Some("/my certs/ca.pem"));
    }

    #[test]
    fn an_unknown_sslmode_names_the_ones_expected() {
        let error = take_tls_params("postgres://db/runs?sslmode=allow").unwrap_err();
        let message = error.to_string();
        assert!(message.contains("sslmode `allow`"), "{message}");
        assert!(message.contains("verify-full"), "{message}");
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        for url in [
            "postgres://db/runs?sslrootcert=%2",
            "postgres://db/runs?sslrootcert=%zz",
            "postgres://db/runs?sslrootcert=%+1",
            "postgres://db/runs?sslrootcert=%ff",
            "host=db sslmode",
            "host='db",
            "host='db\\",
        ] {
            assert!(take_tls_params(url).is_err(), "{url}");
        }
        // Multi-byte text around a `%` is not split inside a character.
        assert!(take_tls_params("postgres://db/runs?sslrootcert=%é").is_err());
    }

    #[test]
    fn root_certificates_make_require_check_the_chain() {
        assert_eq!(PostgresTls::Require.with_roots(true), PostgresTls::VerifyCa);
        assert_eq!(PostgresTls::Require.with_roots(false), PostgresTls::Require);
        assert_eq!(
            PostgresTls::VerifyFull.with_roots(true),
            PostgresTls::VerifyFull
        );
    }
}
