//! Why a compaction failed.

use tine_fork_runtime::ForkError;
use tine_query_loop::CompactError;

#[derive(Debug, thiserror::Error)]
pub enum CompactionError {
    #[error("there is nothing to compact yet: the conversation is empty")]
    Empty,
    #[error("compaction was cancelled")]
    Cancelled,
    #[error(transparent)]
    Fork(#[from] ForkError),
    #[error(
        "the conversation is too long to summarize even without its {rounds} oldest rounds \
         ({attempts} attempts); start a new session (`tine -p`) and give it what matters"
    )]
    TooLong { attempts: u32, rounds: usize },
    #[error("the summary request failed: {0}")]
    Model(String),
    #[error(
        "the summary came back empty (its reply was cut at the output limit or held only tool \
         calls); try `/compact` again, with a focus to keep it short"
    )]
    EmptySummary,
}

impl From<CompactionError> for CompactError {
    fn from(error: CompactionError) -> Self {
        match error {
            CompactionError::Empty => Self::Empty,
            CompactionError::Cancelled => Self::Cancelled,
            other => Self::Failed(other.to_string()),
        }
    }
}
