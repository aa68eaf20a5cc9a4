//! Fuzzing the bash analysis at scale. Arbitrary text (and shell-flavoured token soup) never
//! panics the analysis; and for a generated family of command lines, one write anywhere in
//! the line (a redirection, a writing program, a write hidden in a substitution, a subshell, a
//! loop, `sh -c`, ...) means the line is never read-only, however many reads surround it.
//! `cargo xtask fuzz bash --cases N` runs N of each (`PROPTEST_CASES`).

use proptest::prelude::*;
use tine_permissions::analyze;
use tine_test_support::fuzz_config as config;
use tine_tools::{BashTool, Tool};

/// Tokens the shell grammar cares about, for soup that reaches deep into the parser.
fn shell_soup() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("cat"),
        Just("ls"),
        Just("echo"),
        Just("git"),
        Just("sed"),
        Just("find"),
        Just(" "),
        Just("\n"),
        Just(";"),
        Just("&&"),
        Just("||"),
        Just("|"),
        Just("&"),
        Just(">"),
        Just(">>"),
        Just("<"),
        Just("<<"),
        Just("<<<"),
        Just("2>&1"),
        Just("&>"),
        Just("$("),
        Just(")"),
        Just("("),
        Just("`"),
        Just("{"),
        Just("}"),
        Just("[["),
        Just("]]"),
        Just("$(("),
        Just("))"),
        Just("<("),
        Just(">("),
        Just("${"),
        Just("$x"),
        Just("'"),
        Just("\""),
        Just("\\"),
        Just("#"),
        Just("="),
        Just("*"),
        Just("?"),
        Just("~"),
        Just("if"),
        Just("then"),
        Just("fi"),
        Just("for"),
        Just("in"),
        Just("do"),
        Just("done"),
        Just("case"),
        Just("esac"),
        Just("function"),
        Just("EOF"),
        Just("-i"),
        Just("-n"),
        Just("x.txt"),
        Just("/etc/passwd"),
        Just("é"),
        Just("\0"),
        Just("\r"),
    ];
    proptest::collection::vec(token, 0..60).prop_map(|t| t.concat())
}

/// Commands that only read (the analysis may call them read-only).
fn read() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("cat notes.txt"),
        Just("ls -la"),
        Just("grep -n foo src/main.rs"),
        Just("head -n 3 notes.txt"),
        Just("wc -l notes.txt"),
        Just("echo hello"),
        Just("pwd"),
        Just("git log --oneline -3"),
        Just("git status"),
        Just("true"),
        Just("rg foo"),
    ]
    .prop_map(str::to_owned)
}

/// Commands that write, each on its own.
fn write() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("echo x > out.txt"),
        Just("cat notes.txt >> out.txt"),
        Just("ls &> out.txt"),
        Just("echo x 1> out.txt"),
        Just("echo x >| out.txt"),
        Just("rm notes.txt"),
        Just("rm -rf build"),
        Just("mv a b"),
        Just("cp a b"),
        Just("touch f"),
        Just("mkdir d"),
        Just("tee out.txt"),
        Just("tee -a out.txt"),
        Just("sed -i s/a/b/ notes.txt"),
        Just("sed -n 'w out.txt' notes.txt"),
        Just("chmod +x run.sh"),
        Just("ln -s a b"),
        Just("truncate -s 0 notes.txt"),
        Just("dd if=notes.txt of=out.txt"),
        Just("sort -o out.txt notes.txt"),
        Just("find . -delete"),
        Just("find . -name x -exec rm {} \\;"),
        Just("xargs rm"),
        Just("git commit -m x"),
        Just("git push"),
        Just("git checkout -- notes.txt"),
        Just("npm install"),
        Just("python3 -c 'open(\"x\",\"w\")'"),
        Just("sh -c 'rm x'"),
        Just("bash -c 'echo x > y'"),
        Just("eval 'rm x'"),
        Just("env rm x"),
        Just("command rm x"),
        Just("nohup rm x"),
        Just("exec rm x"),
        Just("xargs -I{} touch {}"),
        Just("awk '{print > \"out.txt\"}' notes.txt"),
        Just("PAGER='rm x' git log"),
        Just("$CMD x"),
    ]
    .prop_map(str::to_owned)
}

