//! `git` is read-only for inspection subcommands with safe global options and no flag that
//! writes (`--output`) or runs a program (`-c core.pager=..`, `--ext-diff`, `--upload-pack`,
//! `git grep -O`). Listing forms of `branch`, `tag`, `remote`, `stash`, `worktree` are
//! read-only; their other forms change the repository. `git config` reads one named key
//! without asking, but printing configuration wholesale (`--list`, `--get-regexp`,
//! `--get-urlmatch`, `git var -l`) or a key that holds credentials (`http.*.extraHeader`,
//! `url.*.insteadOf`, `credential.*`) needs approval: such values carry tokens.

use super::CommandKind;

/// The options of `git branch` and `git tag` listings that take a value (the value is not a
/// ref to create).
const LISTING_VALUE_FLAGS: &[&str] = &[
    "--contains",
    "--no-contains",
    "--merged",
    "--no-merged",
    "--points-at",
    "--sort",
    "--format",
];

const INSPECT: &[&str] = &[
    "status",
    "diff",
    "log",
    "show",
    "blame",
    "annotate",
    "shortlog",
    "describe",
    "rev-parse",
    "rev-list",
    "ls-files",
    "ls-tree",
    "ls-remote",
    "cat-file",
    "grep",
    "merge-base",
    "name-rev",
    "for-each-ref",
    "show-ref",
    "count-objects",
    "check-ignore",
    "check-attr",
    "whatchanged",
    "cherry",
    "diff-tree",
    "diff-files",
    "diff-index",
    "show-branch",
    "help",
    "version",
    "range-diff",
];

pub(super) fn check(args: &[&str]) -> Result<CommandKind, String> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if !arg.starts_with('-') {
            break;
        }
        match *arg {
            "-C" => i += 2,
            "--no-pager"
            | "-P"
            | "-p"
            | "--paginate"
            | "--no-optional-locks"
            | "--literal-pathspecs"
            | "--no-replace-objects"
            | "--version"
            | "--help"
            | "-h"
            | "--bare" => i += 1,
            other => {
                return Err(format!(
                    "`git {other}` can change configuration or where git looks, so it is not read-only"
                ));
            }
        }
    }
    let Some(subcommand) = args.get(i) else {
        return Ok(CommandKind::Read);
    };
    let rest = args.get(i + 1..).unwrap_or_default();
    for arg in rest {
        let flag = arg.split_once('=').map_or(*arg, |(f, _)| f);
        if matches!(
            flag,
            "--output" | "--ext-diff" | "--exec" | "--upload-pack" | "--receive-pack"
        ) {
            return Err(format!(
                "`git {subcommand} {arg}` writes files or runs a program"
            ));
        }
    }
    let listing_only = |denied: &[&str], list_flags: &[&str], value_flags: &[&str]| {
        let listing = rest.iter().any(|a| list_flags.contains(a));
        let mut expects_value = false;
        for arg in rest {
            let flag = arg.split_once('=').map_or(*arg, |(f, _)| f);
            if denied.contains(&flag) {
                return Err(format!("`git {subcommand} {arg}` changes the repository"));
            }
            if expects_value {
                expects_value = false;
                continue;
            }
            if value_flags.contains(arg) {
                expects_value = true;
                continue;
            }
            if !arg.starts_with('-') && !listing {
                return Err(format!("`git {subcommand} {arg}` creates or changes a ref"));
            }
        }
        Ok(CommandKind::Read)
    };
    match *subcommand {
        "grep" => match rest
            .iter()
            .find(|a| a.starts_with("-O") || a.starts_with("--open-files-in-pager"))
        {
            Some(arg) => Err(format!("`git grep {arg}` runs a program on the results")),
            None => Ok(CommandKind::Search),
        },
        s if INSPECT.contains(&s) => Ok(CommandKind::Read),
        "branch" => listing_only(
            &[
                "-d",
                "-D",
                "--delete",
                "-m",
                "-M",
                "--move",
                "-c",
                "-C",
                "--copy",
                "-f",
                "--force",
                "-u",
                "--set-upstream-to",
                "--unset-upstream",
                "--edit-description",
                "-t",
                "--track",
                "--no-track",
                "--create-reflog",
            ],
            &["-l", "--list"],
            LISTING_VALUE_FLAGS,
        ),
        "tag" => listing_only(
            &[
                "-d",
                "--delete",
                "-a",
                "--annotate",
                "-s",
                "--sign",
                "-f",
                "--force",
                "-m",
                "--message",
                "-F",
                "--file",
                "-u",
                "--local-user",
                "-e",
                "--edit",
            ],
            &["-l", "--list", "-v", "--verify"],
            LISTING_VALUE_FLAGS,
        ),
        "remote" => match rest.iter().find(|a| !a.starts_with('-')) {
            None | Some(&"show") | Some(&"get-url") => Ok(CommandKind::Read),
            Some(other) => Err(format!("`git remote {other}` changes the repository")),
        },
        "config" => config(rest),
        "var" if rest.contains(&"-l") => Err(
            "`git var -l` prints the whole git configuration, which can hold credentials \
             (tokens in url.*.insteadOf or http.extraHeader)"
                .into(),
        ),
        "var" => Ok(CommandKind::Read),
        "stash" | "worktree" | "notes" | "submodule" => {
            let first = rest.iter().find(|a| !a.starts_with('-')).copied();
            let reads = match *subcommand {
                "stash" => matches!(first, Some("list" | "show")),
                "worktree" => first == Some("list"),
                "notes" => matches!(first, Some("list" | "show")),
                _ => first == Some("status"),
            };
            if reads {
                Ok(CommandKind::Read)
            } else {
                Err(format!(
                    "`git {subcommand}` in this form changes the repository"
                ))
            }
        }
        "reflog" => match rest.iter().find(|a| !a.starts_with('-')) {
            Some(&"expire") | Some(&"delete") => {
                Err("`git reflog expire/delete` changes the repository".into())
            }
            _ => Ok(CommandKind::Read),
        },
        "symbolic-ref" => {
            let positionals = rest.iter().filter(|a| !a.starts_with('-')).count();
            let deletes = rest.iter().any(|a| matches!(*a, "-d" | "--delete" | "-m"));
            if positionals <= 1 && !deletes {
                Ok(CommandKind::Read)
            } else {
                Err("`git symbolic-ref` with a target changes a ref".into())
            }
        }
        other => Err(format!(
            "`git {other}` can change the repository or run hooks"
        )),
    }
}

