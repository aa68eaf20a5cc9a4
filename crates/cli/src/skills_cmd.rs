//! `tine skills list`: the skills a session here would have, where each is from, and the ones
//! skipped (with why), read the way a session reads them.

use anyhow::Result;
use tine_session::skills;

/// `tine skills [list]`: the skills here and where each is from.
pub(crate) fn run() -> Result<String> {
    let (cwd, home) = crate::setup::here()?;
    let user_home = tine_session::user_home_from_env();
    let (found, warnings) = skills::load(&skills::skill_dirs(&cwd, &home, user_home.as_deref()));
    Ok(skills::list_text(&found, &warnings))
}