/// `inner` somewhere a shell would still run it.
fn wrap(inner: String, how: u8) -> String {
    match how % 10 {
        0 => inner,
        1 => format!("( {inner} )"),
        2 => format!("{{ {inner}; }}"),
        3 => format!("echo \"$({inner})\""),
        4 => format!("echo `{inner}`"),
        5 => format!("if true; then {inner}; fi"),
        6 => format!("for i in 1 2; do {inner}; done"),
        7 => format!("while false; do {inner}; done"),
        8 => format!("cat <({inner})"),
        _ => format!("true && {inner} || true"),
    }
}

fn connector() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just(" ; "),
        Just(" && "),
        Just(" || "),
        Just(" | "),
        Just("\n"),
        Just(" & ")
    ]
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        let analysis = analyze(&text);
        let _ = analysis.is_read_only();
        let _ = analysis.not_read_only_reason();
        let _ = analysis.summary();
    }

    #[test]
    fn shell_soup_never_panics_and_parse_errors_are_never_read_only(text in shell_soup()) {
        let analysis = analyze(&text);
        if analysis.parse_error {
            prop_assert!(!analysis.is_read_only(), "parse error judged read-only: {text:?}");
        }
        let _ = analysis.summary();
    }

    #[test]
    fn a_line_with_a_write_is_never_read_only(
        before in proptest::collection::vec((read(), connector()), 0..4),
        writer in write(),
        how in any::<u8>(),
        after in proptest::collection::vec((connector(), read()), 0..4),
    ) {
        let mut line = String::new();
        for (read, connector) in &before {
            line.push_str(read);
            line.push_str(connector);
        }
        line.push_str(&wrap(writer, how));
        for (connector, read) in &after {
            line.push_str(connector);
            line.push_str(read);
        }
        let analysis = analyze(&line);
        prop_assert!(
            !analysis.is_read_only(),
            "judged read-only although it writes: {line:?}"
        );
    }

    #[test]
    fn reads_alone_stay_read_only(
        reads in proptest::collection::vec(read(), 1..5),
        connector in prop_oneof![Just(" ; "), Just(" && "), Just(" | ")],
    ) {
        // The other side of the property: the family's reads are recognised, so the test
        // above is about the write, not about an analysis that refuses everything.
        let line = reads.join(connector);
        prop_assert!(analyze(&line).is_read_only(), "not read-only: {line:?}");
    }
}

/// Found by `arbitrary_text_never_panics` at scale: tree-sitter-bash's scanner read out of
/// bounds (SIGSEGV, taking tine down) on `{` followed by a code point past about U+D5E20.
#[test]
fn a_brace_before_a_plane_14_character_does_not_crash_the_parser() {
    for text in [
        "{\u{E0109}",
        "echo x{\u{F0000}",
        "{\u{10FFFF}",
        "{\u{E0000}}",
    ] {
        let analysis = analyze(text);
        assert!(!analysis.is_read_only() || analysis.commands.iter().all(|c| c.is_read_only()));
    }
    // Through the real tool, as the loop asks it before running a call.
    let dir = tempfile::tempdir().unwrap();
    let ctx = super::support::context(dir.path());
    let input = serde_json::json!({"command": "{\u{E0109}"});
    let _ = BashTool.check_permissions(&input, &ctx);
    assert!(!BashTool.is_read_only(&input));
    // Non-ASCII text is still words, as bash sees it.
    assert!(analyze("echo 'héllo 🦀'").is_read_only());
    assert!(analyze("cat fïle.txt").is_read_only());
    assert!(!analyze("echo x > ünïcode.txt").is_read_only());
}