fn config(rest: &[&str]) -> Result<CommandKind, String> {
    const WRITES: &[&str] = &[
        "--add",
        "--unset",
        "--unset-all",
        "--replace-all",
        "--rename-section",
        "--remove-section",
        "-e",
        "--edit",
        "set",
        "unset",
        "rename-section",
        "remove-section",
        "edit",
    ];
    const READS: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--get-color",
        "--get-colorbool",
        "--list",
        "-l",
        "get",
        "list",
    ];
    /// Forms that print every key (or every key matching a pattern or a URL) with its value.
    const DUMPS: &[&str] = &[
        "--list",
        "-l",
        "list",
        "--get-regexp",
        "--get-urlmatch",
        "--regexp",
        "--url",
    ];
    if let Some(arg) = rest.iter().find(|a| WRITES.contains(a)) {
        return Err(format!("`git config {arg}` changes configuration"));
    }
    if !rest.iter().any(|a| READS.contains(a)) {
        return Err("`git config` without --get/--list sets a value".into());
    }
    // Names alone (`--name-only`) carry no secret.
    let names_only = rest.contains(&"--name-only");
    let dump = rest.iter().find(|a| {
        let flag = a.split_once('=').map_or(**a, |(f, _)| f);
        DUMPS.contains(&flag)
    });
    if let Some(arg) = dump
        && !names_only
    {
        return Err(format!(
            "`git config {arg}` prints configuration values, which can hold credentials \
             (tokens in url.*.insteadOf or http.extraHeader)"
        ));
    }
    let secret_key = rest
        .iter()
        .filter(|a| !a.starts_with('-') && !matches!(**a, "get" | "list"))
        .find(|key| holds_credentials(key));
    if let Some(key) = secret_key
        && !names_only
    {
        return Err(format!(
            "`git config` reads `{key}`, a key that can hold credentials"
        ));
    }
    Ok(CommandKind::Read)
}

/// Keys whose values are credentials or may embed them: `credential.*`, `url.<base>.*`
/// (`url.https://TOKEN@host/.insteadOf`), `http.*` headers and cookies, and names that say so.
fn holds_credentials(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    let section = key.split('.').next().unwrap_or_default();
    let name = key.rsplit('.').next().unwrap_or_default();
    matches!(section, "credential" | "url")
        || (section == "http" && matches!(name, "extraheader" | "cookiefile" | "proxy"))
        || ["token", "password", "secret", "extraheader"]
            .iter()
            .any(|word| key.contains(word))
}
