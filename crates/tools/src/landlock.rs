//! Landlock, the Linux sandbox of Bash: [`restrict_self`] applies a [`Rules`] set to the
//! calling thread (the launcher, `tine __sandbox`, does it and then execs the command, so the
//! restriction holds for it and everything it starts), and [`probe`] tells at start-up whether
//! the kernel enforces it. No `unsafe` and no `pre_exec`: the restriction is applied by a
//! process of its own before `exec`, as codex's `codex-linux-sandbox` does.
//!
//! The ruleset: read and execute everywhere; write, create, remove, rename and truncate only
//! beneath the write roots and a few devices (`/dev/null`, ...); with the network off, TCP bind
//! and connect (Landlock ABI 4, Linux 6.7) and UDP (ABI 10) are refused, and so is connecting to
//! a Unix socket outside the write roots (ABI 9). Rights the kernel does not know are dropped
//! (best effort) and reported by the probe.

use std::fmt;

use std::path::PathBuf;

/// What the sandbox allows: writes beneath `write_roots` (and a few devices), and the network
/// or not (the launcher's `SandboxPolicy`, as Landlock takes it).
#[derive(Debug, Clone, Default)]
pub(crate) struct Rules {
    /// Where writes are allowed.
    pub write_roots: Vec<PathBuf>,
    /// Whether TCP, UDP and outside Unix sockets are allowed.
    pub allow_network: bool,
}

/// What the running kernel offers the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxSupport {
    /// Landlock restricts writes; `network` says whether it restricts TCP too (ABI 4+).
    Available {
        /// The kernel's Landlock ABI.
        abi: u32,
        /// Whether it restricts TCP too.
        network: bool,
    },
    /// No Landlock here (too old a kernel, not enabled, or a container forbids it).
    Unavailable {
        /// Why, and what to do about it.
        reason: String,
    },
}

impl SandboxSupport {
    /// Whether the sandbox can be enforced here.
    pub fn is_available(&self) -> bool {
        matches!(self, SandboxSupport::Available { .. })
    }
}

impl fmt::Display for SandboxSupport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SandboxSupport::Available { abi, network: true } => write!(
                f,
                "Landlock ABI {abi}: writes limited to the allowed directories, TCP refused \
                 unless the network is allowed"
            ),
            SandboxSupport::Available {
                abi,
                network: false,
            } => write!(
                f,
                "Landlock ABI {abi}: writes limited to the allowed directories; the network \
                 cannot be restricted (needs ABI 4, Linux 6.7)"
            ),
            SandboxSupport::Unavailable { reason } => write!(f, "unavailable: {reason}"),
        }
    }
}

/// Restricts the calling thread (and what it execs) to `policy`; an error when the kernel
/// enforces none of it.
pub(crate) fn restrict_self(policy: &Rules) -> Result<(), String> {
    imp::restrict_self(policy)
}

/// Whether this kernel enforces the sandbox: the same kind of ruleset the launcher applies is
/// applied for real, on a thread of its own that ends right after (Landlock restricts only the
/// calling thread, so the rest of tine is untouched).
pub fn probe() -> SandboxSupport {
    match std::thread::Builder::new()
        .name("tine-sandbox-probe".to_owned())
        .spawn(imp::probe_on_this_thread)
    {
        Ok(thread) => thread
            .join()
            .unwrap_or_else(|_| SandboxSupport::Unavailable {
                reason: "the Landlock probe failed".to_owned(),
            }),
        Err(error) => SandboxSupport::Unavailable {
            reason: format!("cannot start the Landlock probe: {error}"),
        },
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use landlock::{
        ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus,
        RestrictionStatus, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetError, RulesetStatus,
        path_beneath_rules,
    };

    use super::{Rules as SandboxPolicy, SandboxSupport};

    /// The newest ABI whose rights we handle; the kernel's own may be older (best effort).
    const NEWEST: ABI = ABI::V10;

    /// Writable whatever the roots (programs write to these as a matter of course).
    const DEVICES: &[&str] = &[
        "/dev/null",
        "/dev/zero",
        "/dev/full",
        "/dev/tty",
        "/dev/pts",
        "/dev/shm",
    ];

    fn apply(policy: &SandboxPolicy) -> Result<RestrictionStatus, RulesetError> {
        let all = AccessFs::from_all(NEWEST);
        let mut read = AccessFs::from_read(NEWEST);
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(all)?;
        if policy.allow_network {
            // Pathname Unix sockets are a kind of network too (ABI 9 handles them).
            read |= AccessFs::ResolveUnix;
        } else {
            ruleset = ruleset.handle_access(AccessNet::from_all(NEWEST))?;
        }
        ruleset
            .create()?
            .add_rules(path_beneath_rules(["/"], read))?
            .add_rules(path_beneath_rules(DEVICES, all))?
            .add_rules(path_beneath_rules(&policy.write_roots, all))?
            .restrict_self()
    }

    pub(super) fn restrict_self(policy: &SandboxPolicy) -> Result<(), String> {
        let status = apply(policy).map_err(|e| e.to_string())?;
        match status.ruleset {
            RulesetStatus::FullyEnforced | RulesetStatus::PartiallyEnforced => Ok(()),
            RulesetStatus::NotEnforced => Err(unavailable_reason(status.landlock)),
        }
    }

    pub(super) fn probe_on_this_thread() -> SandboxSupport {
        let policy = SandboxPolicy {
            write_roots: Vec::new(),
            allow_network: false,
        };
        match apply(&policy) {
            Err(error) => SandboxSupport::Unavailable {
                reason: format!("Landlock refused the ruleset: {error}"),
            },
            Ok(status) => match (status.ruleset, status.landlock) {
                (RulesetStatus::NotEnforced, landlock) => SandboxSupport::Unavailable {
                    reason: unavailable_reason(landlock),
                },
                (_, LandlockStatus::Available { effective_abi, .. }) => {
                    let abi = abi_number(effective_abi);
                    SandboxSupport::Available {
                        abi,
                        network: abi >= 4,
                    }
                }
                (_, landlock) => SandboxSupport::Unavailable {
                    reason: unavailable_reason(landlock),
                },
            },
        }
    }

    fn abi_number(abi: ABI) -> u32 {
        // `ABI` is non-exhaustive: its Display is the number ("7").
        abi.to_string().parse().unwrap_or(0)
    }

    fn unavailable_reason(landlock: LandlockStatus) -> String {
        match landlock {
            LandlockStatus::NotEnabled => "the kernel has Landlock but it is not enabled (add \
                `landlock` to the `lsm=` boot parameter)"
                .to_owned(),
            LandlockStatus::NotImplemented => "the kernel has no Landlock (it needs Linux 5.13+ \
                built with CONFIG_SECURITY_LANDLOCK), or a container's seccomp policy hides it"
                .to_owned(),
            LandlockStatus::Available { effective_abi, .. } => {
                format!("Landlock ABI {effective_abi} enforced none of the ruleset")
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::{Rules as SandboxPolicy, SandboxSupport};

    const NOT_LINUX: &str = "the Bash sandbox uses Landlock, which only Linux has";

    pub(super) fn restrict_self(_policy: &SandboxPolicy) -> Result<(), String> {
        Err(NOT_LINUX.to_owned())
    }

    pub(super) fn probe_on_this_thread() -> SandboxSupport {
        SandboxSupport::Unavailable {
            reason: NOT_LINUX.to_owned(),
        }
    }
}
