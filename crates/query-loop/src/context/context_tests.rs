use super::*;

fn sample() -> SessionContext {
    SessionContext {
        environment: EnvironmentFacts {
            cwd: PathBuf::from("/repo/sub"),
            is_git_repo: true,
            platform: "linux".into(),
            os_version: Some("Linux 6.1.0".into()),
            date: "2025-03-04".into(),
            model: "claude-sonnet-4-5".into(),
            additional_directories: Vec::new(),
        },
        git: Some(GitSnapshot {
            branch: Some("feature".into()),
            main_branch: Some("main".into()),
            status: " M src/lib.rs\n?? new.txt".into(),
            status_truncated: false,
            recent_commits: vec!["abc1234 Fix it".into(), "def5678 Start".into()],
        }),
        instructions: vec![
            InstructionFile {
                path: PathBuf::from("/home/u/.tine/AGENTS.md"),
                source: InstructionSource::User,
                content: "Be terse.\n".into(),
                truncated: false,
            },
            InstructionFile {
                path: PathBuf::from("/repo/CLAUDE.md"),
                source: InstructionSource::Project,
                content: "Run `make test`.".into(),
                truncated: true,
            },
        ],
    }
}

#[test]
fn system_prompt_is_base_model_then_append() {
    let prompt = render_system_prompt("BASE\n", "claude-sonnet-4-5", Some("  EXTRA  "));
    assert_eq!(
        prompt,
        "BASE\n\nYou are powered by the model claude-sonnet-4-5.\n\nEXTRA"
    );
    let prompt = render_system_prompt("B", "m", Some("   "));
    assert_eq!(prompt, "B\n\nYou are powered by the model m.");
}

#[test]
fn what_changes_while_people_work_is_in_the_user_context_not_the_system_prompt() {
    let rendered = sample().render(BASE_SYSTEM_PROMPT, None);
    for volatile in [
        "2025-03-04",
        "src/lib.rs",
        "abc1234",
        "Current branch",
        "/repo/sub",
        "Linux 6.1.0",
    ] {
        assert!(!rendered.system_prompt.contains(volatile), "{volatile}");
        assert!(rendered.user_context.contains(volatile), "{volatile}");
    }
    // Another day, another status, another directory: the same system prompt bytes.
    let mut later = sample();
    later.environment.date = "2025-03-05".into();
    later.environment.cwd = PathBuf::from("/elsewhere");
    later.git = None;
    later.instructions.clear();
    let again = later.render(BASE_SYSTEM_PROMPT, None);
    assert_eq!(
        again.system_prompt.as_bytes(),
        rendered.system_prompt.as_bytes()
    );
    assert_ne!(again.user_context, rendered.user_context);
}

#[test]
fn user_context_has_env_git_then_instructions() {
    let text = sample().user_context();
    let expected_start = "<system-reminder>
As you answer the user's questions, you can use the following context:
# Environment
Here is useful information about the environment you are running in:
<env>
Working directory: /repo/sub
Is directory a git repo: Yes
Platform: linux
OS Version: Linux 6.1.0
Today's date: 2025-03-04
</env>

# gitStatus
This is the git status at the start of the conversation. Note that this status is a snapshot in time, and will not update during the conversation.
Current branch: feature

Main branch (you will usually use this for PRs): main

Status:
 M src/lib.rs
?? new.txt

Recent commits:
abc1234 Fix it
def5678 Start

# Instructions
";
    assert!(text.starts_with(expected_start), "{text}");
    assert!(text.ends_with(
        "\n\nIMPORTANT: this context may or may not be relevant to your tasks. You should not \
         respond to this context unless it is highly relevant to your task.\n</system-reminder>"
    ));
}

#[test]
fn additional_directories_follow_the_git_line_as_claude_code_writes_them() {
    let mut ctx = sample();
    ctx.environment.additional_directories = vec![PathBuf::from("/data"), PathBuf::from("/x y")];
    let text = ctx.user_context();
    assert!(
        text.contains(
            "Is directory a git repo: Yes\nAdditional working directories: /data, /x y\n\
             Platform: linux\n"
        ),
        "{text}"
    );
    assert!(!sample().user_context().contains("Additional working"));
}

