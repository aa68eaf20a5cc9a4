//! `tine plugin ...`: Claude Code's plugin commands (marketplaces, install, list, enable,
//! disable, uninstall), carried out by tine-session's `PluginCommands` as `/plugin` is, in
//! the current directory with `TINE_HOME` and the user's home.

use anyhow::Result;

/// Runs `tine plugin ARGS`; the text to print.
pub(crate) fn run(args: &[String]) -> Result<String> {
    let (cwd, home) = crate::setup::here()?;
    let commands = tine_session::PluginCommands {
        cwd,
        home,
        user_home: tine_session::user_home_from_env(),
    };
    Ok(commands.run(args)?)
}
