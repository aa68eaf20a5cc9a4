//! The allowlist: which programs, with which flags, only read. Anything not named here is
//! `Other` and not read-only. Programs whose flags can write or run code (`find -delete`,
//! `sed -i`, `git -c`, `rg --pre`, `sort -o`) are judged on literal arguments only: a word that
//! expands at run time (`$X`, `*`, `{a,b}`) could become such a flag.

use super::options::{Opt, scan};
use super::{CommandKind, Word};

type Verdict = Result<CommandKind, String>;

/// Programs whose every flag is harmless: any arguments, even expanding ones, keep them read-only.
fn plain_reader(program: &str) -> Option<CommandKind> {
    use CommandKind::{List, Neutral, Read, Search};
    let kind = match program {
        "cat" | "head" | "tail" | "wc" | "nl" | "tac" | "rev" | "cut" | "tr" | "paste" | "fold"
        | "column" | "expand" | "unexpand" | "comm" | "cmp" | "diff" | "strings" | "od"
        | "hexdump" | "base64" | "md5sum" | "sha1sum" | "sha224sum" | "sha256sum" | "sha384sum"
        | "sha512sum" | "b2sum" | "cksum" | "stat" | "join" | "look" | "readlink" | "realpath" => {
            Read
        }
        "grep" | "egrep" | "fgrep" | "which" | "whereis" | "type" => Search,
        "ls" | "dir" | "du" | "df" => List,
        "echo" | "printf" | "true" | "false" | "test" | "[" | "pwd" | "basename" | "dirname"
        | "whoami" | "id" | "groups" | "uname" | "uptime" | "nproc" | "arch" | "tty" | "locale"
        | "seq" | "sleep" | "free" | "cd" | "pushd" | "popd" | ":" | "[[" | "read" => Neutral,
        _ => return None,
    };
    Some(kind)
}

/// The kind of a program whatever its flags (for UIs, when a command is not read-only).
pub(super) fn kind_of(program: &str) -> CommandKind {
    let name = program.rsplit('/').next().unwrap_or(program);
    if let Some(kind) = plain_reader(name) {
        return kind;
    }
    match name {
        "find" | "fd" | "fdfind" | "rg" | "ag" => CommandKind::Search,
        "tree" => CommandKind::List,
        "sed" | "awk" | "gawk" | "mawk" | "nawk" | "sort" | "uniq" | "less" | "more" | "xxd"
        | "file" | "git" | "jq" => CommandKind::Read,
        "date" | "hostname" | "env" | "printenv" | "ps" => CommandKind::Neutral,
        _ => CommandKind::Other,
    }
}

/// Whether `program args..` only reads, and its kind when it does.
pub(super) fn check(program: &str, args: &[Word]) -> Verdict {
    let name = match program.rsplit_once('/') {
        None => program,
        Some(("/bin" | "/usr/bin" | "/usr/local/bin", name)) => name,
        Some(_) => {
            return Err(format!(
                "runs `{program}`, which is not a known read-only program"
            ));
        }
    };
    if let Some(kind) = plain_reader(name) {
        return Ok(kind);
    }
    match name {
        "time" => wrapped(args, 0),
        "nice" => nice(args),
        "timeout" => timeout(args),
        "stdbuf" => stdbuf(args),
        "command" => command_builtin(args),
        "xargs" => xargs(args),
        "env" => env(args),
        _ => {
            let literal = literal_args(args)?;
            check_literal(name, &literal)
        }
    }
}

fn check_literal(name: &str, args: &[&str]) -> Verdict {
    match name {
        "find" => find(args),
        "fd" | "fdfind" => fd(args),
        "rg" => rg(args),
        "ag" => deny_flags(args, &["--pager"], CommandKind::Search),
        "sed" => super::sed::check(args),
        "awk" | "gawk" | "mawk" | "nawk" => awk(args),
        "sort" => sort(args),
        "uniq" | "xxd" => at_most_positionals(name, args, 1, CommandKind::Read),
        "tree" => tree(args),
        "less" | "more" => pager(args),
        "file" => deny_flags(args, &["-C", "--compile"], CommandKind::Read),
        "date" => date(args),
        "hostname" => hostname(args),
        "git" => super::git::check(args),
        "jq" => jq(args),
        "ps" => ps(args),
        "printenv" => Err(PRINTS_ENVIRONMENT.replace("{}", "printenv")),
        _ => Err(format!("`{name}` is not a known read-only program")),
    }
}

pub(super) fn literal_args(args: &[Word]) -> Result<Vec<&str>, String> {
    args.iter()
        .map(|a| {
            a.literal.as_deref().ok_or_else(|| {
                format!(
                    "argument `{}` is only known at run time and could become a flag",
                    a.raw
                )
            })
        })
        .collect()
}

fn deny_flags(args: &[&str], denied: &[&str], kind: CommandKind) -> Verdict {
    for arg in args {
        let flag = arg.split_once('=').map_or(*arg, |(f, _)| f);
        if denied.contains(&flag) {
            return Err(format!("`{arg}` can write files or run programs"));
        }
    }
    Ok(kind)
}

