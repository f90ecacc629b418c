//! Run stores for [`toolwright_core`]: where paused runs wait for a person and where every
//! step of a run is checkpointed, so runs outlive the process that started them.
//!
//! - [`SqliteStore`]: embedded SQLite, compiled in (nothing to install), in WAL mode so
//!   several processes on one machine can share the file. The default.
//! - [`PostgresStore`]: Postgres, for a fleet of processes: a pool of connections that
//!   replaces the ones a restart or failover closed, and TLS through rustls, required
//!   with `sslmode=verify-full` in the URL or [`PostgresTls::VerifyFull`].
//!
//! Both implement [`RunStore`](toolwright_core::RunStore): they keep each run as the sealed
//! text of [`Agent::export_state`](toolwright_core::Agent::export_state), and take a save only
//! over the revision before it, so two processes cannot both resume one run. Each applies
//! its own migrations when opened. [`durable`] shows how to run agents inside a
//! durable-execution engine with them.
//!
//! ```
//! use toolwright_core::{Agent, RunStore, llm::AssistantMessage, testing::ScriptedLlm};
//! use toolwright_store::SqliteStore;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = SqliteStore::open_in_memory().await?;
//! let llm = ScriptedLlm::new([AssistantMessage::text("Hello.")]);
//! let agent = Agent::builder(llm).state_key(b"a key of at least sixteen bytes").build()?;
//!
//! let mut run = agent.start("Hi");
//! store.save_run(&agent, &mut run).await?;
//! let loaded = store.load_run(&agent, &run.run_id).await?;
//! assert_eq!(loaded, Some(run));
//! # Ok(()) }
//! ```

#![forbid(unsafe_code)]

pub mod durable;
#[cfg(feature = "postgres")]
mod postgres;
// What the two backends share; with neither, there is nothing to share it.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod row;
#[cfg(feature = "sqlite")]
mod sqlite;

#[cfg(feature = "postgres")]
pub use postgres::{PostgresStore, PostgresStoreBuilder, PostgresTls};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;
