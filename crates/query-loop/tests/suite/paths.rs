use std::path::Path;

#[test]
fn transcript_path_stays_inside_the_home_for_any_cwd() {
    let home = Path::new("/h");
    let id = SessionId::new_random();
    for cwd in ["/", "/../..", "/a/../../b", "C:\\x\\y", "/with space/ünï"] {
        let path = transcript_path(home, Path::new(cwd), &id);
        let project = path.parent().unwrap();
        assert_eq!(project.parent().unwrap(), Path::new("/h/projects"), "{cwd}");
        let name = project.file_name().unwrap().to_str().unwrap();
        assert_eq!(name, project_dir_name(Path::new(cwd)));
        assert!(name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
    }
}

use std::path::PathBuf;

use tine_api_client::Message;
use tine_config::{
    Adoption, SessionId, adopt_legacy_project_dir, legacy_project_dir, project_dir,
    project_dir_name, recorded_cwd, transcript_path,
};
use tine_query_loop::{TranscriptWriter, WriterOptions, latest_session};

/// Writes a one-message session of `cwd` (as recorded) at `path`.
async fn session_at(path: PathBuf, cwd: &Path, id: &SessionId) -> PathBuf {
    let mut writer = TranscriptWriter::open(
        path.clone(),
        WriterOptions {
            session_id: id.clone(),
            cwd: cwd.to_path_buf(),
            agent_id: None,
            parent_uuid: None,
        },
    )
    .await
    .unwrap();
    writer.append_message(&Message::user("hi")).await.unwrap();
    path
}

fn set_mtime(path: &Path, secs: u64) {
    let file = std::fs::File::options().append(true).open(path).unwrap();
    file.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
        .unwrap();
}

#[tokio::test]
async fn continue_never_picks_a_session_recorded_in_another_directory() {
    let home = tempfile::tempdir().unwrap();
    let cwd = Path::new("/x/my-app");
    let mine = SessionId::parse("mine").unwrap();
    let foreign = SessionId::parse("foreign").unwrap();
    let mine_path = session_at(transcript_path(home.path(), cwd, &mine), cwd, &mine).await;
    // A newer transcript in this folder that another directory wrote (a collision of an
    // older naming scheme, or a copied file).
    let foreign_path = session_at(
        transcript_path(home.path(), cwd, &foreign),
        Path::new("/x/my_app"),
        &foreign,
    )
    .await;
    set_mtime(&mine_path, 1_000_000_000);
    set_mtime(&foreign_path, 2_000_000_000);
    assert_eq!(
        recorded_cwd(&foreign_path),
        Some(PathBuf::from("/x/my_app"))
    );
    assert_eq!(latest_session(home.path(), cwd).await.unwrap(), Some(mine));

    // A transcript with no record at all (a session that died before writing) is never picked.
    std::fs::remove_file(&mine_path).unwrap();
    std::fs::write(
        transcript_path(home.path(), cwd, &SessionId::parse("e").unwrap()),
        "",
    )
    .unwrap();
    assert_eq!(latest_session(home.path(), cwd).await.unwrap(), None);
}

#[tokio::test]
async fn a_legacy_folder_of_one_directory_is_adopted_whole() {
    let home = tempfile::tempdir().unwrap();
    let cwd = Path::new("/x/my-app");
    let legacy = legacy_project_dir(home.path(), cwd);
    let id = SessionId::parse("old-session").unwrap();
    session_at(legacy.join("old-session.jsonl"), cwd, &id).await;
    std::fs::create_dir_all(legacy.join("memory")).unwrap();
    std::fs::write(legacy.join("memory/MEMORY.md"), "- [A](a.md) — a\n").unwrap();

    let adoption = adopt_legacy_project_dir(home.path(), cwd).unwrap();
    let new = project_dir(home.path(), cwd);
    assert_eq!(
        adoption,
        Adoption::Renamed {
            from: legacy.clone(),
            to: new.clone()
        }
    );
    assert!(!legacy.exists());
    assert!(new.join("memory/MEMORY.md").is_file());
    assert_eq!(latest_session(home.path(), cwd).await.unwrap(), Some(id));
    assert_eq!(
        adopt_legacy_project_dir(home.path(), cwd).unwrap(),
        Adoption::Nothing
    );
}

#[tokio::test]
async fn a_shared_legacy_folder_is_split_by_the_recorded_cwd() {
    let home = tempfile::tempdir().unwrap();
    let dash = Path::new("/x/my-app");
    let underscore = Path::new("/x/my_app");
    let legacy = legacy_project_dir(home.path(), dash);
    assert_eq!(legacy, legacy_project_dir(home.path(), underscore));
    let a = SessionId::parse("a").unwrap();
    let b = SessionId::parse("b").unwrap();
    session_at(legacy.join("a.jsonl"), dash, &a).await;
    std::fs::create_dir_all(legacy.join("a/subagents")).unwrap();
    std::fs::write(legacy.join("a/subagents/agent-1.jsonl"), "").unwrap();
    session_at(legacy.join("b.jsonl"), underscore, &b).await;
    std::fs::create_dir_all(legacy.join("memory")).unwrap();

    let adoption = adopt_legacy_project_dir(home.path(), dash).unwrap();
    assert_eq!(
        adoption,
        Adoption::Moved {
            from: legacy.clone(),
            to: project_dir(home.path(), dash),
            sessions: 1,
            left: 1
        }
    );
    let dash_dir = project_dir(home.path(), dash);
    assert!(dash_dir.join("a.jsonl").is_file());
    assert!(dash_dir.join("a/subagents/agent-1.jsonl").is_file());
    assert!(
        !dash_dir.join("memory").exists(),
        "shared memory is not taken"
    );
    assert!(legacy.join("b.jsonl").is_file());
    assert_eq!(latest_session(home.path(), dash).await.unwrap(), Some(a));
    assert_eq!(latest_session(home.path(), underscore).await.unwrap(), None);

    // The other directory then owns what is left.
    let adoption = adopt_legacy_project_dir(home.path(), underscore).unwrap();
    assert!(matches!(adoption, Adoption::Renamed { .. }), "{adoption:?}");
    assert_eq!(
        latest_session(home.path(), underscore).await.unwrap(),
        Some(b)
    );
    assert_eq!(
        adopt_legacy_project_dir(home.path(), dash).unwrap(),
        Adoption::Nothing
    );
}
