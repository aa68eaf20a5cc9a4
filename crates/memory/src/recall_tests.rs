use std::sync::Mutex as StdMutex;

use super::*;
use crate::memdir::{DirSource, MemoryDir};
use crate::topic::{MemoryType, NewMemory, save_memory};

/// Picks fixed names and records what it was shown.
struct Fixed {
    pick: Vec<String>,
    seen: StdMutex<Vec<String>>,
}

impl MemorySelector for Fixed {
    fn select<'a>(
        &'a self,
        _prompt: &'a str,
        manifest: &'a str,
        _limit: usize,
    ) -> BoxFuture<'a, Result<Selection, RecallError>> {
        self.seen.lock().unwrap().push(manifest.to_owned());
        let files = self.pick.clone();
        Box::pin(async move {
            Ok(Selection {
                files,
                usage: Usage::default(),
            })
        })
    }
}

fn fixed(pick: &[&str]) -> Arc<Fixed> {
    Arc::new(Fixed {
        pick: pick.iter().map(|s| (*s).to_owned()).collect(),
        seen: StdMutex::new(Vec::new()),
    })
}

fn memory_dir(tmp: &tempfile::TempDir) -> MemoryDir {
    let dir = MemoryDir::new(tmp.path().join("memory"), DirSource::Default);
    for (file, name, body) in [
        (
            "project_stack.md",
            "Project stack",
            "React 18 and PostgreSQL.",
        ),
        ("user_role.md", "User role", "Senior backend engineer."),
    ] {
        save_memory(
            &dir,
            &NewMemory {
                file_name: file,
                name,
                description: body,
                kind: MemoryType::Project,
                body,
            },
        )
        .unwrap();
    }
    dir
}

#[tokio::test]
async fn attaches_the_chosen_memories_once_per_session() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = memory_dir(&tmp);
    let selector = fixed(&["project_stack.md", "missing.md", "project_stack.md"]);
    let recall = Recall::new(dir.path(), selector.clone()).with_inline_bytes(0);
    let a = recall
        .attachment_for("which database do we use?")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(a.files, ["project_stack.md"]);
    assert!(a.text.starts_with("<system-reminder>"));
    assert!(a.text.contains("React 18 and PostgreSQL."));
    assert!(!a.text.contains("Senior backend"));
    assert_eq!(recall.bytes_used(), a.bytes);
    // the manifest listed both, MEMORY.md excluded
    let first = selector.seen.lock().unwrap()[0].clone();
    assert!(first.contains("project_stack.md") && first.contains("user_role.md"));
    assert!(!first.contains("MEMORY.md"));

    // second turn: the shown file is no longer offered
    let again = recall.attachment_for("and the frontend?").await.unwrap();
    assert!(again.is_none());
    let second = selector.seen.lock().unwrap()[1].clone();
    assert!(!second.contains("project_stack.md"));
}

#[tokio::test]
async fn single_words_acknowledgements_and_empty_directories_recall_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = memory_dir(&tmp);
    let selector = fixed(&["project_stack.md"]);
    let recall = Recall::new(dir.path(), selector.clone()).with_inline_bytes(0);
    for p in ["continue", "  yes  ", "", "ok thanks, looks good"] {
        assert!(recall.attachment_for(p).await.unwrap().is_none());
    }
    assert!(selector.seen.lock().unwrap().is_empty());
    let empty = Recall::new(tmp.path().join("none"), fixed(&["a.md"])).with_inline_bytes(0);
    assert!(empty.attachment_for("two words").await.unwrap().is_none());
}

#[tokio::test]
async fn files_are_capped_and_the_session_budget_holds() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let mut names = Vec::new();
    for i in 0..20 {
        let name = format!("big_{i:02}.md");
        let body: String = (0..400)
            .map(|l| format!("line {l} of memory {i}\n"))
            .collect();
        std::fs::write(
            d.join(&name),
            format!("---\nname: Big {i}\ndescription: d\ntype: project\n---\n{body}"),
        )
        .unwrap();
        names.push(name);
    }
    let picks: Vec<&str> = names.iter().map(String::as_str).collect();
    let recall = Recall::new(d, fixed(&picks));
    let mut total = 0;
    let mut turns = 0;
    while let Some(a) = recall.attachment_for("tell me everything").await.unwrap() {
        assert!(a.files.len() <= RECALL_MAX_FILES);
        for section in a.text.split("\n## ").skip(1) {
            assert!(section.lines().count() <= RECALL_MAX_LINES + 10);
            assert!(section.len() <= RECALL_MAX_FILE_BYTES + 300);
            assert!(section.contains("[... cut to"));
        }
        total += a.bytes;
        turns += 1;
        assert!(turns < 10);
    }
    assert!(total <= RECALL_MAX_SESSION_BYTES);
    assert!(total > RECALL_MAX_SESSION_BYTES - 2 * (RECALL_MAX_FILE_BYTES + 200));
    assert_eq!(recall.bytes_used(), total);
}

#[test]
fn cap_text_cuts_on_lines_and_bytes() {
    let p = Path::new("/m/x.md");
    assert_eq!(cap_text("a\nb\n", p), "a\nb\n");
    let long = "é".repeat(5000);
    let cut = cap_text(&long, p);
    assert!(cut.contains("[... cut"));
    assert!(cut.len() < RECALL_MAX_FILE_BYTES + 200);
}

