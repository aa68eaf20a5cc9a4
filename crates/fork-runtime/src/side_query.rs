//! `side_query` (seed 000 §六): one call, no loop, no tools, for work that needs a single
//! inference (recall selection, a permission explanation, a model check). It does not share
//! the parent's cache. Optionally the answer must be a JSON value matching a schema: it is
//! validated, retried once with the problem named, then refused with a typed error.
//!
//! Usage of every call is recorded under its query source in a [`UsageLedger`], which a host
//! shares with the session's side queries and forks (through
//! [`crate::ParentContext::ledger`]) to show per-feature totals and cost.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tine_api_client::{
    ApiError, ContentBlock, Message, MessagesRequest, ModelClient, SystemPrompt, TextBlock, Usage,
    collect_message, cost_usd,
};
use tine_query_loop::QuerySource;

/// The one line that opens the system prompt of every tine request unless skipped (internal
/// classifiers that bring their own system prompt skip it).
pub const CLI_SYSTEM_PREFIX: &str = "You are tine, a command-line coding agent.";

/// `max_tokens` of a [`SideQuery`] unless set.
pub const DEFAULT_SIDE_QUERY_MAX_TOKENS: u32 = 1024;

/// One side query.
#[derive(Debug, Clone, PartialEq)]
pub struct SideQuery {
    /// The model asked (usually a small, fast one).
    pub model: String,
    /// The caller's system prompt, after the CLI prefix.
    pub system: Option<String>,
    /// Leave [`CLI_SYSTEM_PREFIX`] out of the system prompt.
    pub skip_system_prefix: bool,
    /// The conversation to answer.
    pub messages: Vec<Message>,
    /// The reply's output limit.
    pub max_tokens: u32,
    /// The answer must be a JSON value matching this schema (the subset `tine_tools::validate`
    /// checks).
    pub json_schema: Option<Value>,
    /// The feature the call is billed to (`memory_recall`, `permission_explainer`, ...).
    pub query_source: QuerySource,
    /// The sampling temperature, when set.
    pub temperature: Option<f32>,
}

impl SideQuery {
    /// A query with the defaults: prefix on, no caller system prompt, no schema.
    pub fn new(model: impl Into<String>, query_source: &str, messages: Vec<Message>) -> Self {
        Self {
            model: model.into(),
            system: None,
            skip_system_prefix: false,
            messages,
            max_tokens: DEFAULT_SIDE_QUERY_MAX_TOKENS,
            json_schema: None,
            query_source: Arc::from(query_source),
            temperature: None,
        }
    }

    /// With a system prompt of the caller's (after the CLI prefix).
    pub fn with_system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// With a JSON schema the answer must match.
    pub fn with_schema(mut self, schema: Value) -> Self {
        self.json_schema = Some(schema);
        self
    }

    /// With another output limit.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Without the CLI prefix in the system prompt.
    pub fn skipping_system_prefix(mut self) -> Self {
        self.skip_system_prefix = true;
        self
    }

    /// The system prompt as sent: prefix, caller's prompt, schema instruction (each a block).
    fn system_prompt(&self) -> Option<SystemPrompt> {
        let mut blocks = Vec::with_capacity(3);
        if !self.skip_system_prefix {
            blocks.push(TextBlock::new(CLI_SYSTEM_PREFIX));
        }
        if let Some(system) = &self.system {
            blocks.push(TextBlock::new(system.clone()));
        }
        if let Some(schema) = &self.json_schema {
            blocks.push(TextBlock::new(schema_instruction(schema)));
        }
        (!blocks.is_empty()).then_some(SystemPrompt::Blocks(blocks))
    }

    fn request(&self, messages: Vec<Message>) -> MessagesRequest {
        let mut request = MessagesRequest::new(self.model.clone(), self.max_tokens, messages);
        request.system = self.system_prompt();
        request.temperature = self.temperature;
        request
    }
}

fn schema_instruction(schema: &Value) -> String {
    // Compact: the instruction is sent uncached with every query.
    let schema = schema.to_string();
    format!(
        "Answer with only a JSON value that matches this JSON Schema, with no other text before \
         or after it:\n{schema}"
    )
}

/// What a side query produced.
#[derive(Debug, Clone, PartialEq)]
pub struct SideQueryResult {
    /// The text of the (last) reply.
    pub text: String,
    /// The validated value, when the query had a schema.
    pub json: Option<Value>,
    /// Summed over the call and its retry, if any.
    pub usage: Usage,
    /// What the call cost, in US dollars.
    pub cost_usd: f64,
}

