//! What extraction reports: a [`RunReport`] per run, and the [`ExtractionOutcome`] of a
//! run and its trailing runs (the files saved, the usage, each run's report), the typed detail
//! of the job's `JobOutcome`, which `stream-json` prints as its JSON.

use serde::Serialize;
use tine_api_client::Usage;

use crate::fork_changes::{cache_figures, optional_cache_figures};

/// What one run did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RunReport {
    /// No message since the cursor.
    NothingNew,
    /// The main agent wrote memory itself; the cursor moved without a fork.
    SkippedMainAgentWrote {
        /// Messages since the cursor.
        new_messages: usize,
    },
    /// Every new turn was an acknowledgement with no tool use; the cursor stays, so the next
    /// run still covers them.
    NothingToLearn {
        /// Messages since the cursor.
        new_messages: usize,
    },
    /// The fork ran.
    Extracted(Box<ForkRun>),
}

impl RunReport {
    /// The run's status, as its report's `status` says it.
    pub fn status(&self) -> ExtractionStatus {
        match self {
            Self::NothingNew => ExtractionStatus::NothingNew,
            Self::SkippedMainAgentWrote { .. } => ExtractionStatus::SkippedMainAgentWrote,
            Self::NothingToLearn { .. } => ExtractionStatus::NothingToLearn,
            Self::Extracted(_) => ExtractionStatus::Extracted,
        }
    }
}

/// A fork's run: what it wrote and what it cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ForkRun {
    /// Messages since the cursor that the fork was given.
    pub new_messages: usize,
    /// Topic files written or changed (relative to the memory directory).
    pub files: Vec<String>,
    /// Whether `MEMORY.md` changed.
    pub index_updated: bool,
    /// Requests the fork made.
    pub requests: u32,
    /// What the fork cost, in US dollars.
    pub cost_usd: f64,
    /// Usage summed over the fork's requests.
    #[serde(serialize_with = "cache_figures")]
    pub usage: Usage,
    /// The first request's usage (its cache read shows the parent's prefix was reused).
    #[serde(serialize_with = "optional_cache_figures")]
    pub first_request_usage: Option<Usage>,
}

/// How extraction's last run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExtractionStatus {
    /// No message since the cursor.
    NothingNew,
    /// The main agent wrote memory itself.
    SkippedMainAgentWrote,
    /// Nothing worth a fork.
    NothingToLearn,
    /// The fork ran.
    Extracted,
    /// No run completed.
    Failed,
}

/// What extraction did over one run and its trailing runs: the job's typed outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExtractionOutcome {
    /// The last run's status.
    pub status: ExtractionStatus,
    /// Topic files saved (relative to the memory directory), each once, in order.
    pub files: Vec<String>,
    /// Whether `MEMORY.md` changed.
    pub index_updated: bool,
    /// Usage summed over the runs' forks.
    #[serde(serialize_with = "cache_figures")]
    pub usage: Usage,
    /// Each run's report, in order.
    pub runs: Vec<RunReport>,
    /// Why the last run failed, when it did.
    pub error: Option<String>,
}

impl ExtractionOutcome {
    /// The outcome of `reports`, the last run having failed with `error` if given.
    pub(crate) fn of(reports: Vec<RunReport>, error: Option<String>) -> Self {
        let mut files: Vec<String> = Vec::new();
        let mut index_updated = false;
        let mut usage = Usage::default();
        for report in &reports {
            if let RunReport::Extracted(run) = report {
                for f in &run.files {
                    if !files.contains(f) {
                        files.push(f.clone());
                    }
                }
                index_updated |= run.index_updated;
                usage += run.usage;
            }
        }
        Self {
            status: reports
                .last()
                .map_or(ExtractionStatus::Failed, RunReport::status),
            files,
            index_updated,
            usage,
            runs: reports,
            error,
        }
    }

    /// One line for people: "saved 2 memories: a.md, b.md" (empty when nothing was saved).
    pub fn summary(&self) -> String {
        match self.files.len() {
            0 if self.index_updated => "updated the memory index".to_owned(),
            0 => String::new(),
            1 => format!("saved 1 memory: {}", self.files[0]),
            n => format!("saved {n} memories: {}", self.files.join(", ")),
        }
    }
}
