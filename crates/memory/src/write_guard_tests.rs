use std::os::unix::fs::PermissionsExt;

use serde_json::json;
use tine_tools::builtin_tools;
use tine_tools::run_tool;

use super::*;

struct Fixture {
    _root: tempfile::TempDir,
    project: PathBuf,
    mem: PathBuf,
    tools: Vec<Arc<dyn Tool>>,
}

impl Fixture {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        let project = base.join("project");
        std::fs::create_dir_all(&project).unwrap();
        let mem = base.join("home/projects/p/memory");
        let tools = guard_memory_writes(&builtin_tools(), &mem).unwrap();
        Self {
            _root: root,
            project,
            mem,
            tools,
        }
    }

    /// A new session (or fork): its own file-state cache.
    fn session(&self) -> ToolContext {
        ToolContext::new(&self.project)
    }

    fn tool(&self, name: &str) -> &dyn Tool {
        self.tools
            .iter()
            .find(|t| t.name() == name)
            .map(|t| t.as_ref())
            .unwrap()
    }

    async fn call(&self, ctx: &ToolContext, name: &str, input: Value) -> ToolOutput {
        run_tool(self.tool(name), input, ctx).await
    }

    fn index(&self) -> String {
        self.mem.join(INDEX_FILE).display().to_string()
    }

    fn read_index(&self) -> String {
        std::fs::read_to_string(self.mem.join(INDEX_FILE)).unwrap()
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn the_wrapped_tools_serialize_exactly_as_the_real_ones() {
    let f = Fixture::new();
    let mut real = builtin_tools();
    real.sort_by(|a, b| a.name().cmp(b.name()));
    let mut guarded = f.tools.clone();
    guarded.sort_by(|a, b| a.name().cmp(b.name()));
    let bytes = |tools: &[Arc<dyn Tool>]| {
        serde_json::to_vec(&tine_query_loop::tool_definitions(tools).to_vec()).unwrap()
    };
    assert_eq!(bytes(&real), bytes(&guarded));
}

#[tokio::test]
async fn a_blind_write_of_the_index_keeps_what_another_session_saved() {
    let f = Fixture::new();
    let (a, b) = (f.session(), f.session());
    let line_a = "- [A](a.md) — saved by session A";
    let line_b = "- [B](b.md) — saved by session B";
    let out = f
        .call(
            &a,
            "Write",
            json!({"file_path": f.index(), "content": line_a}),
        )
        .await;
    assert!(!out.is_error, "{}", out.content);
    assert!(
        out.content.starts_with("File created successfully"),
        "{}",
        out.content
    );
    // B never read the index (its prompt said there was none) and writes its own line only.
    let out = f
        .call(
            &b,
            "Write",
            json!({"file_path": f.index(), "content": line_b}),
        )
        .await;
    assert!(!out.is_error, "{}", out.content);
    assert!(out.content.contains("1 line(s)"), "{}", out.content);
    assert_eq!(f.read_index(), format!("{line_b}\n{line_a}\n"));
    assert_eq!(mode(&f.mem.join(INDEX_FILE)), 0o600);
}

#[tokio::test]
async fn a_write_from_a_stale_read_merges_instead_of_failing() {
    let f = Fixture::new();
    let (a, b) = (f.session(), f.session());
    std::fs::create_dir_all(&f.mem).unwrap();
    std::fs::write(
        f.mem.join(INDEX_FILE),
        "- [Old](old.md) — old\n- [Keep](keep.md) — keep\n",
    )
    .unwrap();
    let out = f.call(&a, "Read", json!({"file_path": f.index()})).await;
    assert!(!out.is_error, "{}", out.content);
    // B saves a memory after A read the index.
    f.call(&b, "Read", json!({"file_path": f.index()})).await;
    let out = f
        .call(
            &b,
            "Edit",
            json!({
                "file_path": f.index(),
                "old_string": "- [Keep](keep.md) — keep",
                "new_string": "- [Keep](keep.md) — keep\n- [B](b.md) — from B",
            }),
        )
        .await;
    assert!(!out.is_error, "{}", out.content);
    // A writes what it read, without Old (it deleted that memory), plus its own line: no
    // "modified since read", and B's line survives.
    let out = f
        .call(
            &a,
            "Write",
            json!({"file_path": f.index(), "content": "- [Keep](keep.md) — keep\n- [A](a.md) — from A\n"}),
        )
        .await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(
        f.read_index(),
        "- [Keep](keep.md) — keep\n- [A](a.md) — from A\n- [B](b.md) — from B\n"
    );
}

#[tokio::test]
async fn an_edit_whose_anchor_another_session_changed_is_merged_from_what_was_read() {
    let f = Fixture::new();
    let (a, b) = (f.session(), f.session());
    std::fs::create_dir_all(&f.mem).unwrap();
    std::fs::write(f.mem.join(INDEX_FILE), "- [X](x.md) — x\n").unwrap();
    f.call(&a, "Read", json!({"file_path": f.index()})).await;
    f.call(&b, "Read", json!({"file_path": f.index()})).await;
    let out = f
        .call(
            &b,
            "Edit",
            json!({"file_path": f.index(), "old_string": "— x", "new_string": "— x, reworded"}),
        )
        .await;
    assert!(!out.is_error, "{}", out.content);
    // A appends after the line as it read it; that text is gone from the file now.
    let out = f
        .call(
            &a,
            "Edit",
            json!({
                "file_path": f.index(),
                "old_string": "- [X](x.md) — x\n",
                "new_string": "- [X](x.md) — x\n- [A](a.md) — a\n",
            }),
        )
        .await;
    assert!(!out.is_error, "{}", out.content);
    // Our lines first, then what others changed or added.
    assert_eq!(
        f.read_index(),
        "- [A](a.md) — a\n- [X](x.md) — x, reworded\n"
    );
    // An anchor in neither version is the usual error.
    let out = f
        .call(
            &a,
            "Edit",
            json!({"file_path": f.index(), "old_string": "nowhere", "new_string": "x"}),
        )
        .await;
    assert!(out.is_error);
}

#[tokio::test]
async fn a_topic_file_another_session_created_meanwhile_is_refused_not_clobbered() {
    let f = Fixture::new();
    let (a, b) = (f.session(), f.session());
    let topic = f.mem.join("project_stack.md").display().to_string();
    let out = f
        .call(
            &a,
            "Write",
            json!({"file_path": topic, "content": "from A\n"}),
        )
        .await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(mode(&f.mem.join("project_stack.md")), 0o600);
    let out = f
        .call(
            &b,
            "Write",
            json!({"file_path": topic, "content": "from B\n"}),
        )
        .await;
    assert!(out.is_error);
    assert!(out.content.contains("already exists"), "{}", out.content);
    assert_eq!(
        std::fs::read_to_string(f.mem.join("project_stack.md")).unwrap(),
        "from A\n"
    );
    // After reading it, B may update it (and the mode stays private).
    f.call(&b, "Read", json!({"file_path": topic})).await;
    let out = f
        .call(
            &b,
            "Write",
            json!({"file_path": topic, "content": "from A and B\n"}),
        )
        .await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(mode(&f.mem.join("project_stack.md")), 0o600);
}

#[tokio::test]
async fn files_outside_the_memory_directory_are_the_real_tools_business() {
    let f = Fixture::new();
    let ctx = f.session();
    let file = f.project.join("src/main.rs");
    let out = f
        .call(
            &ctx,
            "Write",
            json!({"file_path": file.display().to_string(), "content": "fn main() {}\n"}),
        )
        .await;
    assert!(!out.is_error, "{}", out.content);
    // A user's project file keeps the usual mode, and no lock file appears beside memory.
    assert_eq!(mode(&file), 0o644);
    assert!(!f.mem.join(crate::memdir::WRITE_LOCK_FILE).exists());
    // The read-before-write rule still applies there.
    std::fs::write(&file, "changed\n").unwrap();
    let out = f
        .call(
            &ctx,
            "Write",
            json!({"file_path": file.display().to_string(), "content": "x\n"}),
        )
        .await;
    assert!(out.is_error);
}