/// Why a side query gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum SideQueryError {
    /// The request failed.
    #[error("side query failed: {0}")]
    Api(#[from] ApiError),
    /// The answer did not match the schema, twice.
    #[error(
        "the model's answer did not match the side query's JSON schema, even after one retry: {}",
        .errors.join("; ")
    )]
    InvalidOutput {
        /// What was wrong with the last answer.
        errors: Vec<String>,
        /// The last answer as the model gave it.
        raw: String,
    },
}

/// Usage and cost of one query source.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SourceUsage {
    /// Tokens, cache fields included.
    pub usage: Usage,
    /// Cost in US dollars.
    pub cost_usd: f64,
    /// Requests made.
    pub requests: u64,
}

impl std::ops::AddAssign for SourceUsage {
    fn add_assign(&mut self, rhs: Self) {
        self.usage += rhs.usage;
        self.cost_usd += rhs.cost_usd;
        self.requests += rhs.requests;
    }
}

/// Usage per query source, shared by clones (hosts give one to the session and its side
/// queries and show the totals).
#[derive(Debug, Clone, Default)]
pub struct UsageLedger {
    inner: Arc<Mutex<BTreeMap<String, SourceUsage>>>,
    /// The same requests by the model that answered them (and the main thread's, which the
    /// host counts by source itself: see [`UsageLedger::record_model`]).
    by_model: Arc<Mutex<BTreeMap<String, SourceUsage>>>,
}

