//! What the built-in tools tell the model. Every byte of a tool's definition is sent on every
//! request of every session (a tenth of it once cached), so the descriptions say each rule
//! once, briefly; these tests keep the rules the model needs and the array's size in check.

use tine_tools::builtin_tools;

fn definition(name: &str) -> (String, String) {
    let tool = builtin_tools()
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no built-in {name}"));
    (tool.description(), tool.input_schema().to_string())
}

/// The most bytes the built-ins' names, descriptions and schemas may have together (about
/// 17 KB before the trim of issue 35, 10.2 KB after).
const BUILTINS_BUDGET: usize = 10_500;

#[test]
fn the_builtins_stay_within_their_budget() {
    let total: usize = builtin_tools()
        .iter()
        .map(|t| t.name().len() + t.description().len() + t.input_schema().to_string().len())
        .sum();
    assert!(
        total <= BUILTINS_BUDGET,
        "the built-in tools grew to {total} bytes (budget {BUILTINS_BUDGET})"
    );
}

#[test]
fn each_tool_keeps_the_rules_the_model_needs() {
    let needs: &[(&str, &[&str])] = &[
        (
            "Bash",
            &[
                "persistent shell",
                "Glob",
                "Grep",
                "Read",
                "Quote paths that contain spaces",
                "120000",
                "600000",
                "30000",
                "never run interactive commands",
                "run_in_background",
                "BashOutput",
                "KillShell",
                "&&",
            ],
        ),
        (
            "Read",
            &[
                "2000",
                "offset",
                "absolute",
                "PDF",
                ".ipynb",
                "before Edit or Write",
            ],
        ),
        (
            "Edit",
            &[
                "Read the file first",
                "indentation",
                "line-number",
                "unique",
                "replace_all",
                "empty `old_string`",
            ],
        ),
        ("Write", &["Read first", "Prefer Edit", "documentation"]),
        ("Glob", &["**/*.js", "newest first", ".gitignore"]),
        (
            "Grep",
            &[
                "ripgrep",
                "not `grep` or `rg`",
                "output_mode",
                "multiline",
                "head_limit",
                "250",
            ],
        ),
        (
            "TodoWrite",
            &["in_progress", "one at a time", "completed", "activeForm"],
        ),
        (
            "ExitPlanMode",
            &["plan mode", "Not for research tasks", "revise the plan"],
        ),
    ];
    for (name, needed) in needs {
        let (description, schema) = definition(name);
        let text = format!("{description}\n{schema}");
        for n in *needed {
            assert!(text.contains(n), "{name} lost {n:?}:\n{description}");
        }
    }
}
