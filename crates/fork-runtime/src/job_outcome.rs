//! What a background job reports when it finishes: [`JobOutcome`], a line for people and the
//! job's own typed detail. The detail is the job's type (what extraction saved, what Magic Docs
//! updated, what a dream did), read back as that type with [`JobOutcome::detail`]; its JSON
//! ([`JobOutcome::data`]) is what `stream-json` prints. This crate does not know the jobs'
//! types: any serializable type is a [`JobDetail`].

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

/// A job's typed report. Every serializable type is one; its JSON is its serialization.
pub trait JobDetail: Any + Send + Sync {
    /// The detail as JSON, for `stream-json` and logs.
    fn to_json(&self) -> Value;
}

impl<T: Serialize + Any + Send + Sync> JobDetail for T {
    fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// A job's outcome, for the UI ("saved 2 memories: project_stack.md, ...") and the typed
/// detail behind it.
#[derive(Clone)]
pub struct JobOutcome {
    /// One line for people; empty when the job had nothing to report.
    pub summary: String,
    detail: Arc<dyn JobDetail>,
}

impl JobOutcome {
    /// An outcome saying `summary`, with `detail` behind it.
    pub fn new(summary: impl Into<String>, detail: impl JobDetail) -> Self {
        Self {
            summary: summary.into(),
            detail: Arc::new(detail),
        }
    }

    /// A job that did not run this time, and why (`{"status": "<status>"}`, no summary).
    pub fn not_run(status: &'static str) -> Self {
        Self::new(String::new(), NotRun { status })
    }

    /// The detail as the type the job reported, when it is a `T`.
    pub fn detail<T: JobDetail>(&self) -> Option<&T> {
        let detail: &dyn Any = &*self.detail;
        detail.downcast_ref()
    }

    /// The detail as JSON (what `stream-json` prints as the job's `data`).
    pub fn data(&self) -> Value {
        self.detail.to_json()
    }
}

impl fmt::Debug for JobOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JobOutcome")
            .field("summary", &self.summary)
            .field("data", &self.data())
            .finish()
    }
}

/// Two outcomes are equal when they say the same and their details serialize the same.
impl PartialEq for JobOutcome {
    fn eq(&self, other: &Self) -> bool {
        self.summary == other.summary && self.data() == other.data()
    }
}

/// The detail of a job that did not run: why, as its status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NotRun {
    /// Why (`stashed`: a run in progress takes the trigger as its trailing run; `not_due`).
    pub status: &'static str,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[derive(Debug, PartialEq, Serialize)]
    struct Saved {
        files: Vec<&'static str>,
    }

    #[test]
    fn the_detail_reads_back_as_its_type_and_prints_as_its_json() {
        let outcome = JobOutcome::new(
            "saved 1 memory",
            Saved {
                files: vec!["a.md"],
            },
        );
        assert_eq!(
            outcome.detail::<Saved>(),
            Some(&Saved {
                files: vec!["a.md"]
            })
        );
        assert_eq!(outcome.detail::<NotRun>(), None);
        assert_eq!(outcome.data(), json!({"files": ["a.md"]}));
        let stashed = JobOutcome::not_run("stashed");
        assert_eq!(stashed.data(), json!({"status": "stashed"}));
        assert_eq!(stashed.summary, "");
        assert_eq!(stashed, JobOutcome::new("", json!({"status": "stashed"})));
    }
}
