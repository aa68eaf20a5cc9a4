//! `--max-budget-usd`: the most a session may spend. The loop checks before each request
//! (where `--max-turns` is checked), so a turn over the budget ends between requests: every
//! reply it got is kept with its tool results, and the transcript stays whole.

use std::sync::Arc;

use crate::transition::Terminal;

/// The session's spending limit, given to the engine once
/// ([`crate::QueryEngine::set_spending_limit`]).
#[derive(Clone)]
pub struct SpendingLimit {
    /// The limit, in US dollars: once more than this is spent, no further request is made.
    pub limit_usd: f64,
    /// What the session spent outside its main thread so far (forks, side queries), asked at
    /// each check, since background work spends while a turn runs.
    pub spent_elsewhere: Arc<dyn Fn() -> f64 + Send + Sync>,
}

impl std::fmt::Debug for SpendingLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpendingLimit")
            .field("limit_usd", &self.limit_usd)
            .finish_non_exhaustive()
    }
}

/// One run's view of the limit: what the main thread had spent before the run began.
#[derive(Debug, Clone)]
pub struct RunBudget {
    /// The session's limit.
    pub limit: SpendingLimit,
    /// The main thread's spending before this run (earlier turns).
    pub spent_before: f64,
}

impl RunBudget {
    /// The terminal of a run that has spent `run_cost_usd` itself, when the session is now
    /// over its limit.
    pub(crate) fn exceeded(&self, run_cost_usd: f64) -> Option<Terminal> {
        let spent = self.spent_before + run_cost_usd + (self.limit.spent_elsewhere)();
        (spent > self.limit.limit_usd).then(|| Terminal::MaxBudget {
            spent_micro_usd: micro_usd(spent),
            limit_micro_usd: micro_usd(self.limit.limit_usd),
        })
    }
}

/// Dollars as whole millionths (what `Terminal` carries, so it stays `Eq`).
fn micro_usd(usd: f64) -> u64 {
    // A float-to-int `as` saturates (negative and NaN to 0): no panic, no wrap.
    (usd * 1_000_000.0).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(limit: f64, before: f64, elsewhere: f64) -> RunBudget {
        RunBudget {
            limit: SpendingLimit {
                limit_usd: limit,
                spent_elsewhere: Arc::new(move || elsewhere),
            },
            spent_before: before,
        }
    }

    #[test]
    fn the_limit_counts_earlier_turns_this_run_and_background_work() {
        assert_eq!(budget(1.0, 0.2, 0.3).exceeded(0.4), None);
        assert_eq!(budget(1.0, 0.5, 0.0).exceeded(0.5), None, "at the limit");
        assert_eq!(
            budget(1.0, 0.2, 0.3).exceeded(0.6),
            Some(Terminal::MaxBudget {
                spent_micro_usd: 1_100_000,
                limit_micro_usd: 1_000_000,
            })
        );
        assert!(budget(0.0, 0.0, 0.0).exceeded(0.000_001).is_some());
        let over = budget(1.0, 0.2, 0.3).exceeded(0.6).unwrap();
        assert_eq!(over.subtype(), "error_max_budget_usd");
        assert!(
            over.describe().contains("spent $1.1000 of $1.0000"),
            "{}",
            over.describe()
        );
    }
}
