//! A session whose front end speaks for an editor (`SessionOptions::editor_files`): the
//! model's Read is answered from the editor's buffer, not from the disk.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::json;
use tine_mock_api::{Reply, Rule, Scenario};
use tine_session::{EditorFiles, EditorFuture, Op, TurnOutcome};

use super::support::{Running, World, http_client, server};

/// An editor holding buffers in a map, remembering which paths it was asked for.
#[derive(Default)]
struct Buffers {
    texts: HashMap<PathBuf, String>,
    asked: Mutex<Vec<PathBuf>>,
}

impl EditorFiles for Buffers {
    fn read_text<'a>(&'a self, path: &'a Path) -> EditorFuture<'a, String> {
        Box::pin(async move {
            self.asked.lock().unwrap().push(path.to_path_buf());
            self.texts
                .get(path)
                .cloned()
                .ok_or_else(|| format!("no buffer for {}", path.display()))
        })
    }

    fn write_text<'a>(&'a self, _path: &'a Path, _text: &'a str) -> EditorFuture<'a, ()> {
        Box::pin(async { Err("read-only in this test".to_owned()) })
    }
}

#[tokio::test]
async fn the_models_read_is_answered_from_the_editors_buffer() {
    let world = World::new();
    let file = world.cwd.join("notes.txt");
    std::fs::write(&file, "ON DISK\n").unwrap();
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .tool_results(false)
                .reply(Reply::text("Reading.").with_tool_use("Read", json!({"file_path": file}))),
        )
        .rule(
            Rule::new()
                .tool_results(true)
                .reply(Reply::text("Read it.")),
        )
        .default_reply(Reply::text("Hm."));
    let server = server(scenario).await;
    let editor = Arc::new(Buffers {
        texts: HashMap::from([(file.clone(), "UNSAVED BUFFER\n".to_owned())]),
        ..Buffers::default()
    });
    let mut options = world.options(http_client(&server));
    options.bare = true;
    options.editor_files = Some(Arc::clone(&editor) as Arc<dyn EditorFiles>);
    let mut s = Running::start(options).await;
    s.submit(Op::Prompt("read notes.txt".into()));
    assert_eq!(s.turn_end().await.outcome, TurnOutcome::Completed);
    s.shutdown().await;

    let requests = server.requests();
    let last = String::from_utf8_lossy(&requests.last().unwrap().body).into_owned();
    assert!(last.contains("tool_result"), "{last}");
    assert!(last.contains("1\\tUNSAVED BUFFER"), "{last}");
    assert!(!last.contains("ON DISK"), "{last}");
    assert_eq!(*editor.asked.lock().unwrap(), vec![file]);
}
