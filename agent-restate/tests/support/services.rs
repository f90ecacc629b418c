#![allow(dead_code)] // each test binary uses its own part of this helper.

//! What the tests on a real Restate server share: its URLs (from `RESTATE_INGRESS_URL`
//! and `RESTATE_ADMIN_URL`, which `scripts/restate.sh` prints), registering a worker, and
//! the worker as a process of its own: the test binary run again with an environment
//! variable naming its port and folder, which says what it does on stdout, one line per
//! event, and records what its tool did in files of that folder.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use toolwright_restate::restate_sdk::prelude::{Endpoint, HttpServer};

/// The Restate server's ingress and admin URLs.
pub struct Urls {
    pub ingress: String,
    pub admin: String,
}

/// The server's URLs. Missing, the test fails (a machine without the server must not
/// pass by skipping), unless `TOOLWRIGHT_SKIP_SERVICES` names `restate`.
pub fn urls() -> Option<Urls> {
    let ingress = std::env::var("RESTATE_INGRESS_URL").ok();
    let admin = std::env::var("RESTATE_ADMIN_URL").ok();
    if let (Some(ingress), Some(admin)) = (ingress, admin) {
        // reqwest is built over rustls with no provider chosen (a library must not pick
        // one for its users); a test process picks ring, as an application would.
        #[allow(deprecated)] // ring: deprecated for lacking post-quantum key exchange
        let _ = rustls::crypto::ring::default_provider().install_default();
        return Some(Urls { ingress, admin });
    }
    let skipped = std::env::var("TOOLWRIGHT_SKIP_SERVICES")
        .is_ok_and(|names| names.split(',').any(|name| name.trim() == "restate"));
    assert!(
        skipped,
        "RESTATE_INGRESS_URL and RESTATE_ADMIN_URL are not set: these tests need a Restate \
         server (eval \"$(bash scripts/restate.sh)\" starts one; scripts/test.sh does it for \
         you), or TOOLWRIGHT_SKIP_SERVICES=restate to skip them by name"
    );
    eprintln!("skipping: TOOLWRIGHT_SKIP_SERVICES names restate");
    None
}

/// Registers the worker on `port` with the Restate server whose admin API is at
/// `admin`, as the latest deployment of the services it serves.
pub async fn register(admin: &str, port: u16) {
    let response = reqwest::Client::new()
        .post(format!("{admin}/deployments"))
        .json(&serde_json::json!({"uri": format!("http://127.0.0.1:{port}"), "force": true}))
        .send()
        .await
        .expect("the admin API answers");
    let status = response.status();
    assert!(
        status.is_success(),
        "{status}: {}",
        response.text().await.unwrap_or_default()
    );
}

/// In a worker process, the port and folder the environment variable `env` gives it
/// (`PORT,FOLDER`); `None` in the test process.
pub fn worker_spec(env: &str) -> Option<(u16, Arc<PathBuf>)> {
    let spec = std::env::var(env).ok()?;
    let (port, dir) = spec.split_once(',').expect("PORT,FOLDER");
    Some((port.parse().expect("a port"), Arc::new(PathBuf::from(dir))))
}

/// In a worker process, serves the endpoint `make` builds on `port` until the process
/// is killed, saying `listening` once the port is bound.
pub fn serve_worker(port: u16, make: impl FnOnce() -> Endpoint) {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(format!("127.0.0.1:{port}"))
            .await
            .expect("the worker's port is free");
        say("listening");
        HttpServer::new(make()).serve(listener).await;
    });
}

/// A worker's line on stdout, flushed at once: the tests wait on it.
pub fn say(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

pub fn append(path: &Path, line: &str) {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("the worker's folder is writable");
    writeln!(file, "{line}").expect("the worker's folder is writable");
}

/// Does the side effect named `key` in `dir`, once however often it is asked: what a
/// tool does with its idempotency key.
pub fn effect_once(dir: &Path, key: &str) {
    let effect = dir.join("effects").join(key.replace(':', "_"));
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&effect);
}

/// A worker process: the ignored test `worker` of this binary, told its port and folder
/// by the environment variable `env` (`PORT,FOLDER`).
pub struct Worker {
    pub port: u16,
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Worker {
    /// Starts the worker and waits until it says `listening`.
    pub async fn start(env: &str, port: u16, dir: &Path) -> Self {
        let mut child = Command::new(std::env::current_exe().expect("the test binary"))
            .args([
                "--exact",
                "worker",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(env, format!("{port},{}", dir.display()))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the worker starts");
        let stdout = child.stdout.take().expect("piped");
        let stdin = child.stdin.take().expect("piped");
        let mut worker = Self {
            port,
            child,
            stdin,
            lines: BufReader::new(stdout).lines(),
        };
        worker.wait_for("listening").await;
        worker
    }

    /// Reads the worker's lines until `line`, within a bound on a hang.
    pub async fn wait_for(&mut self, line: &str) {
        let read = async {
            while let Some(next) = self.lines.next_line().await.expect("the worker's stdout") {
                if next.ends_with(line) {
                    return;
                }
            }
            panic!("the worker ended before saying `{line}`");
        };
        tokio::time::timeout(Duration::from_secs(120), read)
            .await
            .unwrap_or_else(|_| panic!("the worker never said `{line}`"));
    }

    /// Writes `line` to the worker's stdin.
    pub async fn tell(&mut self, line: &str) {
        let line = format!("{line}\n");
        self.stdin
            .write_all(line.as_bytes())
            .await
            .expect("the worker reads stdin");
        self.stdin.flush().await.expect("the worker reads stdin");
    }

    /// SIGKILL: no clean shutdown, as in a crash.
    pub async fn kill(mut self) {
        self.child.kill().await.expect("the worker is killed");
    }
}

pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

/// A new folder for a worker, with its `effects` folder.
pub fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "toolwright-restate-{name}-{}-{}",
        std::process::id(),
        free_port()
    ));
    std::fs::create_dir_all(dir.join("effects")).expect("a temp folder");
    dir
}

pub fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |text| text.lines().count())
}

/// How many side effects were done in `dir`.
pub fn effects(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("effects")).map_or(0, Iterator::count)
}
