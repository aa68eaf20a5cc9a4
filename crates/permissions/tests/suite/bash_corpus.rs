//! The read-only corpus: every line of `tests/data/bash_corpus.txt` against `is_read_only_command`.

use tine_permissions::{analyze, is_read_only_command};

const CORPUS: &str = include_str!("../data/bash_corpus.txt");

fn corpus() -> Vec<(bool, String)> {
    CORPUS
        .lines()
        .filter_map(|line| {
            let (expected, command) = match line.chars().next()? {
                '+' => (true, &line[1..]),
                '-' => (false, &line[1..]),
                _ => return None,
            };
            Some((expected, command.trim_start().replace("\\n", "\n")))
        })
        .collect()
}

#[test]
fn corpus_is_large_and_mostly_adversarial() {
    let corpus = corpus();
    let denied = corpus.iter().filter(|(ro, _)| !ro).count();
    assert!(corpus.len() >= 150, "corpus has {} commands", corpus.len());
    assert!(
        denied * 2 > corpus.len(),
        "only {denied} adversarial commands"
    );
}

#[test]
fn every_corpus_command_gets_its_expected_verdict() {
    let wrong: Vec<String> = corpus()
        .into_iter()
        .filter(|(expected, command)| is_read_only_command(command) != *expected)
        .map(|(expected, command)| {
            let analysis = analyze(&command);
            format!(
                "{} {command:?}: got {}, reason {:?}",
                if expected { "+" } else { "-" },
                !expected,
                analysis.not_read_only_reason()
            )
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} wrong verdicts:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn every_non_read_only_command_says_why() {
    for (expected, command) in corpus() {
        if !expected {
            assert!(
                analyze(&command).not_read_only_reason().is_some(),
                "{command:?} has no reason"
            );
        }
    }
}
