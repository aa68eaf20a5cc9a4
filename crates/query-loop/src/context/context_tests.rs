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
fn system_prompt_has_base_env_git_then_append() {
    let prompt = render_system_prompt("BASE\n", &sample(), Some("  EXTRA  "));
    let expected = "BASE

Here is useful information about the environment you are running in:
<env>
Working directory: /repo/sub
Is directory a git repo: Yes
Platform: linux
OS Version: Linux 6.1.0
Today's date: 2025-03-04
</env>
You are powered by the model claude-sonnet-4-5.

gitStatus: This is the git status at the start of the conversation. Note that this status is a snapshot in time, and will not update during the conversation.
Current branch: feature

Main branch (you will usually use this for PRs): main

Status:
 M src/lib.rs
?? new.txt

Recent commits:
abc1234 Fix it
def5678 Start

EXTRA";
    assert_eq!(prompt, expected);
}

#[test]
fn rendering_is_byte_stable() {
    let a = render_system_prompt(BASE_SYSTEM_PROMPT, &sample(), None);
    let b = render_system_prompt(BASE_SYSTEM_PROMPT, &sample().clone(), None);
    assert_eq!(a.as_bytes(), b.as_bytes());
    assert_eq!(sample().user_context(), sample().user_context());
    let rendered = sample().render(BASE_SYSTEM_PROMPT, None);
    assert_eq!(&*rendered.system_prompt, a.as_str());
    assert_eq!(
        rendered.user_context.as_deref(),
        sample().user_context().as_deref()
    );
}

#[test]
fn clean_detached_and_truncated_git_states_render() {
    let mut ctx = sample();
    ctx.git = Some(GitSnapshot {
        branch: None,
        main_branch: None,
        status: String::new(),
        status_truncated: false,
        recent_commits: Vec::new(),
    });
    let prompt = render_system_prompt("B", &ctx, None);
    assert!(prompt.ends_with("Current branch: (detached HEAD)\n\nStatus:\n(clean)"));

    ctx.git = Some(GitSnapshot {
        branch: Some("x".into()),
        main_branch: None,
        status: "M a".into(),
        status_truncated: true,
        recent_commits: Vec::new(),
    });
    assert!(render_system_prompt("B", &ctx, None).contains("M a\n... (truncated because"));

    ctx.git = None;
    ctx.environment.is_git_repo = false;
    let prompt = render_system_prompt("B", &ctx, Some("   "));
    assert!(prompt.ends_with("You are powered by the model claude-sonnet-4-5."));
    assert!(prompt.contains("Is directory a git repo: No"));
}

#[test]
fn user_context_lists_files_with_their_source_in_a_reminder() {
    let text = sample().user_context().unwrap();
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
    assert_eq!(empty.user_context(), None);
}

#[test]
fn base_prompt_is_substantial_and_has_no_trailing_blank_lines_issue() {
    assert!(BASE_SYSTEM_PROMPT.lines().count() >= 40);
    assert!(BASE_SYSTEM_PROMPT.contains("Read the relevant files before changing them"));
    let prompt = render_system_prompt(BASE_SYSTEM_PROMPT, &sample(), None);
    assert!(
        !prompt.contains("\n\n\n"),
        "no triple newlines between sections"
    );
}
