//! `PostgresStore` over TLS, against the server `scripts/postgres.sh` starts (TLS on, with
//! a certificate for 127.0.0.1 signed by a CA it makes under `AGENT_STORE_PG_DIR`): which
//! connections are encrypted, as the server sees them, and which certificates are refused.

mod support;

use std::path::PathBuf;
use support::{database_url, server_dir};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolwright_core::{
    RunStore,
    run::{RunRecord, RunStatus},
};
use toolwright_store::{PostgresStore, PostgresTls};

/// `DATABASE_URL` with `params` added to its query.
fn with_params(url: &str, params: &str) -> String {
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}{params}")
}

/// A name no other test's connections carry, to find this test's sessions by.
fn app_name(test: &str) -> String {
    format!("tls-{test}-{}", std::process::id())
}

fn ca_file(dir: &std::path::Path) -> PathBuf {
    dir.join("tls").join("ca.crt")
}

/// Whether each of the sessions named `app` is encrypted, as the server reports it.
async fn sessions_encrypted(url: &str, app: &str) -> Vec<bool> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .query(
            "SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
             WHERE a.application_name = $1",
            &[&app],
        )
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect()
}

/// Fails unless there are sessions and each is encrypted as `encrypted` says.
fn assert_all(sessions: &[bool], encrypted: bool) {
    assert!(
        !sessions.is_empty() && sessions.iter().all(|&ssl| ssl == encrypted),
        "sessions found, encrypted or not: {sessions:?}; expected all {encrypted}"
    );
}

/// Opens a store on `url` named `app`, saves through it, and reports how its sessions
/// are encrypted while it is open.
async fn encryption_of(url: &str, plain_url: &str, app: &str) -> Vec<bool> {
    let store = PostgresStore::connect(url).await.unwrap();
    store
        .save(&RunRecord {
            run_id: format!("{app}-run"),
            session_id: "tls".to_owned(),
            status: RunStatus::Ready,
            revision: 1,
            state: "{}".to_owned(),
        })
        .await
        .unwrap();
    sessions_encrypted(plain_url, app).await
}

#[tokio::test]
async fn verify_full_with_the_servers_ca_connects_over_tls() {
    let Some((url, dir)) = database_url().map(|url| (url, server_dir())) else {
        return;
    };
    let app = app_name("verify-full");
    let secure = with_params(
        &url,
        &format!(
            "sslmode=verify-full&sslrootcert={}&application_name={app}",
            ca_file(&dir).display()
        ),
    );
    let sessions = encryption_of(&secure, &url, &app).await;
    assert_all(&sessions, true);
}

#[tokio::test]
async fn the_builder_requires_tls_with_a_root_given_in_code() {
    let Some((url, dir)) = database_url().map(|url| (url, server_dir())) else {
        return;
    };
    let app = app_name("builder");
    let store = PostgresStore::builder(with_params(&url, &format!("application_name={app}")))
        .tls(PostgresTls::VerifyFull)
        .root_certificates(std::fs::read(ca_file(&dir)).unwrap())
        .connect()
        .await
        .unwrap();
    let sessions = sessions_encrypted(&url, &app).await;
    drop(store);
    assert_all(&sessions, true);
}

#[tokio::test]
async fn the_default_encrypts_when_the_server_offers_tls_and_disable_does_not() {
    let Some(url) = database_url() else { return };
    let app = app_name("prefer");
    let sessions = encryption_of(
        &with_params(&url, &format!("application_name={app}")),
        &url,
        &app,
    )
    .await;
    assert_all(&sessions, true);

    let app = app_name("disable");
    let sessions = encryption_of(
        &with_params(&url, &format!("sslmode=disable&application_name={app}")),
        &url,
        &app,
    )
    .await;
    assert_all(&sessions, false);
}

#[tokio::test]
async fn verify_full_refuses_a_certificate_no_trusted_root_signed() {
    let Some(url) = database_url() else { return };
    // The system's roots do not include the test CA: as for any self-signed server.
    let error = PostgresStore::connect(&with_params(&url, "sslmode=verify-full"))
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("connecting to Postgres"), "{error}");
    assert!(error.contains("invalid peer certificate"), "{error}");
    // ... and says what to do about it.
    assert!(error.contains("sslrootcert=PATH"), "{error}");
}

