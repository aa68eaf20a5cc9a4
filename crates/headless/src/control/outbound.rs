//! What tine asks the app (`control_request` lines on standard output: `can_use_tool`,
//! `hook_callback`, `mcp_message`) and the app's answers, matched by request id. Every line of
//! stdout is written whole under the stdout lock, so requests sent from other tasks never cut
//! into a message line. When the app closes its input, every request still open is answered
//! with an error (a call waiting for `can_use_tool` is then denied).

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use serde_json::{Value, json};
use tokio::sync::oneshot;

/// Writes one JSON line to standard output, whole.
pub(crate) fn write_line(value: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer(&mut out, value);
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

/// Answers the app's request `id` with `result`.
pub(crate) fn respond(id: &str, result: Result<Value, String>) {
    let response = match result {
        Ok(response) => json!({"subtype": "success", "request_id": id, "response": response}),
        Err(error) => json!({"subtype": "error", "request_id": id, "error": error}),
    };
    write_line(&json!({"type": "control_response", "response": response}));
}

/// tine's requests to the app that wait for an answer.
#[derive(Default)]
pub(crate) struct Outbound {
    next: AtomicU64,
    pending: Mutex<HashMap<String, oneshot::Sender<Result<Value, String>>>>,
    /// Set when the app's input ended: no answer can come any more.
    closed: AtomicBool,
}

impl Outbound {
    fn pending(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Result<Value, String>>>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends `request` (with its `subtype`) and returns its id and the answer to come.
    pub(crate) fn request(
        &self,
        request: Value,
    ) -> (
        String,
        impl Future<Output = Result<Value, String>> + Send + 'static,
    ) {
        let id = format!("tine_{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        let (tx, rx) = oneshot::channel();
        if self.closed.load(Ordering::SeqCst) {
            let _ = tx.send(Err("the app has closed its input".to_owned()));
        } else {
            self.pending().insert(id.clone(), tx);
            write_line(&json!({"type": "control_request", "request_id": id, "request": request}));
        }
        let answer = async move {
            rx.await
                .unwrap_or_else(|_| Err("the request was withdrawn".to_owned()))
        };
        (id, answer)
    }

    /// The app answered request `id`; an answer to a request tine did not make (or no longer
    /// waits for) is logged and dropped.
    pub(crate) fn resolve(&self, id: &str, result: Result<Value, String>) {
        match self.pending().remove(id) {
            Some(waiting) => {
                let _ = waiting.send(result);
            }
            None => tracing::warn!(%id, "a control_response to no request of tine's; ignored"),
        }
    }

    /// Withdraws request `id` (the question it carried is over): the app is told.
    pub(crate) fn cancel(&self, id: &str) {
        if self.pending().remove(id).is_some() {
            write_line(&json!({"type": "control_cancel_request", "request_id": id}));
        }
    }

    /// The app's input ended: every open request is answered with an error.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        for (_, waiting) in self.pending().drain() {
            let _ = waiting.send(Err("the app closed its input before answering".to_owned()));
        }
    }
}
