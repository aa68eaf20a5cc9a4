//! The options a question of the permission dialog offers, by what they answer: run it once,
//! always (what the request offers: its rules saved, or the session switched to acceptEdits),
//! or no. A plan approval and a stuck model label and order
//! them their own way (`plan_approval`, `permission`).

/// One option of the dialog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Choice {
    Once,
    Always,
    No,
}
