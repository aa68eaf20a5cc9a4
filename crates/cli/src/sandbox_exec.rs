//! The Bash sandbox on Linux, with Landlock: the launcher (`tine __sandbox --write-root DIR ...
//! [--allow-network] -- PROGRAM ARGS`, which restricts itself and then execs PROGRAM, so the
//! restriction holds for it and everything it starts) and the probe that tells at start-up
//! whether the kernel enforces it. No `unsafe` and no `pre_exec`: the restriction is applied by
//! a process of its own before `exec`, as codex's `codex-linux-sandbox` does.
//!
//! The ruleset: read and execute everywhere; write, create, remove, rename and truncate only
//! beneath the write roots and a few devices (`/dev/null`, ...); with the network off, TCP bind
//! and connect (Landlock ABI 4, Linux 6.7) and UDP (ABI 10) are refused, and so is connecting to
//! a Unix socket outside the write roots (ABI 9). Rights the kernel does not know are dropped
//! (best effort) and reported by the probe.

use std::ffi::OsString;
use std::process::ExitCode;

use tine_tools::sandbox::{SandboxInvocation, parse_launcher_args, restrict_self};

/// Exit status of the launcher when it cannot sandbox or start the command (as a shell's
/// "cannot execute").
const CANNOT_EXECUTE: u8 = 126;

/// `tine __sandbox ARGS`: restrict this process, then exec the command. Never returns on
/// success. A sandbox that cannot be applied is an error, never a silent unsandboxed run: the
/// session checked support at start and warned already if there was none.
pub(crate) fn launcher_main(args: &[OsString]) -> ExitCode {
    let invocation = match parse_launcher_args(args) {
        Ok(invocation) => invocation,
        Err(error) => {
            eprintln!("tine __sandbox: {error}");
            return ExitCode::from(CANNOT_EXECUTE);
        }
    };
    if let Err(reason) = restrict_self(&invocation.policy) {
        eprintln!(
            "tine: the Bash sandbox could not be applied ({reason}); the command did not run. \
             Turn the sandbox off (`sandbox.enabled: false`, or drop --sandbox) to run it \
             unsandboxed"
        );
        return ExitCode::from(CANNOT_EXECUTE);
    }
    exec(invocation)
}

fn exec(invocation: SandboxInvocation) -> ExitCode {
    use std::os::unix::process::CommandExt;
    let error = std::process::Command::new(&invocation.program)
        .args(&invocation.args)
        .exec();
    eprintln!(
        "tine __sandbox: cannot run {}: {error}",
        invocation.program.to_string_lossy()
    );
    ExitCode::from(CANNOT_EXECUTE)
}
