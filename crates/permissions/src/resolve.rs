//! The one place a path is resolved before a permission decision: the part that exists is
//! followed through symbolic links, component by component as the kernel does, and the rest
//! is appended lexically. Every check of a path (inside the project, `.git/`, rules) looks at
//! what this returns, so a link inside the project cannot lead a read or a write elsewhere.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// The kernel's limit on links followed in one lookup (Linux `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// A path as given (absolute, lexically clean) and where it really leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    /// The path as the caller named it, made absolute with `.` and `..` removed lexically.
    pub given: PathBuf,
    /// The path with every existing component followed through links (see [`resolve_path`]).
    pub real: PathBuf,
}

impl ResolvedPath {
    /// `path` (relative paths start at `base`), given and resolved.
    pub fn new(base: &Path, path: &Path) -> Self {
        let joined = if path.is_absolute() {
            path.to_path_buf()
        } else {
            base.join(path)
        };
        ResolvedPath {
            given: normalize(&joined),
            real: resolve_path(&joined),
        }
    }

    /// Both spellings, given first (the second is skipped when they are the same).
    pub fn both(&self) -> impl Iterator<Item = &Path> {
        std::iter::once(self.given.as_path())
            .chain((self.real != self.given).then_some(self.real.as_path()))
    }
}

/// Where `path` (absolute; a relative path is taken from `/`) really leads: each existing
/// component is looked up in turn, a symbolic link is replaced by its target (relative targets
/// continue from the link's directory), and `..` steps back from the directory reached, not
/// from the spelling (`link/..` is the link target's parent, as the kernel has it). From the
/// first component that does not exist the rest is appended lexically. A chain of more than
/// 40 links (a loop) stops being followed; the kernel refuses such a path anyway.
pub fn resolve_path(path: &Path) -> PathBuf {
    let mut pending: VecDeque<OsString> = VecDeque::new();
    push_components(&mut pending, path, false);
    let mut out = PathBuf::from("/");
    let mut exists = true;
    let mut links = 0;
    while let Some(part) = pending.pop_front() {
        if part == ".." {
            out.pop();
            continue;
        }
        let next = out.join(&part);
        if !exists || links >= MAX_LINKS {
            out = next;
            continue;
        }
        match next.symlink_metadata() {
            Ok(meta) if meta.file_type().is_symlink() => match std::fs::read_link(&next) {
                Ok(target) => {
                    links += 1;
                    if target.is_absolute() {
                        out = PathBuf::from("/");
                    }
                    push_components(&mut pending, &target, true);
                }
                Err(_) => out = next,
            },
            Ok(_) => out = next,
            Err(_) => {
                exists = false;
                out = next;
            }
        }
    }
    out
}

/// The normal and `..` components of `path`, at the front of `pending` (a link's target goes
/// before what followed the link) or at its back.
fn push_components(pending: &mut VecDeque<OsString>, path: &Path, front: bool) {
    let parts: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect();
    if front {
        for part in parts.into_iter().rev() {
            pending.push_front(part);
        }
    } else {
        pending.extend(parts);
    }
}

/// Resolves `.` and `..` without touching the filesystem (a path that does not exist yet, as
/// Write creates, must still be checked against permission rules).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                if !out.pop() && !out.has_root() {
                    out.push(component);
                }
            }
            Component::CurDir => {}
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => out.push(component),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    fn temp() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        (dir, root)
    }

    #[test]
    fn existing_part_follows_links_and_the_rest_is_lexical() {
        let (_dir, root) = temp();
        std::fs::create_dir_all(root.join("outside/deep")).unwrap();
        std::fs::create_dir_all(root.join("proj")).unwrap();
        symlink(root.join("outside"), root.join("proj/link")).unwrap();
        assert_eq!(
            resolve_path(&root.join("proj/link/deep/new/./file")),
            root.join("outside/deep/new/file")
        );
        assert_eq!(resolve_path(&root.join("proj/x/../y")), root.join("proj/y"));
        assert_eq!(resolve_path(&root.join("proj")), root.join("proj"));
    }

    #[test]
    fn dot_dot_after_a_link_steps_back_from_its_target() {
        let (_dir, root) = temp();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(root.join("proj")).unwrap();
        symlink(root.join("a/b"), root.join("proj/link")).unwrap();
        // Lexically `proj/secret`; the kernel opens `a/secret`.
        assert_eq!(
            resolve_path(&root.join("proj/link/../secret")),
            root.join("a/secret")
        );
    }

    #[test]
    fn relative_and_chained_links_resolve_to_the_end() {
        let (_dir, root) = temp();
        std::fs::create_dir_all(root.join("real")).unwrap();
        std::fs::write(root.join("real/f"), "x").unwrap();
        symlink("real", root.join("one")).unwrap();
        symlink("one/f", root.join("two")).unwrap();
        symlink(root.join("two"), root.join("three")).unwrap();
        assert_eq!(resolve_path(&root.join("three")), root.join("real/f"));
        // A dangling link leads where it points.
        symlink("missing/g", root.join("dangling")).unwrap();
        assert_eq!(resolve_path(&root.join("dangling")), root.join("missing/g"));
    }

    #[test]
    fn a_link_loop_ends() {
        let (_dir, root) = temp();
        symlink(root.join("b"), root.join("a")).unwrap();
        symlink(root.join("a"), root.join("b")).unwrap();
        let resolved = resolve_path(&root.join("a/x"));
        assert!(resolved.starts_with(&root), "{}", resolved.display());
    }

    #[test]
    fn given_and_real_spellings() {
        let (_dir, root) = temp();
        std::fs::create_dir_all(root.join("outside")).unwrap();
        symlink(root.join("outside"), root.join("link")).unwrap();
        let path = ResolvedPath::new(&root, Path::new("link/../link/k"));
        assert_eq!(path.given, root.join("link/k"));
        assert_eq!(path.real, root.join("outside/k"));
        assert_eq!(path.both().count(), 2);
        let plain = ResolvedPath::new(&root, Path::new("x"));
        assert_eq!(plain.both().count(), 1);
    }
}
