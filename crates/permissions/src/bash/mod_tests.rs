use super::*;

#[test]
fn pipeline_of_readers_is_read_only_and_classified() {
    let analysis = analyze("cat /etc/hosts | grep localhost");
    assert!(analysis.is_read_only(), "{analysis:?}");
    assert_eq!(analysis.commands.len(), 2);
    assert_eq!(analysis.commands[0].program.as_deref(), Some("cat"));
    assert_eq!(analysis.commands[1].kind, CommandKind::Search);
    let summary = analysis.summary();
    assert!(summary.is_read && summary.is_search && !summary.is_list);
}

#[test]
fn redirect_to_file_is_not_read_only() {
    let analysis = analyze("cat /etc/hosts > /tmp/output.txt");
    assert!(!analysis.is_read_only());
    let redirect = &analysis.commands[0].redirections[0];
    assert_eq!(redirect.target, "/tmp/output.txt");
    assert!(redirect.writes_file);
    assert_eq!(analysis.summary(), KindSummary::default());
}

#[test]
fn fd_duplication_and_dev_null_are_fine() {
    assert!(is_read_only_command("ls -la 2>&1 | head -5"));
    assert!(is_read_only_command("grep -r foo . 2>/dev/null"));
}

#[test]
fn parts_are_split_across_lists_and_substitutions() {
    let analysis = analyze("git status && echo \"$(rm -rf x)\" | wc -l; ls");
    let texts: Vec<&str> = analysis.parts().iter().map(|p| p.text.as_str()).collect();
    assert_eq!(
        texts,
        vec![
            "git status",
            "echo \"$(rm -rf x)\"",
            "rm -rf x",
            "wc -l",
            "ls"
        ]
    );
    assert!(analysis.parts()[2].nested);
    assert!(!analysis.is_read_only());
    assert!(analysis.splittable);
}

#[test]
fn group_redirection_reaches_every_member() {
    let analysis = analyze("{ cat a; cat b; } > out");
    assert_eq!(analysis.commands.len(), 2);
    assert!(analysis.commands.iter().all(SimpleCommand::writes_file));
}

#[test]
fn heredoc_tail_commands_are_found() {
    let analysis = analyze("cat <<EOF && rm x\nhi\nEOF");
    let programs: Vec<_> = analysis
        .commands
        .iter()
        .map(|c| c.program.clone())
        .collect();
    assert_eq!(
        programs,
        vec![Some("cat".to_string()), Some("rm".to_string())]
    );
}

#[test]
fn parse_errors_are_not_splittable() {
    let analysis = analyze("echo (");
    assert!(analysis.parse_error);
    assert!(!analysis.splittable);
    assert!(!analysis.is_read_only());
}

#[test]
fn literal_values_strip_quotes() {
    let analysis = analyze(r#"grep "a b" 'c d' e\ f $HOME *.rs"#);
    let literals: Vec<Option<&str>> = analysis.commands[0]
        .args
        .iter()
        .map(|w| w.literal.as_deref())
        .collect();
    assert_eq!(
        literals,
        vec![Some("a b"), Some("c d"), Some("e f"), None, None]
    );
}

#[test]
fn reasons_name_the_problem() {
    let why = analyze("find . -delete")
        .not_read_only_reason()
        .unwrap_or_default();
    assert!(why.contains("-delete"), "{why}");
    let why = analyze("sed -i s/a/b/ f")
        .not_read_only_reason()
        .unwrap_or_default();
    assert!(why.contains("in place"), "{why}");
}

/// Found by fuzz_bash: after a pipeline of three, tree-sitter-bash 0.25 reads the next line's
/// `rm x` as arguments of the last `cat` (no error node), and the line read as read-only.
#[test]
fn a_write_on_the_line_after_a_long_pipeline_is_seen() {
    let line = "cat notes.txt | cat notes.txt | cat notes.txt\nrm notes.txt && cat notes.txt";
    let analysis = analyze(line);
    let programs: Vec<_> = analysis
        .commands
        .iter()
        .map(|c| c.program.clone())
        .collect();
    assert!(!analysis.is_read_only(), "{programs:?} {analysis:#?}");
}
