//! What a memory fork (extraction, dream, Magic Docs) changed and what it cost: the memory
//! directory's `*.md` files hashed before and after the fork, the names that differ, the usage
//! as billed-equivalent input tokens, and the usage figures the jobs' outcomes print.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::ser::{Serialize, SerializeMap, Serializer};
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

/// A fork's usage as the jobs' outcomes print it: the four counts and the billed-equivalent
/// input; with `cache_split`, also what was read from the cache against what was billed at
/// the full (or write) rate.
struct Figures<'a> {
    usage: &'a Usage,
    cache_split: bool,
}

impl Serialize for Figures<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let u = self.usage;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("input_tokens", &u.input_tokens)?;
        map.serialize_entry("cache_read_input_tokens", &u.cache_read_input_tokens)?;
        map.serialize_entry(
            "cache_creation_input_tokens",
            &u.cache_creation_input_tokens,
        )?;
        map.serialize_entry("output_tokens", &u.output_tokens)?;
        if self.cache_split {
            map.serialize_entry("read_from_cache", &u.cache_read_input_tokens)?;
            map.serialize_entry(
                "billed_in_full",
                &(u.input_tokens + u.cache_creation_input_tokens),
            )?;
        }
        map.serialize_entry("billed_equivalent_input", &billed_equivalent_input(u))?;
        map.end()
    }
}

/// `serialize_with` for a fork's usage (Magic Docs, the dream).
pub(crate) fn usage_figures<S: Serializer>(usage: &Usage, s: S) -> Result<S::Ok, S::Error> {
    figures(Some(usage), false, s)
}

/// `serialize_with` for a fork's optional usage (its first request's).
pub(crate) fn optional_usage_figures<S: Serializer>(
    usage: &Option<Usage>,
    s: S,
) -> Result<S::Ok, S::Error> {
    figures(usage.as_ref(), false, s)
}

/// `serialize_with` for extraction's usage, with the cache split.
pub(crate) fn cache_figures<S: Serializer>(usage: &Usage, s: S) -> Result<S::Ok, S::Error> {
    figures(Some(usage), true, s)
}

/// `serialize_with` for extraction's optional usage, with the cache split.
pub(crate) fn optional_cache_figures<S: Serializer>(
    usage: &Option<Usage>,
    s: S,
) -> Result<S::Ok, S::Error> {
    figures(usage.as_ref(), true, s)
}

/// `usage`'s figures (`null` for none).
fn figures<S: Serializer>(
    usage: Option<&Usage>,
    cache_split: bool,
    s: S,
) -> Result<S::Ok, S::Error> {
    usage
        .map(|usage| Figures { usage, cache_split })
        .serialize(s)
}
