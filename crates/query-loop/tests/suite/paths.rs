use std::path::Path;

use tine_query_loop::{SessionId, sanitize_path, transcript_path};

#[test]
fn transcript_path_stays_inside_the_home_for_any_cwd() {
    let home = Path::new("/h");
    let id = SessionId::new_random();
    for cwd in ["/", "/../..", "/a/../../b", "C:\\x\\y", "/with space/ünï"] {
        let path = transcript_path(home, Path::new(cwd), &id);
        let project = path.parent().unwrap();
        assert_eq!(project.parent().unwrap(), Path::new("/h/projects"), "{cwd}");
        let name = project.file_name().unwrap().to_str().unwrap();
        assert_eq!(name, sanitize_path(Path::new(cwd)));
        assert!(name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
    }
}
