//! Servers that live inside the Agent SDK app driving tine (`"type": "sdk"`): there is no
//! process or URL to reach, only the app, which relays each JSON-RPC message to its in-process
//! server and hands back the answer ([`SdkMcpRelay`], implemented by the front end that speaks
//! the SDK's control protocol). [`SdkRelayTransport`] makes that relay an rmcp transport, so
//! the handshake, `tools/list` and `tools/call` are rmcp's, as for every other server.
//!
//! Requests are answered through the relay; notifications and responses are relayed and their
//! acknowledgement dropped. A relay that fails, or answers with something other than the
//! request's JSON-RPC response, fails that one request with a JSON-RPC error saying why. A
//! `notifications/cancelled` also drops the relayed request it names (a front end can take the
//! drop as its cue to withdraw the message).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
use rmcp::RoleClient;
use rmcp::model::{
    ClientJsonRpcMessage, ErrorData, JsonRpcMessage, RequestId, ServerJsonRpcMessage,
};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Why an `sdk` server cannot start without a relay.
pub(crate) const NO_RELAY: &str = "sdk MCP servers need the Agent SDK's control protocol \
    (--input-format stream-json from an SDK app); none is driving this run";

/// Carries one JSON-RPC message of an MCP conversation to an in-process server of the SDK app
/// and brings back its answer (the SDK's `mcp_message` control request, whose
/// `{"mcp_response": ...}` holds the answer). The headless front end implements it.
pub trait SdkMcpRelay: Send + Sync {
    /// Sends `message` (a JSON-RPC request, notification or response) to the app's server
    /// `server` (its key in `mcpServers`). Resolves with the app's answer: the JSON-RPC
    /// response for a request, an acknowledgement (ignored) for anything else; `Err` says why
    /// the message could not be carried. Called in the order the MCP client sends (an
    /// implementation that writes the message before returning its future keeps that order);
    /// the future may be dropped before it resolves (the request was cancelled).
    fn send(&self, server: &str, message: Value) -> BoxFuture<'static, Result<Value, String>>;
}

/// A message the transport could not put into JSON (never expected of rmcp's own types).
#[derive(Debug, thiserror::Error)]
#[error("cannot encode an MCP message for the SDK app: {0}")]
pub(crate) struct SdkRelayError(String);

/// The relayed requests in flight, by their id's JSON text, each with the token that drops it.
type InFlight = Arc<Mutex<HashMap<String, CancellationToken>>>;

/// One `sdk` server's connection as an rmcp client transport.
pub(crate) struct SdkRelayTransport {
    server: Arc<str>,
    relay: Arc<dyn SdkMcpRelay>,
    answers_tx: mpsc::UnboundedSender<ServerJsonRpcMessage>,
    answers: mpsc::UnboundedReceiver<ServerJsonRpcMessage>,
    in_flight: InFlight,
    closed: CancellationToken,
}

impl SdkRelayTransport {
    /// The transport to the app's server `server` through `relay`.
    pub(crate) fn new(server: &str, relay: Arc<dyn SdkMcpRelay>) -> Self {
        let (answers_tx, answers) = mpsc::unbounded_channel();
        SdkRelayTransport {
            server: server.into(),
            relay,
            answers_tx,
            answers,
            in_flight: InFlight::default(),
            closed: CancellationToken::new(),
        }
    }

    /// Hands `message` to the relay now (so messages reach it in the order rmcp sends them)
    /// and returns what finishes its delivery: a request's answer goes to [`Self::receive`].
    fn relay_now(
        &self,
        item: &ClientJsonRpcMessage,
        message: Value,
    ) -> BoxFuture<'static, Result<(), SdkRelayError>> {
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("a response")
            .to_owned();
        if method == "notifications/cancelled"
            && let Some(id) = message.pointer("/params/requestId")
        {
            let dropped = self
                .in_flight
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&id.to_string());
            if let Some(token) = dropped {
                token.cancel();
            }
        }
        // The id as JSON text, as a `notifications/cancelled` names it.
        let key = message["id"].to_string();
        let answer = self.relay.send(&self.server, message);
        let ClientJsonRpcMessage::Request(request) = item else {
            return Box::pin(async move {
                if let Err(error) = answer.await {
                    tracing::debug!(%method, %error, "an MCP message to an SDK server was not relayed");
                }
                Ok(())
            });
        };
        let id = request.id.clone();
        let token = CancellationToken::new();
        self.in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.clone(), token.clone());
        let in_flight = Arc::clone(&self.in_flight);
        let answers = self.answers_tx.clone();
        Box::pin(async move {
            let answer = tokio::select! {
                answer = answer => Some(answer),
                () = token.cancelled() => None,
            };
            in_flight
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&key);
            if let Some(answer) = answer {
                // The receiving side is gone only when the connection is: nobody waits then.
                let _ = answers.send(response_for(id, &method, answer));
            }
            Ok(())
        })
    }
}

/// The request `id`'s response from what the relay brought back, or a JSON-RPC error saying
/// why there is none.
fn response_for(
    id: RequestId,
    method: &str,
    answer: Result<Value, String>,
) -> ServerJsonRpcMessage {
    let why = match answer {
        Err(why) => format!("the SDK app could not relay `{method}`: {why}"),
        Ok(value) => match serde_json::from_value::<ServerJsonRpcMessage>(value.clone()) {
            Ok(JsonRpcMessage::Response(response)) if response.id == id => {
                return JsonRpcMessage::Response(response);
            }
            Ok(JsonRpcMessage::Error(error)) if error.id.as_ref().is_none_or(|e| *e == id) => {
                return JsonRpcMessage::error(error.error, Some(id));
            }
            Ok(_) => format!(
                "the SDK app answered `{method}` with something other than its JSON-RPC response: {}",
                excerpt(&value)
            ),
            Err(error) => format!(
                "the SDK app's answer to `{method}` is not a JSON-RPC response tine can read ({error}): {}",
                excerpt(&value)
            ),
        },
    };
    JsonRpcMessage::error(ErrorData::internal_error(why, None), Some(id))
}

/// The start of a JSON value, for an error message.
fn excerpt(value: &Value) -> String {
    const MAX: usize = 200;
    let text = value.to_string();
    match text.char_indices().nth(MAX) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}

impl Transport<RoleClient> for SdkRelayTransport {
    type Error = SdkRelayError;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        match serde_json::to_value(&item) {
            Ok(message) => self.relay_now(&item, message),
            Err(error) => Box::pin(std::future::ready(Err(SdkRelayError(error.to_string())))),
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        tokio::select! {
            answer = self.answers.recv() => answer,
            () = self.closed.cancelled() => None,
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.closed.cancel();
        let dropped: Vec<CancellationToken> = self
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .map(|(_, token)| token)
            .collect();
        for token in dropped {
            token.cancel();
        }
        Ok(())
    }
}