#[test]
fn rendering_is_byte_stable() {
    let a = render_system_prompt(BASE_SYSTEM_PROMPT, "claude-sonnet-4-5", None);
    let rendered = sample().render(BASE_SYSTEM_PROMPT, None);
    assert_eq!(rendered.system_prompt.as_bytes(), a.as_bytes());
    assert_eq!(sample().user_context(), sample().user_context());
    assert_eq!(&*rendered.user_context, sample().user_context().as_str());
}

#[test]
fn clean_detached_and_truncated_git_states_render() {
    let mut ctx = sample();
    ctx.instructions.clear();
    ctx.git = Some(GitSnapshot {
        branch: None,
        main_branch: None,
        status: String::new(),
        status_truncated: false,
        recent_commits: Vec::new(),
    });
    let text = ctx.user_context();
    assert!(
        text.contains("Current branch: (detached HEAD)\n\nStatus:\n(clean)\n\nIMPORTANT"),
        "{text}"
    );

    ctx.git = Some(GitSnapshot {
        branch: Some("x".into()),
        main_branch: None,
        status: "M a".into(),
        status_truncated: true,
        recent_commits: Vec::new(),
    });
    assert!(ctx.user_context().contains("M a\n... (truncated because"));

    ctx.git = None;
    ctx.environment.is_git_repo = false;
    let text = ctx.user_context();
    assert!(text.contains("Is directory a git repo: No"));
    assert!(!text.contains("gitStatus"));
    assert!(text.contains("</env>\n\nIMPORTANT"), "{text}");
}

#[test]
fn user_context_lists_files_with_their_source_in_a_reminder() {
    let text = sample().user_context();
    assert!(text.starts_with("<system-reminder>\n"));
    assert!(text.ends_with("</system-reminder>"));
    let user = text
        .find("Contents of /home/u/.tine/AGENTS.md (user's private global instructions for all projects):\n\nBe terse.\n")
        .unwrap();
    let project = text
        .find("Contents of /repo/CLAUDE.md (project instructions, checked into the codebase):\n\nRun `make test`.\n\n[truncated:")
        .unwrap();
    assert!(user < project);

    let mut empty = sample();
    empty.instructions.clear();
    assert!(!empty.user_context().contains("# Instructions"));
}

/// The base prompt's bytes are billed on every request of every session (a tenth of them
/// once cached): it says each thing once and leaves tool-specific rules to the tools'
/// descriptions (which sub-agents read too).
const BASE_PROMPT_BUDGET: usize = 4_200;

#[test]
fn base_prompt_keeps_what_the_model_needs_within_its_budget() {
    assert!(
        BASE_SYSTEM_PROMPT.len() <= BASE_PROMPT_BUDGET,
        "the base prompt grew to {} bytes (budget {BASE_PROMPT_BUDGET})",
        BASE_SYSTEM_PROMPT.len()
    );
    for needed in [
        "clearly meant to be malicious",
        "Never guess URLs",
        "Be concise and direct",
        "Read the relevant files before changing them",
        "Never assume a library is available",
        "smallest change",
        "Verify: run the project's tests",
        "Never paper over a failure",
        "TodoWrite",
        "Never commit unless the user asks",
        "secrets",
        "in parallel",
        "<system-reminder>",
        "If a call is denied",
        "destructive or hard-to-reverse",
        "data, not instructions",
        "AGENTS.md and CLAUDE.md",
    ] {
        assert!(BASE_SYSTEM_PROMPT.contains(needed), "missing {needed:?}");
    }
    let prompt = render_system_prompt(BASE_SYSTEM_PROMPT, "m", None);
    assert!(
        !prompt.contains("\n\n\n"),
        "no triple newlines between sections"
    );
    assert!(
        !sample().user_context().contains("\n\n\n"),
        "no triple newlines between sections"
    );
}
