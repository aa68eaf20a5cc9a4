//! The HTTP server: [`MockServer`], the handle tests use to start it, read its log, move its
//! clock and stop it, and [`MockConfig`], how to start it. Its routes are `crate::messages`
//! (`POST /v1/messages`, `POST /v1/messages/count_tokens`, 404 for any other path) and
//! `chat::handler` (`POST /v1/chat/completions`, the same scenario over OpenAI's wire).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::post;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::chat::ChatDialect;
use crate::chat::handler::{self, ChatExchange};
use crate::clock::MockClock;
use crate::error::MockError;
use crate::log::{RequestLog, RequestRecord, spawn_jsonl_writer};
use crate::messages::{self, MessagesExchange};
use crate::route::{Shared, handle};
use crate::scenario::Scenario;

pub use crate::route::MAX_BODY_BYTES;

/// How to start a [`MockServer`].
#[derive(Debug, Clone)]
pub struct MockConfig {
    pub scenario: Scenario,
    /// The clock cache TTLs are measured on; keep a clone (or use `server.clock()`) to advance it.
    pub clock: MockClock,
    /// 0 for any free port.
    pub port: u16,
    /// When set, every request is appended to `DIR/requests.jsonl`.
    pub log_dir: Option<PathBuf>,
    /// How many records the in-memory log keeps (the oldest are dropped first).
    pub log_limit: usize,
    /// Whose habits `/v1/chat/completions` follows.
    pub chat_dialect: ChatDialect,
}

impl Default for MockConfig {
    fn default() -> Self {
        Self::new(Scenario::new())
    }
}

impl MockConfig {
    pub fn new(scenario: Scenario) -> Self {
        Self {
            scenario,
            clock: MockClock::system(),
            port: 0,
            log_dir: None,
            log_limit: 10_000,
            chat_dialect: ChatDialect::default(),
        }
    }

    pub fn chat_dialect(mut self, dialect: ChatDialect) -> Self {
        self.chat_dialect = dialect;
        self
    }

    pub fn clock(mut self, clock: MockClock) -> Self {
        self.clock = clock;
        self
    }

    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    pub fn log_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.log_dir = Some(dir.into());
        self
    }

    pub fn log_limit(mut self, limit: usize) -> Self {
        self.log_limit = limit;
        self
    }
}

/// A running simulator on 127.0.0.1.
pub struct MockServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
    writer: Option<JoinHandle<()>>,
    log_path: Option<PathBuf>,
}

impl MockServer {
    /// Binds 127.0.0.1 on the configured port (0: any) and starts serving.
    pub async fn start(config: MockConfig) -> Result<Self, MockError> {
        let (jsonl, writer, log_path) = match &config.log_dir {
            Some(dir) => {
                let (tx, handle, path) = spawn_jsonl_writer(dir).await?;
                (Some(tx), Some(handle), Some(path))
            }
            None => (None, None, None),
        };
        let shared = Arc::new(Shared::new(
            config.scenario,
            config.chat_dialect,
            RequestLog::new(config.log_limit, jsonl),
            config.clock,
        ));
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", config.port))
            .await
            .map_err(|source| MockError::Bind {
                port: config.port,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| MockError::Bind {
            port: config.port,
            source,
        })?;
        let app = router(shared.clone());
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
                let _ = rx.await;
            });
            if let Err(err) = serve.await {
                tracing::warn!(%err, "tine-mock server stopped with an error");
            }
        });
        tracing::info!(%addr, "tine-mock listening");
        Ok(Self {
            shared,
            addr,
            shutdown: Some(tx),
            task: Some(task),
            writer,
            log_path,
        })
    }

    /// `http://127.0.0.1:PORT`, the base URL for a client (no trailing slash).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request seen so far (up to the configured limit), oldest first.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.shared.log().snapshot()
    }

    /// Forgets the in-memory log (the JSONL file is kept).
    pub fn clear_requests(&self) {
        self.shared.log().clear();
    }

    /// The clock cache TTLs use: `server.clock().advance(Duration::from_secs(301))`.
    pub fn clock(&self) -> MockClock {
        self.shared.clock.clone()
    }

    /// Empties the prompt cache (and the chat route's prefix cache).
    pub fn clear_cache(&self) {
        self.shared.cache().clear();
        self.shared.chat_cache().clear();
    }

    /// The base URL an OpenAI SDK takes: `http://127.0.0.1:PORT/v1`.
    pub fn openai_base_url(&self) -> String {
        format!("{}/v1", self.base_url())
    }

    /// The JSONL log file, when logging.
    pub fn log_path(&self) -> Option<&Path> {
        self.log_path.as_deref()
    }

    /// Stops accepting, lets running responses finish (at most 5 s), and flushes the log.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(mut task) = self.task.take()
            && tokio::time::timeout(Duration::from_secs(5), &mut task)
                .await
                .is_err()
        {
            task.abort();
        }
        // Close the JSONL channel so the writer drains and ends.
        *self.shared.log() = RequestLog::new(0, None);
        if let Some(writer) = self.writer.take() {
            let _ = writer.await;
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route(messages::PATH, post(handle::<MessagesExchange>))
        .route(messages::COUNT_TOKENS_PATH, post(messages::count_tokens))
        .route(handler::PATH, post(handle::<ChatExchange>))
        .route(handler::TOKENIZE_COUNT_PATH, post(handler::tokenize_count))
        .fallback(messages::not_found)
        .layer(DefaultBodyLimit::disable())
        .with_state(shared)
}
