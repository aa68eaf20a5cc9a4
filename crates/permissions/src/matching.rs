//! How a rule's content matches a call: Bash command patterns, file paths with gitignore
//! semantics, WebFetch domains, and plain content.

use std::path::{Component, Path, PathBuf};

use ignore::gitignore::GitignoreBuilder;

/// Bash content: `prefix:*` (the command or the command followed by a space and more), a pattern
/// with `*` wildcards (`\*` is a literal star; a trailing ` *` also matches the bare command), or
/// the exact command.
pub(crate) fn bash_matches(content: &str, command: &str) -> bool {
    let command = command.trim();
    if let Some(prefix) = content.strip_suffix(":*") {
        let prefix = prefix.trim_end();
        return prefix.is_empty()
            || command == prefix
            || command
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with(char::is_whitespace));
    }
    if has_wildcard(content) {
        return wildcard_matches(content, command)
            || content
                .strip_suffix(" *")
                .is_some_and(|bare| wildcard_matches(bare, command));
    }
    content.trim() == command
}

/// Whether a Bash rule content is an exact command (neither prefix nor wildcard).
pub(crate) fn bash_is_exact(content: &str) -> bool {
    !content.ends_with(":*") && !has_wildcard(content)
}

fn has_wildcard(pattern: &str) -> bool {
    let mut escaped = false;
    for c in pattern.chars() {
        match c {
            '\\' if !escaped => escaped = true,
            '*' if !escaped => return true,
            _ => escaped = false,
        }
    }
    false
}

/// `*` matches any run of characters (spaces included); `\*` and `\\` are literal.
pub(crate) fn wildcard_matches(pattern: &str, text: &str) -> bool {
    #[derive(Clone, Copy, PartialEq)]
    enum Token {
        Star,
        Char(char),
    }
    let mut tokens = Vec::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(next @ ('*' | '\\')) => tokens.push(Token::Char(next)),
                Some(next) => {
                    tokens.push(Token::Char('\\'));
                    tokens.push(Token::Char(next));
                }
                None => tokens.push(Token::Char('\\')),
            },
            '*' => tokens.push(Token::Star),
            c => tokens.push(Token::Char(c)),
        }
    }
    let text: Vec<char> = text.chars().collect();
    // Classic greedy glob match with backtracking to the last star.
    let (mut t, mut p) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match tokens.get(p) {
            Some(Token::Char(c)) if *c == text[t] => {
                t += 1;
                p += 1;
            }
            Some(Token::Star) => {
                star = Some((p, t));
                p += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    tokens[p..].iter().all(|t| *t == Token::Star)
}

/// The roots a file pattern can be anchored at.
pub(crate) struct PathRoots<'a> {
    /// Where `./x` and bare patterns start: the session's working directory.
    pub cwd: &'a Path,
    /// Where `/x` starts: the rule's settings base directory.
    pub base_dir: &'a Path,
    /// Where `~/x` starts.
    pub home: Option<&'a Path>,
}

/// Whether `path` (absolute) matches a file rule pattern, with gitignore semantics under the
/// pattern's root: `//abs` (filesystem), `~/x` (home), `/x` (settings base), `./x` or `x` (cwd).
/// A pattern matching a directory matches everything below it.
pub(crate) fn path_matches(pattern: &str, roots: &PathRoots<'_>, path: &Path) -> bool {
    let (root, line): (&Path, String) = if let Some(rest) = pattern.strip_prefix("//") {
        (Path::new("/"), format!("/{rest}"))
    } else if let Some(rest) = pattern.strip_prefix("~/") {
        match roots.home {
            Some(home) => (home, format!("/{rest}")),
            None => return false,
        }
    } else if pattern.starts_with('/') {
        (roots.base_dir, pattern.to_string())
    } else if let Some(rest) = pattern.strip_prefix("./") {
        (roots.cwd, format!("/{rest}"))
    } else {
        (roots.cwd, pattern.to_string())
    };
    let path = normalize(path);
    let root = normalize(root);
    if !path.starts_with(&root) || path == root {
        return false;
    }
    let mut builder = GitignoreBuilder::new(&root);
    if builder.add_line(None, &line).is_err() {
        return false;
    }
    match builder.build() {
        Ok(matcher) => matcher
            .matched_path_or_any_parents(&path, false)
            .is_ignore(),
        Err(_) => false,
    }
}

/// Lexical normalization: drop `.`, resolve `..` (never above the root).
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `WebFetch(domain:example.com)` matches that host; `domain:*.example.com` its subdomains.
pub(crate) fn domain_matches(content: &str, url: &str) -> bool {
    let Some(domain) = content.strip_prefix("domain:") else {
        return wildcard_matches(content, url);
    };
    let Some(host) = host_of(url) else {
        return false;
    };
    match domain.strip_prefix("*.") {
        Some(parent) => host.ends_with(&format!(".{parent}")),
        None => host.eq_ignore_ascii_case(domain),
    }
}

pub(crate) fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if host_port.starts_with('[') {
        host_port.split_inclusive(']').next()?
    } else {
        host_port.split(':').next()?
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// Directories whose contents always need a person to change: git's (hooks run code), tine's
/// and Claude Code's settings (they grant permissions).
pub(crate) const PROTECTED_DIRS: &[&str] = &[".git", ".tine", ".claude"];

/// The protected directory (`.git`, `.tine`, `.claude`) a path passes through, if any.
pub(crate) fn protected_dir(path: &Path) -> Option<&'static str> {
    path.components().find_map(|c| match c {
        Component::Normal(name) => PROTECTED_DIRS.iter().copied().find(|dir| name == *dir),
        _ => None,
    })
}

/// Files that always need a person to change: a project's `.mcp.json` lists programs tine
/// starts once the user trusted its servers, so a write there could swap a trusted server's
/// command.
pub(crate) const PROTECTED_FILES: &[&str] = &[".mcp.json"];

/// The protected file (`.mcp.json`) a path names, if any.
pub(crate) fn protected_file(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?;
    PROTECTED_FILES.iter().copied().find(|file| name == *file)
}