fn at_most_positionals(name: &str, args: &[&str], max: usize, kind: CommandKind) -> Verdict {
    let positionals = args
        .iter()
        .filter(|a| !a.starts_with('-') || **a == "-")
        .count();
    if positionals > max {
        return Err(format!(
            "`{name}` with {positionals} file operands writes the last one"
        ));
    }
    Ok(kind)
}

fn find(args: &[&str]) -> Verdict {
    const DENIED: &[&str] = &[
        "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0", "-fprintf",
    ];
    match args.iter().find(|a| DENIED.contains(a)) {
        Some(arg) => Err(format!("`find {arg}` runs programs or changes files")),
        None => Ok(CommandKind::Search),
    }
}

fn fd(args: &[&str]) -> Verdict {
    for opt in scan(args, "xXdeEtScjo", &["exec", "exec-batch"]) {
        match opt {
            Opt::Short('x' | 'X', _) => return Err("`fd -x` runs a program per result".into()),
            Opt::Long("exec" | "exec-batch", _) => {
                return Err("`fd --exec` runs a program per result".into());
            }
            _ => {}
        }
    }
    Ok(CommandKind::Search)
}

fn rg(args: &[&str]) -> Verdict {
    for opt in scan(args, "ABCEefgmMrtTj", &[]) {
        if let Opt::Long(name @ ("pre" | "hostname-bin"), _) = opt {
            return Err(format!("`rg --{name}` runs a program"));
        }
    }
    Ok(CommandKind::Search)
}

fn sort(args: &[&str]) -> Verdict {
    for opt in scan(
        args,
        "kotST",
        &["output", "compress-program", "key", "field-separator"],
    ) {
        match opt {
            Opt::Short('o', _) | Opt::Long("output", _) => {
                return Err("`sort -o` writes a file".into());
            }
            Opt::Long("compress-program", _) => {
                return Err("`sort --compress-program` runs a program".into());
            }
            _ => {}
        }
    }
    Ok(CommandKind::Read)
}

fn tree(args: &[&str]) -> Verdict {
    for opt in scan(args, "oLPIH", &["output"]) {
        if matches!(opt, Opt::Short('o', _) | Opt::Long("output", _)) {
            return Err("`tree -o` writes a file".into());
        }
    }
    Ok(CommandKind::List)
}

fn pager(args: &[&str]) -> Verdict {
    for arg in args {
        if arg.starts_with('+') || arg.contains('!') {
            return Err(format!("`{arg}` can make the pager run a shell command"));
        }
    }
    for opt in scan(
        args,
        "bhjkoOpPtTxyz#",
        &["log-file", "LOG-FILE", "lesskey-file"],
    ) {
        match opt {
            Opt::Short('o' | 'O', _) | Opt::Long("log-file" | "LOG-FILE", _) => {
                return Err("`less -o` writes a log file".into());
            }
            Opt::Short('k', _) | Opt::Long("lesskey-file" | "lesskey-src", _) => {
                return Err("`less -k` loads key bindings that can run commands".into());
            }
            _ => {}
        }
    }
    Ok(CommandKind::Read)
}

fn date(args: &[&str]) -> Verdict {
    for opt in scan(args, "dfrsI", &["date", "file", "reference", "set"]) {
        match opt {
            Opt::Short('s', _) | Opt::Long("set", _) => {
                return Err("`date -s` sets the clock".into());
            }
            Opt::Positional(p) if !p.starts_with('+') => {
                return Err("`date` with an operand sets the clock".into());
            }
            _ => {}
        }
    }
    Ok(CommandKind::Neutral)
}

fn hostname(args: &[&str]) -> Verdict {
    let read_flags = [
        "-f", "-s", "-i", "-I", "-d", "-a", "-A", "--fqdn", "--short",
    ];
    match args.iter().find(|a| !read_flags.contains(a)) {
        Some(arg) => Err(format!("`hostname {arg}` can change the host name")),
        None => Ok(CommandKind::Neutral),
    }
}

fn awk(args: &[&str]) -> Verdict {
    let mut program = None;
    for opt in scan(args, "Fv", &["field-separator", "assign"]) {
        match opt {
            Opt::Short('F' | 'v', _) | Opt::Long("field-separator" | "assign", _) => {}
            Opt::Positional(p) => {
                program.get_or_insert(p);
            }
            Opt::Short(c, _) => return Err(format!("`awk -{c}` is not known to be safe")),
            Opt::Long(name, _) => return Err(format!("`awk --{name}` is not known to be safe")),
        }
    }
    let Some(program) = program else {
        return Err("awk without an inline program".into());
    };
    const RISKY: &[&str] = &[
        "system", "getline", "|", ">", "@", "close", "ENVIRON", "PROCINFO",
    ];
    match RISKY.iter().find(|r| program.contains(**r)) {
        Some(r) => Err(format!(
            "the awk program uses `{r}`, which can run commands or write files"
        )),
        None => Ok(CommandKind::Read),
    }
}

