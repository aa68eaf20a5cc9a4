//! A scratch world (tine home, project, user home) and sessions on the in-process mock, with a
//! client that can hold chosen requests until a test lets them go.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use futures::future::BoxFuture;
use tine_api_client::{
    ApiError, ClientConfig, ContentBlock, Credentials, EventStream, HttpClient, MessageContent,
    MessagesRequest, ModelClient, RetryPolicy,
};
use tine_mock_api::{MockConfig, MockServer, Scenario};
use tine_session::{
    Answer, Event, Op, OpId, PermissionAnswer, QuestionId, Session, SessionEvent, SessionHandle,
    SessionInfo, SessionOptions, StuckDecision, TurnEnd,
};
use tokio::sync::{Notify, mpsc};

pub(super) struct World {
    _root: tempfile::TempDir,
    pub home: PathBuf,
    pub cwd: PathBuf,
    pub user_home: PathBuf,
}

impl World {
    pub(super) fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        let home = base.join("tine-home");
        let cwd = base.join("project");
        let user_home = base.join("user");
        for dir in [&home, &cwd, &user_home] {
            std::fs::create_dir_all(dir).unwrap();
        }
        Self {
            _root: root,
            home,
            cwd,
            user_home,
        }
    }

    /// Writes the project's shared settings.
    pub(super) fn project_settings(&self, json: &str) {
        let dir = self.cwd.join(".tine");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("settings.json"), json).unwrap();
    }

    pub(super) fn memory_dir(&self) -> PathBuf {
        tine_memory::default_memory_dir(&self.home, &self.cwd)
    }

    /// Options for a session of this world on `client`, isolated from the machine's settings.
    pub(super) fn options(&self, client: Arc<dyn ModelClient>) -> SessionOptions {
        let mut options = SessionOptions::new(&self.cwd);
        options.home = Some(self.home.clone());
        options.user_home = Some(self.user_home.clone());
        options.managed_settings = Some(self.home.join("no-managed-settings.json"));
        options.client = Some(client);
        options
    }
}

pub(super) async fn server(scenario: Scenario) -> MockServer {
    MockServer::start(MockConfig::new(scenario)).await.unwrap()
}

pub(super) fn http_client(server: &MockServer) -> Arc<HttpClient> {
    let config = ClientConfig::new(server.base_url(), Credentials::api_key("test-key"))
        .with_retry(RetryPolicy::none());
    Arc::new(HttpClient::new(config).unwrap())
}

/// The text of a request's last user message.
pub(super) fn last_user_text(request: &MessagesRequest) -> String {
    let Some(message) = request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == tine_api_client::Role::User)
    else {
        return String::new();
    };
    match &message.content {
        MessageContent::Text(text) => text.clone(),
        MessageContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// Holds every request whose last user message contains `marker` until [`Gate::open`].
pub(super) struct Gate {
    marker: String,
    opened: Notify,
    open: Mutex<bool>,
    /// Signalled when a held request arrives.
    pub arrived: Notify,
}

impl Gate {
    pub(super) fn new(marker: &str) -> Arc<Self> {
        Arc::new(Self {
            marker: marker.to_owned(),
            opened: Notify::new(),
            open: Mutex::new(false),
            arrived: Notify::new(),
        })
    }

    pub(super) fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.opened.notify_waiters();
    }

    async fn wait(&self) {
        loop {
            let opened = self.opened.notified();
            if *self.open.lock().unwrap() {
                return;
            }
            opened.await;
        }
    }
}

/// A client that sends through `inner`, holding the requests `gate` names.
pub(super) struct GatedClient {
    pub inner: Arc<dyn ModelClient>,
    pub gate: Arc<Gate>,
}

impl ModelClient for GatedClient {
    fn stream(&self, request: MessagesRequest) -> EventStream {
        if !last_user_text(&request).contains(&self.gate.marker) {
            return self.inner.stream(request);
        }
        let inner = Arc::clone(&self.inner);
        let gate = Arc::clone(&self.gate);
        futures::stream::once(async move {
            gate.arrived.notify_one();
            gate.wait().await;
            inner.stream(request)
        })
        .flatten()
        .boxed()
    }

    fn count_tokens(&self, request: MessagesRequest) -> BoxFuture<'static, Result<u64, ApiError>> {
        self.inner.count_tokens(request)
    }
}