#[tokio::test]
async fn memories_this_session_saved_are_not_offered_and_cost_no_query() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = memory_dir(&tmp);
    let selector = fixed(&["project_stack.md", "user_role.md"]);
    let learned = SessionMemories::new();
    learned.extend(&["project_stack.md"]);
    let recall = Recall::new(dir.path(), selector.clone())
        .with_inline_bytes(0)
        .with_learned(learned.clone());
    let a = recall
        .attachment_for("which database do we use?")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(a.files, ["user_role.md"]);
    assert!(!selector.seen.lock().unwrap()[0].contains("project_stack.md"));
    // Everything left was learned here or shown already: no side query at all.
    learned.extend(&["user_role.md"]);
    let again = Recall::new(dir.path(), selector.clone())
        .with_inline_bytes(0)
        .with_learned(learned);
    assert_eq!(again.attachment_for("and the role?").await.unwrap(), None);
    assert_eq!(selector.seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_few_small_memories_are_attached_once_without_a_query() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = memory_dir(&tmp);
    let selector = fixed(&[]);
    let recall = Recall::new(dir.path(), selector.clone());
    let a = recall
        .attachment_for("how do I reverse a list?")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(a.files.len(), 2, "{:?}", a.files);
    assert!(a.text.contains("React 18 and PostgreSQL.") && a.text.contains("Senior backend"));
    assert_eq!(a.usage, Usage::default());
    // Shown once; nothing is left to ask about, so later turns cost nothing.
    assert_eq!(
        recall.attachment_for("and another thing?").await.unwrap(),
        None
    );
    assert!(
        selector.seen.lock().unwrap().is_empty(),
        "no selection query"
    );

    // Past the inline budget the selector decides.
    let picky = fixed(&["user_role.md"]);
    let recall = Recall::new(dir.path(), picky.clone()).with_inline_bytes(10);
    let a = recall.attachment_for("who am I?").await.unwrap().unwrap();
    assert_eq!(a.files, ["user_role.md"]);
    assert_eq!(picky.seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn many_small_memories_are_attached_five_a_turn_without_a_query() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = MemoryDir::new(tmp.path().join("memory"), DirSource::Default);
    for i in 0..12 {
        let file = format!("project_fact{i:02}.md");
        let body = format!("Fact number {i}.");
        save_memory(
            &dir,
            &NewMemory {
                file_name: &file,
                name: &format!("Fact {i}"),
                description: &body,
                kind: MemoryType::Project,
                body: &body,
            },
        )
        .unwrap();
    }
    let selector = fixed(&[]);
    let recall = Recall::new(dir.path(), selector.clone());
    let mut seen = HashSet::new();
    let mut per_turn = Vec::new();
    for turn in 0..4 {
        let attached = recall
            .attachment_for(&format!("question number {turn}?"))
            .await
            .unwrap()
            .map(|a| {
                assert!(!a.text.contains("type: project"), "{}", a.text);
                assert!(a.text.contains("Fact number"), "{}", a.text);
                a.files
            })
            .unwrap_or_default();
        per_turn.push(attached.len());
        for file in attached {
            assert!(seen.insert(file.clone()), "{file} attached twice");
        }
    }
    assert_eq!(per_turn, [5, 5, 2, 0]);
    assert_eq!(seen.len(), 12);
    assert!(
        selector.seen.lock().unwrap().is_empty(),
        "no selection query"
    );
}

#[test]
fn the_selection_message_puts_the_manifest_before_the_prompt_behind_a_breakpoint() {
    let message = selection_message("which database?", "- a.md [project] A: b", 5);
    let tine_api_client::MessageContent::Blocks(blocks) = &message.content else {
        panic!("{message:?}")
    };
    let [ContentBlock::Text(manifest), ContentBlock::Text(prompt)] = &blocks[..] else {
        panic!("{message:?}")
    };
    assert!(manifest.text.starts_with(RECALL_MARKER));
    assert!(manifest.text.contains("- a.md [project] A: b"));
    assert!(!manifest.text.contains("which database?"));
    assert_eq!(manifest.cache_control, Some(CacheControl::ephemeral()));
    assert!(prompt.text.contains("which database?"));
    assert_eq!(prompt.cache_control, None);
}

#[test]
fn attached_memories_leave_their_frontmatter_out() {
    let text = "---\nname: Stack\ndescription: React 18, PostgreSQL\ntype: project\n---\n\nThe frontend is React 18.\n";
    assert_eq!(
        without_frontmatter(text).trim(),
        "The frontend is React 18."
    );
    assert_eq!(without_frontmatter("no frontmatter\n"), "no frontmatter\n");
    assert_eq!(
        without_frontmatter("---\nnot closed\n"),
        "---\nnot closed\n"
    );
    assert_eq!(
        without_frontmatter("---\r\ntype: user\r\n---\r\nbody"),
        "body"
    );
    assert_eq!(without_frontmatter("----\nx\n---\n"), "----\nx\n---\n");
}

#[tokio::test]
async fn a_one_line_memory_its_index_line_already_says_is_not_attached_again() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = memory_dir(&tmp);
    let context = "- [Project stack](project_stack.md) — React 18 and PostgreSQL";
    let recall = Recall::new(dir.path(), fixed(&[])).with_context(context);
    let a = recall
        .attachment_for("how do I reverse a list?")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        a.files,
        ["user_role.md"],
        "the stack is in the index already"
    );
    assert_eq!(
        recall.attachment_for("and another thing?").await.unwrap(),
        None
    );
    // Without that context (a resumed session) it is attached.
    let recall = Recall::new(dir.path(), fixed(&[])).with_context(context);
    recall.forget_context();
    let a = recall
        .attachment_for("how do I reverse a list?")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(a.files.len(), 2);
}