#[tokio::test]
async fn verify_full_refuses_a_certificate_for_another_host_and_verify_ca_takes_it() {
    let Some((url, dir)) = database_url().map(|url| (url, server_dir())) else {
        return;
    };
    // The certificate names 127.0.0.1; the same server reached as `localhost` is, to
    // the check, someone else holding a certificate from the same CA.
    let Some(by_name) = url
        .contains("127.0.0.1")
        .then(|| url.replacen("127.0.0.1", "localhost", 1))
    else {
        panic!("DATABASE_URL does not name 127.0.0.1, as scripts/postgres.sh writes it: {url}")
    };
    let ca = ca_file(&dir);
    let error = PostgresStore::connect(&with_params(
        &by_name,
        &format!("sslmode=verify-full&sslrootcert={}", ca.display()),
    ))
    .await
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("not valid for name \"localhost\""),
        "{error}"
    );
    assert!(error.contains("sslmode=verify-ca"), "{error}");

    let app = app_name("verify-ca");
    let sessions = encryption_of(
        &with_params(
            &by_name,
            &format!(
                "sslmode=verify-ca&sslrootcert={}&application_name={app}",
                ca.display()
            ),
        ),
        &url,
        &app,
    )
    .await;
    assert_all(&sessions, true);
}

/// A server that refuses TLS, as anyone on the path can: its port, and what it was sent
/// after refusing.
async fn refusing_server() -> (u16, tokio::task::JoinHandle<Vec<u8>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        // The SSLRequest: length 8, code 80877103.
        let mut request = [0u8; 8];
        socket.read_exact(&mut request).await.unwrap();
        assert_eq!(request, [0, 0, 0, 8, 4, 210, 22, 47]);
        socket.write_all(b"N").await.unwrap();
        let mut rest = Vec::new();
        socket.read_to_end(&mut rest).await.unwrap();
        rest
    });
    (port, server)
}

/// Each mode that requires TLS fails against a server that refuses it, with a clear
/// error, and sends it nothing: not the user name, not the password.
#[tokio::test]
async fn requiring_tls_of_a_server_that_refuses_it_fails_and_sends_nothing() {
    for mode in ["require", "verify-ca", "verify-full"] {
        let (port, server) = refusing_server().await;
        let error = PostgresStore::connect(&format!(
            "postgres://secret_user:secret_password@127.0.0.1:{port}/runs?sslmode={mode}"
        ))
        .await
        .unwrap_err()
        .to_string();
        assert!(error.contains("connecting to Postgres"), "{mode}: {error}");
        assert!(error.contains("does not support TLS"), "{mode}: {error}");
        let sent = server.await.unwrap();
        assert!(
            sent.is_empty(),
            "{mode}: sent in plain text: {:?}",
            String::from_utf8_lossy(&sent)
        );
    }
    // The builder's setting wins over the URL's.
    let (port, server) = refusing_server().await;
    let error = PostgresStore::builder(format!(
        "postgres://secret_user@127.0.0.1:{port}/runs?sslmode=disable"
    ))
    .tls(PostgresTls::VerifyFull)
    .connect()
    .await
    .unwrap_err()
    .to_string();
    assert!(error.contains("does not support TLS"), "{error}");
    assert!(server.await.unwrap().is_empty());
}

#[tokio::test]
async fn a_root_certificate_that_is_not_pem_is_an_error_before_connecting() {
    // Nothing listens on port 1: the error must come from the certificate, first.
    let error = PostgresStore::builder("postgres://nobody@127.0.0.1:1/none")
        .tls(PostgresTls::VerifyFull)
        .root_certificates("not a certificate")
        .connect()
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("no PEM `CERTIFICATE` block"), "{error}");

    let error = PostgresStore::connect(
        "postgres://nobody@127.0.0.1:1/none?sslrootcert=/nonexistent/ca.pem",
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(error.contains("/nonexistent/ca.pem"), "{error}");
}
