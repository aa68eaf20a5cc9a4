//! The plan-approval dialog: an ExitPlanMode request is a permission request whose target is
//! the plan; its options are Claude Code's, in its order: "Yes, and auto-accept edits" first
//! (Enter), then "Yes, and manually approve edits", then "No, keep planning" (with feedback).
//! The session switches the mode: the `Always` answer to acceptEdits, `Once` to default.

use crate::choice::Choice;

/// The tool whose requests are plan approvals.
const EXIT_PLAN_MODE: &str = "ExitPlanMode";

/// The dialog's title for a plan approval.
pub(crate) fn title(tool: &str) -> Option<String> {
    (tool == EXIT_PLAN_MODE).then(|| "Ready to code? Here is the plan:".to_owned())
}

/// The question above a plan approval's options.
pub(crate) fn question(tool: &str) -> Option<&'static str> {
    (tool == EXIT_PLAN_MODE).then_some("Would you like to proceed?")
}

/// A plan approval's options, in the order shown (`None`: not one).
pub(crate) fn choices(tool: &str) -> Option<Vec<Choice>> {
    (tool == EXIT_PLAN_MODE).then(|| vec![Choice::Always, Choice::Once, Choice::No])
}

/// An option's label in a plan approval (`None`: not one).
pub(crate) fn label(tool: &str, choice: Choice) -> Option<String> {
    if tool != EXIT_PLAN_MODE {
        return None;
    }
    Some(
        match choice {
            Choice::Always => "Yes, and auto-accept edits",
            Choice::Once => "Yes, and manually approve edits",
            Choice::No => "No, keep planning (and tell tine what to change)",
        }
        .to_owned(),
    )
}
