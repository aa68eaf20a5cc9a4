//! Ask the permission engine about a few calls in each permission mode: a read-only Bash
//! line, a compound line one of whose parts is not allowed, an edit inside the project, an
//! edit under `.git/`, and a read outside the project.
//!
//!     cargo run -p tine-permissions --example decide

use std::path::Path;

use tine_permissions::{
    PermissionContext, PermissionDecision, PermissionMode, PermissionQuery, PermissionRule,
    PermissionTarget, RuleBehavior, RuleSource, ToolVerdict,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let project = tempfile::tempdir()?;
    let cwd = project.path();
    std::fs::create_dir(cwd.join(".git"))?;

    let calls = [
        ("Bash", bash(cwd, "grep -rn TODO src | wc -l"), true),
        ("Bash", bash(cwd, "cargo test && rm -rf target"), false),
        ("Edit", write(&cwd.join("src/lib.rs")), false),
        ("Edit", write(&cwd.join(".git/config")), false),
        ("Read", read(Path::new("/etc/hostname")), true),
    ];
    let modes = [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::DontAsk,
        PermissionMode::BypassPermissions,
    ];

    for mode in modes {
        let mut context = PermissionContext::new(mode, cwd);
        // As `--allowedTools "Bash(cargo test:*)"` would add it.
        let rule: PermissionRule = "Bash(cargo test:*)".parse()?;
        context.add_session_rule(rule, RuleBehavior::Allow, RuleSource::CliArg);

        println!("mode {}:", mode.as_str());
        for (tool, target, is_read_only) in &calls {
            let request = PermissionQuery {
                tool,
                target,
                verdict: &ToolVerdict::Passthrough,
                is_read_only: *is_read_only,
            };
            let decision = context.decide(&request);
            println!(
                "  {:<5} {:<48} {}",
                tool,
                describe(target),
                verdict(&decision)
            );
        }
    }
    Ok(())
}

fn bash(cwd: &Path, command: &str) -> PermissionTarget {
    PermissionTarget::Bash {
        command: command.to_string(),
        cwd: cwd.to_path_buf(),
    }
}

fn write(path: &Path) -> PermissionTarget {
    PermissionTarget::FileWrite {
        path: path.to_path_buf(),
    }
}

fn read(path: &Path) -> PermissionTarget {
    PermissionTarget::FileRead {
        path: path.to_path_buf(),
    }
}

fn describe(target: &PermissionTarget) -> String {
    match target {
        PermissionTarget::Bash { command, .. } => command.clone(),
        PermissionTarget::FileRead { path } | PermissionTarget::FileWrite { path } => {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let parent = path.parent().and_then(Path::file_name);
            match (parent, name) {
                (Some(parent), Some(name)) => format!("{}/{name}", parent.to_string_lossy()),
                _ => path.display().to_string(),
            }
        }
        PermissionTarget::Url { url } => url.clone(),
        PermissionTarget::Other { content } => content.clone().unwrap_or_default(),
    }
}

fn verdict(decision: &PermissionDecision) -> String {
    match decision {
        PermissionDecision::Allow { reason } => format!("allow ({reason:?})"),
        PermissionDecision::Ask { message, .. } => format!("ask: {message}"),
        PermissionDecision::Deny { message, .. } => format!("deny: {message}"),
    }
}
