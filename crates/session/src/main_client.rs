//! The main thread's model client: the session's client with what only the main thread's
//! requests get. `--fallback-model`: after [`OVERLOADED_BEFORE_FALLBACK`] overloaded attempts
//! in a row (529 / `overloaded_error`, as Claude Code counts them), the request goes again on
//! the fallback model, the user is told, and the rest of the session stays on it (the
//! overloaded model would only be tried, and fail, again): [`SessionEvent::ModelFallback`]
//! says so, and after the turn the engine asks the fallback itself ([`follow_fallback`]), so
//! what names the session's model (`/model`, the status line, forks, `modelUsage`) names the
//! one in use. `--include-partial-messages`:
//! every raw stream event is copied to the front end as [`SessionEvent::StreamEvent`].
//! Forks and side queries use the session's client itself.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::emit::Emitter;
use futures::StreamExt;
use futures::future::BoxFuture;
use tine_api_client::{
    ApiError, ApiErrorKind, ClientEvent, EventStream, MessagesRequest, ModelClient, RetryNotice,
};

use crate::protocol::{Notice, SessionEvent};

/// Overloaded attempts of one request, in a row, before it goes to the fallback model
/// (Claude Code's `MAX_529_RETRIES`).
pub const OVERLOADED_BEFORE_FALLBACK: u32 = 3;

/// The fallback of `--fallback-model`.
struct Fallback {
    /// The session's model (requests for another model, a custom command's, are left alone).
    main: String,
    fallback: String,
    /// Set once the main model stayed overloaded: every later request goes to the fallback.
    tripped: AtomicBool,
}

/// What the session keeps of `--fallback-model`, to follow a switch.
#[derive(Clone)]
pub(crate) struct FallbackSwitch(Arc<Fallback>);

/// After a turn: once the main model stayed overloaded, the engine asks the fallback from now
/// on (unless the model was changed meanwhile, by `/model`).
pub(crate) fn follow_fallback(
    engine: &mut tine_query_loop::QueryEngine,
    switch: Option<&FallbackSwitch>,
) {
    let Some(FallbackSwitch(fallback)) = switch else {
        return;
    };
    if fallback.tripped.load(Ordering::Relaxed) && engine.config().model == fallback.main {
        engine.set_model(fallback.fallback.clone());
    }
}

/// The session's client as the main thread uses it.
pub(crate) struct MainThreadClient {
    inner: Arc<dyn ModelClient>,
    fallback: Option<Arc<Fallback>>,
    events: Emitter,
    partial_messages: bool,
}

impl MainThreadClient {
    /// `inner` as is when neither option is on; the fallback's switch, when there is one.
    pub(crate) fn wrap(
        inner: Arc<dyn ModelClient>,
        main: &str,
        fallback: Option<String>,
        partial_messages: bool,
        events: &Emitter,
    ) -> (Arc<dyn ModelClient>, Option<FallbackSwitch>) {
        if fallback.is_none() && !partial_messages {
            return (inner, None);
        }
        let fallback = fallback.map(|fallback| {
            Arc::new(Fallback {
                main: main.to_owned(),
                fallback,
                tripped: AtomicBool::new(false),
            })
        });
        let switch = fallback.clone().map(FallbackSwitch);
        let client = Arc::new(Self {
            inner,
            fallback,
            events: events.clone(),
            partial_messages,
        });
        (client, switch)
    }
}

fn is_overloaded(error: &ApiError) -> bool {
    error.kind() == Some(&ApiErrorKind::Overloaded)
}

impl ModelClient for MainThreadClient {
    fn stream(&self, mut request: MessagesRequest) -> EventStream {
        let fallback = self
            .fallback
            .clone()
            .filter(|f| request.model == f.main || request.model == f.fallback);
        if let Some(f) = &fallback
            && f.tripped.load(Ordering::Relaxed)
        {
            request.model = f.fallback.clone();
        }
        let state = State {
            inner: Arc::clone(&self.inner),
            current: self.inner.stream(request.clone()),
            request,
            fallback,
            overloaded: 0,
            switched: false,
            events: self.events.clone(),
            partial_messages: self.partial_messages,
        };
        Box::pin(futures::stream::unfold(state, |mut state| async move {
            let item = state.next().await?;
            Some((item, state))
        }))
    }

    fn count_tokens(&self, request: MessagesRequest) -> BoxFuture<'static, Result<u64, ApiError>> {
        self.inner.count_tokens(request)
    }

    fn context_window(&self, model: &str) -> u64 {
        self.inner.context_window(model)
    }

    fn endpoint(&self) -> String {
        self.inner.endpoint()
    }

    fn is_local(&self) -> bool {
        self.inner.is_local()
    }
}

struct State {
    inner: Arc<dyn ModelClient>,
    current: EventStream,
    request: MessagesRequest,
    fallback: Option<Arc<Fallback>>,
    /// Overloaded attempts in a row of the current model.
    overloaded: u32,
    /// This request went to the fallback already.
    switched: bool,
    events: Emitter,
    partial_messages: bool,
}

impl State {
    async fn next(&mut self) -> Option<Result<ClientEvent, ApiError>> {
        let item = self.current.next().await?;
        match &item {
            Ok(ClientEvent::Stream(event)) => {
                self.overloaded = 0;
                if self.partial_messages {
                    let _ = self.events.emit(SessionEvent::StreamEvent(event.clone()));
                }
            }
            Ok(ClientEvent::Retry(notice)) => {
                if is_overloaded(&notice.reason) {
                    self.overloaded += 1;
                    if self.overloaded >= OVERLOADED_BEFORE_FALLBACK
                        && let Some(notice) = self.switch(&notice.reason)
                    {
                        return Some(Ok(ClientEvent::Retry(notice)));
                    }
                } else {
                    self.overloaded = 0;
                }
            }
            Err(error) if is_overloaded(error) => {
                if let Some(notice) = self.switch(error) {
                    return Some(Ok(ClientEvent::Retry(notice)));
                }
            }
            Err(_) => {}
        }
        Some(item)
    }

    /// Sends the request again on the fallback model (once), telling the user; `None` when
    /// there is no fallback or it failed too.
    fn switch(&mut self, reason: &ApiError) -> Option<RetryNotice> {
        let fallback = self.fallback.as_ref()?;
        if self.switched || self.request.model == fallback.fallback {
            return None;
        }
        self.switched = true;
        self.overloaded = 0;
        if !fallback.tripped.swap(true, Ordering::Relaxed) {
            let _ = self
                .events
                .emit(SessionEvent::Notice(Notice::warning(format!(
                    "{} is overloaded: switched to the fallback model {} (--fallback-model) for \
                 the rest of this session",
                    fallback.main, fallback.fallback
                ))));
            let _ = self.events.emit(SessionEvent::ModelFallback {
                from: fallback.main.clone(),
                to: fallback.fallback.clone(),
            });
        }
        tracing::warn!(from = %fallback.main, to = %fallback.fallback, "model fallback");
        self.request.model = fallback.fallback.clone();
        self.current = self.inner.stream(self.request.clone());
        // What the overloaded attempt built is dropped; the fallback's reply starts afresh.
        Some(RetryNotice {
            attempt: 1,
            max_attempts: 1,
            delay: std::time::Duration::ZERO,
            reason: reason.clone(),
            discard_partial: true,
        })
    }
}
