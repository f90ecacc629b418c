//! TLS for the store's connections: a rustls configuration (ring provider) whose
//! certificate check follows the [`PostgresTls`] mode, handed to tokio-postgres.

use super::options::PostgresTls;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::sync::Arc;
use tokio_postgres_rustls::MakeRustlsConnect;
use toolwright_core::run::StoreError;

fn tls_error(error: impl std::fmt::Display) -> StoreError {
    StoreError::backend("setting up TLS for Postgres", error)
}

/// The certificates in each PEM text, as roots to trust.
pub(crate) fn roots(pems: &[Vec<u8>]) -> Result<Vec<CertificateDer<'static>>, StoreError> {
    let mut roots = Vec::new();
    for pem in pems {
        let before = roots.len();
        for cert in CertificateDer::pem_slice_iter(pem) {
            roots.push(
                cert.map_err(|e| tls_error(format!("a root certificate is not valid PEM: {e}")))?,
            );
        }
        if roots.len() == before {
            return Err(tls_error(
                "a root certificate text holds no PEM `CERTIFICATE` block",
            ));
        }
    }
    Ok(roots)
}

/// The connector for `mode`, trusting `roots` (the system's when empty).
pub(crate) fn connector(
    mode: PostgresTls,
    roots: Vec<CertificateDer<'static>>,
) -> Result<MakeRustlsConnect, StoreError> {
    // ring, not aws-lc-rs: no C build beyond ring's. Newer rustls deprecates it for
    // lacking post-quantum key exchange; classical key exchange is what ring offers.
    #[allow(deprecated)]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let algorithms = provider.signature_verification_algorithms;
    let verifier: Arc<dyn ServerCertVerifier> = match mode {
        PostgresTls::Disable | PostgresTls::Prefer | PostgresTls::Require => Arc::new(Relaxed {
            chain: None,
            algorithms,
        }),
        PostgresTls::VerifyCa => Arc::new(Relaxed {
            chain: Some(chain_verifier(&provider, roots)?),
            algorithms,
        }),
        PostgresTls::VerifyFull => chain_verifier(&provider, roots)?,
    };
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(tls_error)?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// Checks a certificate's chain and host name against `roots`, or the system's.
fn chain_verifier(
    provider: &Arc<CryptoProvider>,
    roots: Vec<CertificateDer<'static>>,
) -> Result<Arc<dyn ServerCertVerifier>, StoreError> {
    if roots.is_empty() {
        return Ok(Arc::new(
            rustls_platform_verifier::Verifier::new(provider.clone()).map_err(tls_error)?,
        ));
    }
    let mut store = RootCertStore::empty();
    for root in roots {
        store
            .add(root)
            .map_err(|e| tls_error(format!("a root certificate cannot be used: {e}")))?;
    }
    let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
        Arc::new(store),
        provider.clone(),
    )
    .build()
    .map_err(tls_error)?;
    Ok(verifier)
}

/// A check short of the full one. Without a chain check (`prefer`, `require`): any
/// certificate, as libpq does. With one (`verify-ca`): the chain is checked, the host name
/// is not; the chain check reports a name mismatch only once the chain has passed, so
/// that error alone is forgiven. Either way the handshake's signatures are checked, so
/// the session is with whoever holds the certificate's key.
#[derive(Debug)]
struct Relaxed {
    chain: Option<Arc<dyn ServerCertVerifier>>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Relaxed {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}
