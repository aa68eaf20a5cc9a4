//! Why a compaction failed.

use tine_fork_runtime::ForkError;
use tine_query_loop::CompactError;

/// Why a compaction failed.
#[derive(Debug, thiserror::Error)]
pub enum CompactionError {
    /// Nothing to compact: the conversation is empty.
    #[error("there is nothing to compact yet: the conversation is empty")]
    Empty,
    /// The compaction was cancelled.
    #[error("compaction was cancelled")]
    Cancelled,
    /// The summary fork could not run.
    #[error(transparent)]
    Fork(#[from] ForkError),
    /// Even with the oldest rounds dropped, the summary request was too long.
    #[error(
        "the conversation is too long to summarize even without its {rounds} oldest rounds \
         ({attempts} attempts); start a new session (`tine -p`) and give it what matters"
    )]
    TooLong {
        /// Requests tried.
        attempts: u32,
        /// Oldest rounds dropped on the last try.
        rounds: usize,
    },
    /// The summary request failed for another reason.
    #[error("the summary request failed: {0}")]
    Model(String),
    /// Too little came before the current prompt for a summary to shrink anything (the prompt
    /// itself is always kept whole).
    #[error(
        "there is too little to summarize (about {tokens} tokens, the current prompt kept whole): \
         a summary would not make the conversation smaller"
    )]
    NothingToSummarize {
        /// The estimated tokens of the history.
        tokens: u64,
    },
    /// The new history would not have been smaller than the old one; it was not used.
    #[error(
        "the summary would not have made the conversation smaller (about {before} -> {after} \
         tokens), so it was not used"
    )]
    NoGain {
        /// The history's estimated tokens before.
        before: u64,
        /// What the new history would have been.
        after: u64,
    },
    /// The summary came back without text.
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
