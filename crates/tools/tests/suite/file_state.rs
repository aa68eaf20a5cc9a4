use std::path::Path;

use tine_tools::{FileStateCache, Staleness};

#[test]
fn never_read_and_modified_since_read() {
    let cache = FileStateCache::new();
    let path = Path::new("/project/a.rs");
    assert_eq!(
        cache.check_fresh(path, b"x", None),
        Err(Staleness::NeverRead(path.to_path_buf()))
    );
    cache.record(path, b"one", None);
    assert_eq!(cache.check_fresh(path, b"one", None), Ok(()));
    let stale = cache.check_fresh(path, b"two", None).unwrap_err();
    assert_eq!(stale, Staleness::ModifiedSinceRead(path.to_path_buf()));
    assert!(
        stale
            .to_string()
            .contains("modified since read — read it again")
    );
}

#[test]
fn lru_forgets_the_least_recently_used_beyond_capacity() {
    let cache = FileStateCache::new();
    for i in 0..=tine_tools::FILE_STATE_CAPACITY {
        cache.record(Path::new(&format!("/f{i}")), b"", None);
    }
    assert_eq!(cache.len(), tine_tools::FILE_STATE_CAPACITY);
    assert!(!cache.contains(Path::new("/f0")));
    assert!(cache.contains(Path::new("/f100")));
}

#[test]
fn clone_is_an_independent_copy() {
    let parent = FileStateCache::new();
    parent.record(Path::new("/shared"), b"s", None);
    let fork = parent.clone();
    fork.record(Path::new("/fork-only"), b"f", None);
    parent.record(Path::new("/parent-only"), b"p", None);
    assert!(fork.contains(Path::new("/shared")));
    assert!(!parent.contains(Path::new("/fork-only")));
    assert!(!fork.contains(Path::new("/parent-only")));
}
