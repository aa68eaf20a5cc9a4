//! The options a question of the permission dialog offers, by what they answer: run it once,
//! always (the request's rule saved), or no. A plan approval and a stuck model label and order
//! them their own way (`plan_approval`, `permission`).

/// One option of the dialog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Choice {
    Once,
    Always,
    No,
}
