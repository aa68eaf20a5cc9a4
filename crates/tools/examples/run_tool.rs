//! Run real tools behind the permission engine: each call is judged first (deny and ask rules,
//! the tool's own check, the mode) and runs only when allowed. Write creates a file in
//! `acceptEdits` but only asks in `default`; Bash runs a read-only command in both and is
//! refused for `rm` by a deny rule; Read then shows what Write wrote.
//!
//!     cargo run -p tine-tools --example run_tool

use serde_json::{Value, json};
use tine_permissions::{
    PermissionContext, PermissionDecision, PermissionMode, PermissionQuery, PermissionRule,
    RuleBehavior, RuleSource,
};
use tine_tools::{BashTool, ReadTool, Tool, ToolContext, WriteTool, run_tool};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let project = tempfile::tempdir()?;
    let cwd = project.path().canonicalize()?;
    let ctx = ToolContext::new(&cwd);

    let calls: Vec<(Box<dyn Tool>, Value)> = vec![
        (
            Box::new(WriteTool),
            json!({"file_path": cwd.join("notes.md"), "content": "# Notes\nship it\n"}),
        ),
        (
            Box::new(BashTool),
            json!({"command": "ls -1 && wc -l notes.md"}),
        ),
        (Box::new(BashTool), json!({"command": "rm -rf ./*"})),
        (
            Box::new(ReadTool),
            json!({"file_path": cwd.join("notes.md")}),
        ),
    ];

    for mode in [PermissionMode::Default, PermissionMode::AcceptEdits] {
        let mut permissions = PermissionContext::new(mode, &cwd);
        let deny: PermissionRule = "Bash(rm:*)".parse()?;
        permissions.add_session_rule(deny, RuleBehavior::Deny, RuleSource::CliArg);

        println!("== mode {}", mode.as_str());
        for (tool, input) in &calls {
            let target = tool.permission_target(input, &ctx);
            let verdict = tool.check_permissions(input, &ctx);
            let request = PermissionQuery {
                tool: tool.name(),
                target: &target,
                verdict: &verdict,
                is_read_only: tool.is_read_only(input),
            };
            print!("{}: ", tool.render_call(input));
            match permissions.decide(&request) {
                PermissionDecision::Allow { .. } => {
                    let output = run_tool(tool.as_ref(), input.clone(), &ctx).await;
                    let status = if output.is_error { "error" } else { "ok" };
                    println!("allowed, ran ({status}):");
                    for line in output.content.lines().take(4) {
                        println!("    {line}");
                    }
                }
                PermissionDecision::Ask { message, .. } => {
                    println!("would ask a person ({message}); not run")
                }
                PermissionDecision::Deny { message, .. } => println!("denied: {message}"),
            }
        }
    }
    Ok(())
}
