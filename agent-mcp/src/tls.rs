//! HTTPS for this crate's own HTTP clients, without touching the process's defaults.

use std::sync::Arc;

/// A reqwest client speaking TLS through rustls with the `ring` provider and the
/// platform's certificate verifier, configured for this client alone: nothing is
/// installed process-wide, so the application's own choice of provider stands.
pub(crate) fn http_client_builder() -> Result<reqwest::ClientBuilder, String> {
    let config = tls_config().map_err(|e| format!("TLS could not be set up: {e}"))?;
    Ok(reqwest::Client::builder().tls_backend_preconfigured(config))
}

/// [`http_client_builder`], built.
pub(crate) fn http_client() -> Result<reqwest::Client, String> {
    http_client_builder()?
        .build()
        .map_err(|e| format!("the HTTP client could not be built: {e}"))
}

fn tls_config() -> Result<rustls::ClientConfig, rustls::Error> {
    use rustls_platform_verifier::BuilderVerifierExt;
    // ring, not aws-lc-rs: no C build beyond ring's. Newer rustls deprecates it for
    // lacking post-quantum key exchange; classical key exchange is what ring offers.
    #[allow(deprecated)]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_platform_verifier()?
        .with_no_client_auth())
}
