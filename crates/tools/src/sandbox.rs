//! The OS sandbox a session asked for, as the tools see it: which program applies it and what
//! it allows. Bash (and its background tasks) start their shell through that program instead
//! of directly: `LAUNCHER __sandbox --write-root DIR ... [--allow-network] -- /bin/bash -c ...`.
//! The launcher (the `tine` binary itself, see `crates/cli/src/sandbox_exec.rs`) restricts
//! itself with Landlock and then execs the shell, so the restriction holds for the shell and
//! everything it starts. This crate never applies it: it only knows the argument protocol,
//! kept here in one place for both sides.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};

/// The hidden subcommand of the launcher.
pub const SANDBOX_SUBCOMMAND: &str = "__sandbox";

pub use crate::landlock::{SandboxSupport, probe};

/// What a sandboxed command may do: read everywhere, write only beneath `write_roots`, and
/// open network connections only when `allow_network`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// The directories a command may write beneath.
    pub write_roots: Vec<PathBuf>,
    /// Whether a command may open network connections.
    pub allow_network: bool,
}

/// The session's Bash sandbox: the launcher program and the policy it applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BashSandbox {
    launcher: PathBuf,
    policy: SandboxPolicy,
    /// Whether the kernel really refuses connections when the policy does not allow them
    /// (Landlock's network rules need ABI 4).
    network_enforced: bool,
}

impl BashSandbox {
    /// A sandbox that runs commands through `launcher` under `policy`.
    pub fn new(launcher: impl Into<PathBuf>, policy: SandboxPolicy) -> Self {
        Self {
            launcher: launcher.into(),
            policy,
            network_enforced: true,
        }
    }

    /// The kernel cannot refuse connections here: only writes are restricted.
    pub fn network_not_enforced(mut self) -> Self {
        self.network_enforced = false;
        self
    }

    /// What the model is told about the sandbox, appended to the Bash tool's description for
    /// the whole session (so the tool array stays the same bytes on every request). It names
    /// no path: the tool array is then the same for every project, and so is its cache.
    pub fn model_note(&self) -> String {
        let network = if self.policy.allow_network || !self.network_enforced {
            ""
        } else {
            " Network connections are refused too."
        };
        format!(
            "\n- Sandbox: in this session every command runs in an OS sandbox. It may read \
             anywhere but write only inside the project, the temporary directories and the \
             directories the settings allow (sandbox.filesystem.allowWrite); a write elsewhere \
             fails with \"Permission denied\".{network} Do not try to get around it: say what \
             could not be written and why."
        )
    }

    /// The program that applies the sandbox and then execs the command.
    pub fn launcher(&self) -> &Path {
        &self.launcher
    }

    /// What a sandboxed command may do.
    pub fn policy(&self) -> &SandboxPolicy {
        &self.policy
    }

    /// The launcher's arguments up to and including `--`; the command and its arguments follow.
    pub fn launcher_args(&self) -> Vec<OsString> {
        let mut args = vec![OsString::from(SANDBOX_SUBCOMMAND)];
        for root in &self.policy.write_roots {
            args.push("--write-root".into());
            args.push(root.clone().into_os_string());
        }
        if self.policy.allow_network {
            args.push("--allow-network".into());
        }
        args.push("--".into());
        args
    }
}

/// Why the launcher's arguments could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxArgsError {
    /// `--write-root` without its directory.
    #[error("`--write-root` needs a directory")]
    MissingRoot,
    /// An option the launcher does not know.
    #[error("unknown sandbox option `{0}`")]
    UnknownOption(String),
    /// Nothing to run after `--`.
    #[error("no command after `--`")]
    MissingCommand,
}

/// A parsed launcher invocation: the policy, and the command to exec under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxInvocation {
    /// The policy to apply.
    pub policy: SandboxPolicy,
    /// The program to exec under it.
    pub program: OsString,
    /// The program's arguments.
    pub args: Vec<OsString>,
}

impl fmt::Display for SandboxPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let roots: Vec<String> = self
            .write_roots
            .iter()
            .map(|r| r.display().to_string())
            .collect();
        write!(
            f,
            "writes beneath {}; network {}",
            if roots.is_empty() {
                "nothing".to_owned()
            } else {
                roots.join(", ")
            },
            if self.allow_network { "on" } else { "off" }
        )
    }
}

/// Reads the launcher's arguments (those after [`SANDBOX_SUBCOMMAND`]).
pub fn parse_launcher_args(args: &[OsString]) -> Result<SandboxInvocation, SandboxArgsError> {
    let mut policy = SandboxPolicy {
        write_roots: Vec::new(),
        allow_network: false,
    };
    let mut rest = args.iter();
    loop {
        let Some(arg) = rest.next() else {
            return Err(SandboxArgsError::MissingCommand);
        };
        match arg.to_str() {
            Some("--") => break,
            Some("--write-root") => {
                let root = rest.next().ok_or(SandboxArgsError::MissingRoot)?;
                policy.write_roots.push(PathBuf::from(root));
            }
            Some("--allow-network") => policy.allow_network = true,
            _ => {
                return Err(SandboxArgsError::UnknownOption(
                    OsStr::new(arg).to_string_lossy().into_owned(),
                ));
            }
        }
    }
    let program = rest.next().ok_or(SandboxArgsError::MissingCommand)?.clone();
    Ok(SandboxInvocation {
        policy,
        program,
        args: rest.cloned().collect(),
    })
}

/// Restricts the calling thread (and what it execs) to `policy` with Landlock (the launcher
/// does it, then execs the command); an error when the kernel enforces none of it.
pub fn restrict_self(policy: &SandboxPolicy) -> Result<(), String> {
    crate::landlock::restrict_self(&crate::landlock::Rules {
        write_roots: policy.write_roots.clone(),
        allow_network: policy.allow_network,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launcher_args_round_trip() {
        let sandbox = BashSandbox::new(
            "/usr/bin/tine",
            SandboxPolicy {
                write_roots: vec![PathBuf::from("/work/p"), PathBuf::from("/tmp")],
                allow_network: true,
            },
        );
        let mut args = sandbox.launcher_args();
        assert_eq!(args[0], SANDBOX_SUBCOMMAND);
        args.extend(["/bin/bash", "-c", "echo hi"].map(OsString::from));
        let parsed = parse_launcher_args(&args[1..]).unwrap();
        assert_eq!(&parsed.policy, sandbox.policy());
        assert_eq!(parsed.program, "/bin/bash");
        assert_eq!(parsed.args, vec!["-c", "echo hi"]);
    }

    #[test]
    fn a_command_is_required_and_options_are_checked() {
        let args = |list: &[&str]| list.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            parse_launcher_args(&args(&["--write-root", "/x", "--"])),
            Err(SandboxArgsError::MissingCommand)
        );
        assert_eq!(
            parse_launcher_args(&args(&["--write-root"])),
            Err(SandboxArgsError::MissingRoot)
        );
        assert_eq!(
            parse_launcher_args(&args(&["--no-such", "--", "sh"])),
            Err(SandboxArgsError::UnknownOption("--no-such".into()))
        );
        // Options after `--` belong to the command.
        let parsed = parse_launcher_args(&args(&["--", "sh", "--allow-network"])).unwrap();
        assert!(!parsed.policy.allow_network);
        assert_eq!(parsed.args, vec!["--allow-network"]);
    }
}
