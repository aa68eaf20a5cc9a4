//! The plan-approval dialog: an ExitPlanMode request is a permission request whose summary is
//! the plan; its options say what approving does to the permission mode (the session switches
//! it: option 1 to default, option 2 to acceptEdits; "No" keeps planning, with feedback).

use crate::permission::Choice;

/// The tool whose requests are plan approvals.
const EXIT_PLAN_MODE: &str = "ExitPlanMode";

/// The dialog's title for a plan approval.
pub(crate) fn title(tool: &str) -> Option<String> {
    (tool == EXIT_PLAN_MODE).then(|| "Ready to code? Here is the plan:".to_owned())
}

/// An option's label in a plan approval (`None`: not one).
pub(crate) fn label(tool: &str, choice: Choice) -> Option<String> {
    if tool != EXIT_PLAN_MODE {
        return None;
    }
    Some(
        match choice {
            Choice::Once => "Yes, and manually approve edits",
            Choice::Always => "Yes, and auto-accept edits",
            Choice::No => "No, keep planning (and tell tine what to change)",
        }
        .to_owned(),
    )
}
