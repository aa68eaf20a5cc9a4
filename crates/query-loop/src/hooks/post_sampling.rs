//! The post-sampling hook registry: upper layers (memory extraction, dream, ...) register async
//! hooks that run after each model response. Hooks run concurrently, each in its own task, so a
//! failing or panicking hook is logged and reaches neither the loop nor the other hooks.

use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock};

use futures::future::BoxFuture;
use tine_api_client::Message;

use tine_config::SessionId;

/// What a hook may fail with; `anyhow::Error` and any `std::error::Error` convert into it.
pub type HookError = Box<dyn std::error::Error + Send + Sync>;

type HookFn<C> = Arc<dyn Fn(C) -> BoxFuture<'static, Result<(), HookError>> + Send + Sync>;

/// What the loop hands each post-sampling hook (cheap to clone: shared buffers).
#[derive(Debug, Clone)]
pub struct PostSamplingContext {
    /// The session's id.
    pub session_id: SessionId,
    /// The working directory.
    pub cwd: PathBuf,
    /// The whole conversation, including the response just sampled.
    pub messages: Arc<[Message]>,
    /// The system prompt exactly as sent.
    pub system_prompt: Arc<str>,
    /// The model that answered.
    pub model: Arc<str>,
}

/// How a run of the hooks went (everything is also logged).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PostSamplingSummary {
    /// Hooks that returned normally.
    pub succeeded: usize,
    /// Hooks that returned an error.
    pub failed: usize,
    /// Hooks that panicked.
    pub panicked: usize,
}

/// Registered post-sampling hooks. `C` is the context type handed to each hook.
pub struct PostSamplingHooks<C = PostSamplingContext> {
    hooks: RwLock<Vec<(String, HookFn<C>)>>,
}

impl<C> Default for PostSamplingHooks<C> {
    fn default() -> Self {
        Self {
            hooks: RwLock::new(Vec::new()),
        }
    }
}

impl<C> std::fmt::Debug for PostSamplingHooks<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hooks = self.hooks.read().unwrap_or_else(PoisonError::into_inner);
        let names: Vec<&str> = hooks.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("PostSamplingHooks")
            .field("hooks", &names)
            .finish()
    }
}

impl<C: Clone + Send + 'static> PostSamplingHooks<C> {
    /// No hook registered.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a hook; `name` labels its log lines.
    pub fn register<F, Fut>(&self, name: impl Into<String>, hook: F)
    where
        F: Fn(C) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), HookError>> + Send + 'static,
    {
        let hook: HookFn<C> = Arc::new(move |ctx| Box::pin(hook(ctx)));
        self.hooks
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .push((name.into(), hook));
    }

    /// How many hooks are registered.
    pub fn len(&self) -> usize {
        self.hooks
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Whether no hook is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Runs every hook concurrently and waits for all of them. Never fails: errors and panics
    /// are logged and counted.
    pub async fn run(&self, ctx: C) -> PostSamplingSummary {
        let hooks: Vec<(String, HookFn<C>)> = self
            .hooks
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let tasks: Vec<_> = hooks
            .into_iter()
            .map(|(name, hook)| {
                let ctx = ctx.clone();
                // The hook is called inside the task, so even a panic before its first await
                // is contained.
                let task = tokio::spawn(async move { hook(ctx).await });
                (name, task)
            })
            .collect();
        let mut summary = PostSamplingSummary::default();
        for (name, task) in tasks {
            match task.await {
                Ok(Ok(())) => summary.succeeded += 1,
                Ok(Err(error)) => {
                    tracing::warn!(hook = %name, %error, "post-sampling hook failed");
                    summary.failed += 1;
                }
                Err(join_error) => {
                    tracing::error!(hook = %name, error = %join_error, "post-sampling hook panicked or was cancelled");
                    summary.panicked += 1;
                }
            }
        }
        summary
    }

    /// Fire-and-forget [`run`](Self::run): the loop continues at once; keep the handle to drain
    /// pending hooks before exit (`-p`).
    pub fn spawn(self: &Arc<Self>, ctx: C) -> tokio::task::JoinHandle<PostSamplingSummary>
    where
        C: Sync,
    {
        let hooks = Arc::clone(self);
        tokio::spawn(async move { hooks.run(ctx).await })
    }
}