/// A running session and its events.
pub(super) struct Running {
    pub handle: SessionHandle,
    pub events: mpsc::UnboundedReceiver<Event>,
    /// What the session said it is (its first event, `Configured`).
    pub info: SessionInfo,
    /// Everything received so far (their messages).
    pub seen: Vec<SessionEvent>,
    /// The ops each of `seen` answers.
    pub seen_ids: Vec<Option<OpId>>,
}

impl Running {
    pub(super) async fn start(options: SessionOptions) -> Self {
        let (handle, mut events) = Session::start(options).await.unwrap();
        let first = events.recv().await.expect("no first event");
        let SessionEvent::Configured(info) = first.msg.clone() else {
            panic!("the first event is not Configured: {first:?}");
        };
        Self {
            handle,
            events,
            info,
            seen: vec![first.msg],
            seen_ids: vec![first.id],
        }
    }

    /// Submits `op`.
    pub(super) fn submit(&self, op: Op) -> OpId {
        self.handle.submit(op).unwrap()
    }

    /// Submits an op done at once and says whether it was refused (its `OpFailed`, which the
    /// session sends before `submit` returns).
    pub(super) fn at_once(&mut self, op: Op) -> Result<(), String> {
        let id = self.submit(op);
        while let Ok(event) = self.events.try_recv() {
            self.seen.push(event.msg);
            self.seen_ids.push(event.id);
        }
        let failed = self
            .seen
            .iter()
            .zip(&self.seen_ids)
            .find_map(|(e, at)| match e {
                SessionEvent::OpFailed { message } if *at == Some(id) => Some(message.clone()),
                _ => None,
            });
        match failed {
            Some(message) => Err(message),
            None => Ok(()),
        }
    }

    pub(super) fn answer_permission(
        &mut self,
        question: QuestionId,
        answer: PermissionAnswer,
    ) -> Result<(), String> {
        self.at_once(Op::Answer {
            question,
            answer: Answer::Permission(answer),
        })
    }

    pub(super) fn answer_stuck(
        &mut self,
        question: QuestionId,
        decision: StuckDecision,
    ) -> Result<(), String> {
        self.at_once(Op::Answer {
            question,
            answer: Answer::Stuck(decision),
        })
    }

    pub(super) fn interrupt(&mut self) {
        let _ = self.at_once(Op::Interrupt);
    }

    /// Receives until `pick` returns something, keeping every event in `seen`.
    pub(super) async fn until<T>(&mut self, mut pick: impl FnMut(&SessionEvent) -> Option<T>) -> T {
        loop {
            let event = self
                .events
                .recv()
                .await
                .expect("the session's events ended before the awaited one");
            let picked = pick(&event.msg);
            self.seen.push(event.msg);
            self.seen_ids.push(event.id);
            if let Some(picked) = picked {
                return picked;
            }
        }
    }

    /// Like [`Running::until`], but first looks in the events already seen: a background job
    /// started by a turn's stop hooks can end before the turn's own `TurnEnded` is sent.
    pub(super) async fn seen_or_until<T>(
        &mut self,
        mut pick: impl FnMut(&SessionEvent) -> Option<T>,
    ) -> T {
        if let Some(picked) = self.seen.iter().find_map(&mut pick) {
            return picked;
        }
        self.until(pick).await
    }

    /// The next `TurnEnded` and the op it answers.
    pub(super) async fn turn_end_of(&mut self) -> (Option<OpId>, TurnEnd) {
        loop {
            let event = self
                .events
                .recv()
                .await
                .expect("the session's events ended before a turn's end");
            let id = event.id;
            let end = match &event.msg {
                SessionEvent::TurnEnded(end) => Some(end.clone()),
                _ => None,
            };
            self.seen.push(event.msg);
            self.seen_ids.push(id);
            if let Some(end) = end {
                return (id, end);
            }
        }
    }

    pub(super) async fn turn_end(&mut self) -> TurnEnd {
        self.until(|e| match e {
            SessionEvent::TurnEnded(end) => Some(end.clone()),
            _ => None,
        })
        .await
    }

    /// Shuts down and returns every event left (`ShutdownComplete` is the last).
    pub(super) async fn shutdown(mut self) -> (tine_session::ShutdownReport, Vec<SessionEvent>) {
        let report = self.handle.clone().shutdown().await;
        while let Some(event) = self.events.recv().await {
            let last = matches!(event.msg, SessionEvent::ShutdownComplete(_));
            self.seen.push(event.msg);
            if last {
                break;
            }
        }
        (report, self.seen)
    }
}

/// Files under `dir`, relative, sorted.
pub(super) fn files_under(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    };
    out.sort();
    out
}