impl UsageLedger {
    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, SourceUsage>> {
        // Each update is a single insert; a panicked holder leaves a usable map.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds one request's `usage` under `source` (and under `model`); returns its cost.
    pub fn record(&self, source: &str, model: &str, usage: &Usage) -> f64 {
        let cost = self.record_model(model, usage);
        let mut map = self.lock();
        let entry = map.entry(source.to_owned()).or_default();
        entry.usage += *usage;
        entry.cost_usd += cost;
        entry.requests += 1;
        cost
    }

    /// Adds one request's `usage` under `model` only: for a host that keeps the source's
    /// totals itself (the session's main thread) but reports usage by model too (`-p`'s
    /// `modelUsage`). Returns its cost.
    pub fn record_model(&self, model: &str, usage: &Usage) -> f64 {
        let cost = cost_usd(model, usage);
        let mut map = self
            .by_model
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let entry = map.entry(model.to_owned()).or_default();
        entry.usage += *usage;
        entry.cost_usd += cost;
        entry.requests += 1;
        cost
    }

    /// Every model that answered, by id (what [`UsageLedger::record`] and
    /// [`UsageLedger::record_model`] counted).
    pub fn by_model(&self) -> BTreeMap<String, SourceUsage> {
        self.by_model
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// What `source` used so far.
    pub fn get(&self, source: &str) -> Option<SourceUsage> {
        self.lock().get(source).copied()
    }

    /// Every source, by name.
    pub fn snapshot(&self) -> BTreeMap<String, SourceUsage> {
        self.lock().clone()
    }

    /// Summed over all sources.
    pub fn total(&self) -> SourceUsage {
        self.lock()
            .values()
            .fold(SourceUsage::default(), |mut total, s| {
                total += *s;
                total
            })
    }
}

/// The first JSON value in `text`: the whole text, else a fenced block's body, else the first
/// `{` or `[` from which a value parses (prose before and after is ignored).
pub(crate) fn extract_json(text: &str) -> Option<Value> {
    let trimmed = text.trim();
    if let Ok(value) = serde_json::from_str::<Value>(trimmed) {
        return Some(value);
    }
    if let Some(body) = fenced_body(trimmed)
        && let Ok(value) = serde_json::from_str::<Value>(body.trim())
    {
        return Some(value);
    }
    trimmed
        .char_indices()
        .filter(|(_, c)| matches!(c, '{' | '['))
        .find_map(|(at, _)| {
            serde_json::Deserializer::from_str(&trimmed[at..])
                .into_iter::<Value>()
                .next()
                .and_then(Result::ok)
        })
}

/// The body of the first ``` fence (its info string, such as `json`, skipped).
fn fenced_body(text: &str) -> Option<&str> {
    let start = text.find("```")?;
    let after = &text[start + 3..];
    let body_start = after.find('\n')? + 1;
    let body = &after[body_start..];
    let end = body.find("```").unwrap_or(body.len());
    Some(&body[..end])
}

/// Checks `text` against `schema`: the value, or what is wrong with it.
fn parse_against(schema: &Value, text: &str) -> Result<Value, Vec<String>> {
    let Some(value) = extract_json(text) else {
        return Err(vec!["the answer holds no JSON value".to_owned()]);
    };
    match tine_tools::validate(schema, &value) {
        Ok(()) => Ok(value),
        Err(violation) => Err(vec![violation.to_string()]),
    }
}

fn retry_prompt(errors: &[String]) -> String {
    format!(
        "Your answer was not valid: {}. Answer again with only a JSON value that matches the \
         schema, and nothing else.",
        errors.join("; ")
    )
}

/// Sends one request and records its usage under the query source.
async fn call(
    client: &dyn ModelClient,
    query: &SideQuery,
    messages: Vec<Message>,
    ledger: Option<&UsageLedger>,
    total: &mut (Usage, f64),
) -> Result<(String, Vec<ContentBlock>), SideQueryError> {
    let request = query.request(messages);
    let (reply, _retries) = collect_message(client.stream(request)).await?;
    let cost = match ledger {
        Some(ledger) => ledger.record(&query.query_source, &query.model, &reply.usage),
        None => cost_usd(&query.model, &reply.usage),
    };
    total.0 += reply.usage;
    total.1 += cost;
    tracing::debug!(
        source = %query.query_source,
        input = reply.usage.input_tokens,
        output = reply.usage.output_tokens,
        "side query answered"
    );
    Ok((reply.text(), reply.content))
}

/// A model side queries go to (usually a small, fast one): its client, its name, and the
/// ledger its queries are billed to. WebFetch's summarizer and memory recall's selector are
/// each one of these, asked their own way.
#[derive(Clone)]
pub struct SideModel {
    client: Arc<dyn ModelClient>,
    model: String,
    ledger: Option<UsageLedger>,
}

impl SideModel {
    /// `model` asked through `client`, billed nowhere.
    pub fn new(client: Arc<dyn ModelClient>, model: impl Into<String>) -> Self {
        Self {
            client,
            model: model.into(),
            ledger: None,
        }
    }

    /// Records each query's usage in `ledger`, under the query's source.
    pub fn with_ledger(mut self, ledger: UsageLedger) -> Self {
        self.ledger = Some(ledger);
        self
    }

    /// A query of this model, reported under `source`.
    pub fn query(&self, source: &str, messages: Vec<Message>) -> SideQuery {
        SideQuery::new(self.model.clone(), source, messages)
    }

    /// Runs `query` (see [`side_query()`]) and bills it.
    pub async fn ask(&self, query: &SideQuery) -> Result<SideQueryResult, SideQueryError> {
        side_query(self.client.as_ref(), query, self.ledger.as_ref()).await
    }
}

/// Runs `query`: one call (two when a schema'd answer is invalid the first time).
pub async fn side_query(
    client: &dyn ModelClient,
    query: &SideQuery,
    ledger: Option<&UsageLedger>,
) -> Result<SideQueryResult, SideQueryError> {
    let mut total = (Usage::default(), 0.0);
    let (text, content) = call(client, query, query.messages.clone(), ledger, &mut total).await?;
    let Some(schema) = &query.json_schema else {
        return Ok(SideQueryResult {
            text,
            json: None,
            usage: total.0,
            cost_usd: total.1,
        });
    };
    let errors = match parse_against(schema, &text) {
        Ok(json) => {
            return Ok(SideQueryResult {
                text,
                json: Some(json),
                usage: total.0,
                cost_usd: total.1,
            });
        }
        Err(errors) => errors,
    };
    tracing::debug!(source = %query.query_source, ?errors, "side query answer invalid; retrying once");

    // The retry keeps the bad answer so the history alternates user / assistant / user.
    let mut messages = query.messages.clone();
    let answer: Vec<ContentBlock> = content
        .into_iter()
        .filter(|b| matches!(b, ContentBlock::Text(t) if !t.text.is_empty()))
        .collect();
    messages.push(Message::assistant(if answer.is_empty() {
        vec![ContentBlock::text("(no answer)")]
    } else {
        answer
    }));
    messages.push(Message::user(vec![ContentBlock::text(retry_prompt(
        &errors,
    ))]));
    let (text, _) = call(client, query, messages, ledger, &mut total).await?;
    match parse_against(schema, &text) {
        Ok(json) => Ok(SideQueryResult {
            text,
            json: Some(json),
            usage: total.0,
            cost_usd: total.1,
        }),
        Err(errors) => Err(SideQueryError::InvalidOutput { errors, raw: text }),
    }
}

#[cfg(test)]
#[path = "side_query_tests.rs"]
mod tests;
