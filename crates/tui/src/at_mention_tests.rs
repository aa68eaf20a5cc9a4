use std::fs;

use super::*;
use crate::input::PromptInput;

/// A project with a `.gitignore`, and a picker whose walk of it is done.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    fs::create_dir_all(root.join("src/bin")).unwrap();
    fs::create_dir_all(root.join("target/debug")).unwrap();
    fs::create_dir_all(root.join(".git")).unwrap();
    for file in [
        "src/main.rs",
        "src/lib.rs",
        "src/bin/tool.rs",
        "README.md",
        "Cargo.toml",
        "notes/my file.txt",
        "secret.env",
        "target/debug/main.o",
        ".git/HEAD",
    ] {
        let path = root.join(file);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "x").unwrap();
    }
    fs::write(root.join(".gitignore"), "target/\n*.env\n").unwrap();
    (dir, root)
}

/// `text` typed (cursor at the end) until the walk's result is in.
fn typed(picker: &mut MentionPicker, text: &str, root: &PathBuf) {
    picker.refresh(text, text.len(), Some(root));
    for _ in 0..500 {
        if !matches!(picker.index, Index::Walking(_)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
        picker.poll();
    }
    panic!("the walk never finished");
}

#[test]
fn the_query_is_the_at_word_ending_at_the_cursor() {
    let at = |text: &str, cursor: usize| typed_at(text, cursor).map(|t| (t.start, t.query));
    assert_eq!(at("@ma", 3), Some((0, "ma".into())));
    assert_eq!(at("look at @src/m", 14), Some((8, "src/m".into())));
    assert_eq!(at("@", 1), Some((0, String::new())));
    assert_eq!(at("mail a@b", 8), None, "an @ inside a word");
    assert_eq!(at("@ma and", 7), None, "the cursor left the word");
    assert_eq!(at("@\"a b", 5), None, "a quoted path is typed by hand");
    assert_eq!(at("@ma", 2), Some((0, "m".into())));
}

#[test]
fn fuzzy_matches_follow_gitignore_and_mark_directories() {
    let (_dir, root) = project();
    let mut picker = MentionPicker::default();
    typed(&mut picker, "@ma", &root);
    assert!(picker.is_open());
    assert_eq!(picker.matches()[0], "src/main.rs", "{:?}", picker.matches());
    assert!(
        !picker.matches().iter().any(|p| p.contains("target")),
        "ignored: {:?}",
        picker.matches()
    );

    picker.refresh("@env", 4, Some(&root));
    assert!(picker.matches().is_empty(), "{:?}", picker.matches());
    assert!(!picker.is_open());

    picker.refresh("@sr", 3, Some(&root));
    assert!(
        picker.matches().contains(&"src/".to_owned()),
        "{:?}",
        picker.matches()
    );
    assert!(picker.matches().contains(&"src/bin/".to_owned()));

    picker.refresh("@HEAD", 5, Some(&root));
    assert!(
        picker.matches().is_empty(),
        "never .git: {:?}",
        picker.matches()
    );

    // Everything that is not ignored, shortest first, at most a list's worth.
    picker.refresh("@", 1, Some(&root));
    assert_eq!(picker.matches().len(), MAX_ROWS);
    let all = match &picker.index {
        Index::Ready(paths) => paths.clone(),
        _ => unreachable!(),
    };
    assert!(all.contains(&".gitignore".to_owned()), "{all:?}");
    assert!(
        !all.iter()
            .any(|p| p.ends_with(".env") || p.starts_with("target"))
    );
    assert!(all.windows(2).all(|w| w[0].len() <= w[1].len()), "{all:?}");
}

#[test]
fn selection_moves_and_wraps_and_the_choice_replaces_the_query() {
    let (_dir, root) = project();
    let mut picker = MentionPicker::default();
    let mut input = PromptInput::new(Vec::new());
    input.insert_str("explain @rs please");
    // The cursor after "@rs".
    for _ in 0.." please".len() {
        input.left();
    }
    typed(&mut picker, "@", &root);
    picker.refresh(input.text(), input.cursor(), Some(&root));
    let count = picker.matches().len();
    assert!(count >= 3, "{:?}", picker.matches());
    picker.move_by(-1);
    assert_eq!(picker.selected(), count - 1);
    picker.move_by(1);
    assert_eq!(picker.selected(), 0);
    picker.move_by(1);
    let second = picker.matches()[1].clone();

    let (range, mention) = picker.chosen().unwrap();
    assert_eq!(mention, format!("@{second} "));
    input.replace_range(range, &mention);
    assert_eq!(input.text(), format!("explain @{second}  please"));
    assert_eq!(input.cursor(), "explain @".len() + second.len() + 1);
    picker.refresh(input.text(), input.cursor(), Some(&root));
    assert!(!picker.is_open(), "the mention is in: the list closes");
}

#[test]
fn a_path_with_a_space_is_quoted_and_esc_closes_until_the_text_changes() {
    let (_dir, root) = project();
    let mut picker = MentionPicker::default();
    typed(&mut picker, "@myfile", &root);
    assert_eq!(picker.matches()[0], "notes/my file.txt");
    assert_eq!(picker.chosen().unwrap().1, "@\"notes/my file.txt\" ");

    picker.dismiss("@myfile");
    picker.refresh("@myfile", 7, Some(&root));
    assert!(!picker.is_open());
    picker.refresh("@myfil", 6, Some(&root));
    assert!(picker.is_open());
}

#[test]
fn nothing_is_walked_before_an_at_nor_without_a_project() {
    let (_dir, root) = project();
    let mut picker = MentionPicker::default();
    picker.refresh("hello", 5, Some(&root));
    assert!(matches!(picker.index, Index::Unwalked));
    assert_eq!(picker.deadline(), None);
    picker.refresh("@ma", 3, None);
    assert!(matches!(picker.index, Index::Unwalked));
    picker.refresh("@ma", 3, Some(&root));
    assert!(matches!(picker.index, Index::Walking(_) | Index::Ready(_)));
}
