//! What a memory fork (extraction, dream) changed and what it cost: the memory directory's
//! `*.md` files hashed before and after the fork, the names that differ, and the usage as
//! billed-equivalent input tokens.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use tine_api_client::Usage;

/// Every visible `*.md` file under `dir` (relative name → content hash).
pub(crate) fn snapshot(dir: &Path) -> BTreeMap<String, [u8; 32]> {
    let mut out = BTreeMap::new();
    walk(dir, dir, 0, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, depth: usize, out: &mut BTreeMap<String, [u8; 32]>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let path: PathBuf = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if depth < 4 {
                walk(root, &path, depth + 1, out);
            }
        } else if kind.is_file()
            && path.extension().is_some_and(|e| e == "md")
            && let Ok(bytes) = std::fs::read(&path)
            && let Ok(rel) = path.strip_prefix(root)
        {
            out.insert(
                rel.to_string_lossy().replace('\\', "/"),
                Sha256::digest(&bytes).into(),
            );
        }
    }
}

pub(crate) fn diff(
    before: &BTreeMap<String, [u8; 32]>,
    after: &BTreeMap<String, [u8; 32]>,
) -> Vec<String> {
    after
        .iter()
        .filter(|(name, hash)| before.get(*name) != Some(*hash))
        .map(|(name, _)| name.clone())
        .collect()
}

/// Billed-equivalent input tokens of `usage` at the input rate: cache reads 0.1×, cache
/// writes 1.25×, the rest 1×.
pub fn billed_equivalent_input(usage: &Usage) -> f64 {
    usage.input_tokens as f64
        + 1.25 * usage.cache_creation_input_tokens as f64
        + 0.1 * usage.cache_read_input_tokens as f64
}
