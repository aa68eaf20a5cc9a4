//! What the session calls in the app through the control protocol: the app's hook callbacks
//! (`hook_callback`) and its in-process MCP servers (`mcp_message`), each a request of tine's
//! ([`Outbound`]) whose answer the session reads. A request the session stops waiting for (a
//! hook's timeout, an interrupted turn, a cancelled MCP call) is withdrawn from the app.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tine_session::{HookCallbacks, SdkMcpRelay};

use super::outbound::Outbound;

/// Sends `request` and waits for its answer; dropped before it, the request is withdrawn.
fn ask(outbound: &Arc<Outbound>, request: Value) -> BoxFuture<'static, Result<Value, String>> {
    let (id, answer) = outbound.request(request);
    let withdraw = Withdraw {
        outbound: Arc::clone(outbound),
        id: Some(id),
    };
    Box::pin(async move {
        let mut withdraw = withdraw;
        let answer = answer.await;
        withdraw.id = None;
        answer
    })
}

/// Withdraws its request when dropped before the answer came.
struct Withdraw {
    outbound: Arc<Outbound>,
    id: Option<String>,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.outbound.cancel(&id);
        }
    }
}

/// The app's hook callbacks (`initialize`'s `hooks`).
pub(crate) struct AppCallbacks(pub(crate) Arc<Outbound>);

impl HookCallbacks for AppCallbacks {
    fn call(
        &self,
        callback_id: &str,
        input: Value,
        tool_use_id: Option<String>,
    ) -> BoxFuture<'static, Result<Value, String>> {
        ask(
            &self.0,
            json!({
                "subtype": "hook_callback",
                "callback_id": callback_id,
                "input": input,
                "tool_use_id": tool_use_id,
            }),
        )
    }
}

/// The app's in-process MCP servers (`mcp_servers` of type `sdk`).
pub(crate) struct AppMcp(pub(crate) Arc<Outbound>);

impl SdkMcpRelay for AppMcp {
    fn send(&self, server: &str, message: Value) -> BoxFuture<'static, Result<Value, String>> {
        let answer = ask(
            &self.0,
            json!({"subtype": "mcp_message", "server_name": server, "message": message}),
        );
        Box::pin(async move {
            let answer = answer.await?;
            Ok(answer.get("mcp_response").cloned().unwrap_or(answer))
        })
    }
}