/// `time cmd`, `nice cmd`: read-only when the command they run is.
fn wrapped(args: &[Word], skip: usize) -> Verdict {
    let Some(inner) = args.get(skip) else {
        return Ok(CommandKind::Neutral);
    };
    match &inner.literal {
        Some(program) => check(program, &args[skip + 1..]),
        None => Err("the wrapped program is only known at run time".into()),
    }
}

fn leading_literals(args: &[Word]) -> Vec<&str> {
    args.iter().map_while(|a| a.literal.as_deref()).collect()
}

/// Index of the wrapped command after the wrapper's own options.
fn inner_index(
    args: &[Word],
    short_values: &str,
    long_values: &[&str],
    operands: usize,
) -> Result<usize, String> {
    let literal = leading_literals(args);
    let mut i = 0;
    let mut operands_left = operands;
    while i < literal.len() {
        let arg = literal[i];
        if arg == "--" {
            i += 1;
            continue;
        }
        if arg.starts_with('-') && arg != "-" && operands_left == operands {
            if let Some(long) = arg.strip_prefix("--") {
                i += if !long.contains('=') && long_values.contains(&long) {
                    2
                } else {
                    1
                };
            } else {
                let cluster = &arg[1..];
                let value_at = cluster.find(|c| short_values.contains(c));
                i += match value_at {
                    Some(at) if at + 1 == cluster.len() => 2,
                    _ => 1,
                };
            }
            continue;
        }
        if operands_left > 0 {
            operands_left -= 1;
            i += 1;
            continue;
        }
        return Ok(i);
    }
    if i < args.len() {
        return Err("the wrapper's options are only known at run time".into());
    }
    Ok(i)
}

fn nice(args: &[Word]) -> Verdict {
    let i = inner_index(args, "n", &["adjustment"], 0)?;
    wrapped(args, i)
}

fn timeout(args: &[Word]) -> Verdict {
    let i = inner_index(args, "sk", &["signal", "kill-after"], 1)?;
    wrapped(args, i)
}

fn stdbuf(args: &[Word]) -> Verdict {
    let i = inner_index(args, "ioe", &["input", "output", "error"], 0)?;
    wrapped(args, i)
}

fn command_builtin(args: &[Word]) -> Verdict {
    let literal = leading_literals(args);
    if literal
        .iter()
        .take_while(|a| a.starts_with('-'))
        .any(|a| a.contains('v') || a.contains('V'))
    {
        return Ok(CommandKind::Search);
    }
    let i = inner_index(args, "", &[], 0)?;
    wrapped(args, i)
}

/// Why a command that prints environment variables needs approval: the environment holds
/// secrets (tokens, keys) that would reach the model and the transcript.
const PRINTS_ENVIRONMENT: &str =
    "`{}` prints environment variables, which can hold secrets (tokens, keys)";

fn env(args: &[Word]) -> Verdict {
    let literal = literal_args(args)?;
    if literal.iter().all(|a| matches!(*a, "-0" | "--null")) {
        return Err(PRINTS_ENVIRONMENT.replace("{}", "env"));
    }
    Err("`env` with arguments runs a command with a changed environment".into())
}

/// `ps` lists processes; BSD-style `e` (`ps e`, `ps auxe`, `ps eww`) adds each one's
/// environment, tine's own included.
fn ps(args: &[&str]) -> Verdict {
    match args.iter().find(|a| !a.starts_with('-') && a.contains('e')) {
        Some(arg) => Err(format!(
            "`ps {arg}` shows processes' environments, which can hold secrets (tokens, keys)"
        )),
        None => Ok(CommandKind::Neutral),
    }
}

/// `jq` reads JSON; its `env` builtin and `$ENV` print the environment.
fn jq(args: &[&str]) -> Verdict {
    match args.iter().find(|a| mentions_jq_env(a)) {
        Some(arg) => Err(format!(
            "the jq program `{arg}` reads environment variables (`env`, `$ENV`), which can \
             hold secrets"
        )),
        None => Ok(CommandKind::Read),
    }
}

/// `$ENV`, or `env` as a whole word not preceded by `.` (`.env` is a field, not the builtin).
fn mentions_jq_env(text: &str) -> bool {
    if text.contains("$ENV") {
        return true;
    }
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    text.match_indices("env").any(|(at, _)| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + 3).copied();
        !before.is_some_and(|b| word(b) || b == b'.' || b == b'$') && !after.is_some_and(word)
    })
}

fn xargs(args: &[Word]) -> Verdict {
    let i = inner_index(
        args,
        "adEIiLlnPs",
        &[
            "arg-file",
            "delimiter",
            "eof",
            "replace",
            "max-lines",
            "max-args",
            "max-procs",
            "max-chars",
            "process-slot-var",
        ],
        0,
    )?;
    let Some(inner) = args.get(i) else {
        return Ok(CommandKind::Neutral);
    };
    let Some(program) = inner.literal.as_deref() else {
        return Err("the program run by xargs is only known at run time".into());
    };
    let name = program.rsplit('/').next().unwrap_or(program);
    // xargs appends words read from input, which could be any flag: only flag-safe programs.
    match plain_reader(name) {
        Some(_) => check(program, &args[i + 1..]),
        None => Err(format!(
            "`xargs {program}` runs `{program}` with arguments read from input"
        )),
    }
}
