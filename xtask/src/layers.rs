//! The layering rule of docs/ARCHITECTURE.md, checked on `cargo metadata`.
//!
//! A product crate may depend (normal or build dependency) only on product crates of a strictly
//! lower layer. `mock-api` depends on no product crate (it parses raw JSON so that it catches
//! client bugs instead of sharing them) and is never a normal dependency of a product crate;
//! nor is `test-support` (the harness the in-process suites share), which like
//! dev-dependencies, `tests/` and `xtask` may use anything.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// A workspace crate's place in the stack. Lower numbers are lower layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Product(&'static str, u8),
    Mock,
    /// `crates/test-support`: uses anything, is used only as a dev-dependency.
    TestSupport,
}

/// Product crates by directory under `crates/`, with their layer.
pub(crate) const LAYERS: &[(&str, u8)] = &[
    // The ground floor: settings and tine's paths, read by every layer above.
    ("config", 0),
    ("api-client", 1),
    ("permissions", 2),
    ("tools", 3),
    ("query-loop", 4),
    ("fork-runtime", 5),
    ("memory", 6),
    ("compaction", 6),
    ("mcp", 6),
    ("checkpoints", 6),
    // One session for every front end: above memory, compaction and MCP, below the UI.
    ("session", 7),
    ("tui", 8),
    ("headless", 8),
    ("acp", 8),
    ("cli", 9),
];

/// One workspace package as the check sees it.
#[derive(Debug, Clone)]
pub(crate) struct Package {
    pub name: String,
    pub manifest_path: String,
    /// (dependency package name, kind) where kind is "normal", "build" or "dev".
    pub deps: Vec<(String, String)>,
}

pub(crate) fn role(manifest_path: &str) -> Option<Role> {
    let path = manifest_path.replace('\\', "/");
    for (dir, layer) in LAYERS {
        if path.contains(&format!("/crates/{dir}/")) {
            return Some(Role::Product(dir, *layer));
        }
    }
    if path.contains("/crates/test-support/") {
        return Some(Role::TestSupport);
    }
    path.contains("/crates/mock-api/").then_some(Role::Mock)
}

/// Every dependency edge that breaks the rule, as a readable sentence.
pub(crate) fn violations(packages: &[Package]) -> Vec<String> {
    let role_of = |name: &str| {
        packages
            .iter()
            .find(|p| p.name == name)
            .and_then(|p| role(&p.manifest_path))
    };
    let mut bad = Vec::new();
    for p in packages {
        let Some(from) = role(&p.manifest_path) else {
            continue; // tests/ and xtask may reach anything
        };
        for (dep, kind) in &p.deps {
            if kind == "dev" {
                continue;
            }
            let Some(to) = role_of(dep) else { continue };
            match (from, to) {
                (Role::Mock, Role::Product(..)) => bad.push(format!(
                    "{} -> {dep}: the mock must parse raw JSON and share no code with the product",
                    p.name
                )),
                (Role::Product(..), Role::Mock) => bad.push(format!(
                    "{} -> {dep}: the mock may only be a dev-dependency of a product crate",
                    p.name
                )),
                (Role::Product(..) | Role::Mock, Role::TestSupport) => bad.push(format!(
                    "{} -> {dep}: test support may only be a dev-dependency",
                    p.name
                )),
                (Role::Product(a, la), Role::Product(b, lb)) if lb >= la => bad.push(format!(
                    "{} ({a}, layer {la}) -> {dep} ({b}, layer {lb}): points up or sideways",
                    p.name
                )),
                (Role::TestSupport, _)
                | (Role::Mock, Role::Mock)
                | (Role::Product(..), Role::Product(..)) => {}
            }
        }
    }
    bad
}

/// Reads the workspace's packages from `cargo metadata --no-deps`.
pub(crate) fn workspace_packages(root: &Path) -> Result<Vec<Package>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(root)
        .output()
        .context("could not run cargo metadata")?;
    if !out.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let meta: Value = serde_json::from_slice(&out.stdout).context("cargo metadata: bad JSON")?;
    let Some(pkgs) = meta["packages"].as_array() else {
        bail!("cargo metadata: no packages array");
    };
    Ok(pkgs
        .iter()
        .map(|p| Package {
            name: p["name"].as_str().unwrap_or_default().to_string(),
            manifest_path: p["manifest_path"].as_str().unwrap_or_default().to_string(),
            deps: p["dependencies"]
                .as_array()
                .map(|deps| {
                    deps.iter()
                        .map(|d| {
                            (
                                d["name"].as_str().unwrap_or_default().to_string(),
                                d["kind"].as_str().unwrap_or("normal").to_string(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect())
}

pub(crate) fn check_workspace(root: &Path) -> Result<Vec<String>> {
    Ok(violations(&workspace_packages(root)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkg(name: &str, dir: &str, deps: &[(&str, &str)]) -> Package {
        Package {
            name: name.to_string(),
            manifest_path: format!("/ws/{dir}/Cargo.toml"),
            deps: deps
                .iter()
                .map(|(d, k)| (d.to_string(), k.to_string()))
                .collect(),
        }
    }

    fn sample(extra: Package) -> Vec<Package> {
        vec![
            pkg("tine-config", "crates/config", &[]),
            pkg("tine-api-client", "crates/api-client", &[]),
            pkg(
                "tine-tools",
                "crates/tools",
                &[("tine-api-client", "normal")],
            ),
            pkg("tine-query-loop", "crates/query-loop", &[]),
            pkg("tine-memory", "crates/memory", &[]),
            pkg("tine-compaction", "crates/compaction", &[]),
            pkg("tine-mock-api", "crates/mock-api", &[]),
            extra,
        ]
    }

    #[test]
    fn the_workspace_layering_holds() {
        let root = crate::workspace_root();
        let packages = workspace_packages(&root).expect("cargo metadata");
        assert!(
            packages.iter().any(|p| p.name == "tine-api-client"),
            "the check must see the product crates"
        );
        let bad = violations(&packages);
        assert!(bad.is_empty(), "layering violations:\n{}", bad.join("\n"));
    }

    #[test]
    fn downward_and_dev_edges_pass() {
        let p = pkg(
            "tine-cli",
            "crates/cli",
            &[("tine-memory", "normal"), ("tine-mock-api", "dev")],
        );
        assert!(violations(&sample(p)).is_empty());
    }

    #[test]
    fn the_permission_engine_sits_under_the_tools() {
        let up = pkg(
            "tine-permissions",
            "crates/permissions",
            &[("tine-tools", "normal")],
        );
        assert_eq!(violations(&sample(up)).len(), 1);
        let down = pkg(
            "tine-permissions",
            "crates/permissions",
            &[("tine-config", "normal"), ("tine-api-client", "normal")],
        );
        assert!(violations(&sample(down)).is_empty());
    }

    #[test]
    fn upward_edge_fails() {
        let p = pkg("tine-x", "crates/api-client", &[("tine-tools", "normal")]);
        let bad = violations(&sample(p));
        assert_eq!(bad.len(), 1, "{bad:?}");
        assert!(bad[0].contains("points up or sideways"));
    }

    #[test]
    fn sideways_edge_between_siblings_fails() {
        let p = pkg("tine-y", "crates/memory", &[("tine-compaction", "normal")]);
        assert_eq!(violations(&sample(p)).len(), 1);
    }

    #[test]
    fn config_is_the_ground_floor() {
        let p = pkg(
            "tine-config2",
            "crates/config",
            &[("tine-api-client", "normal")],
        );
        let bad = violations(&sample(p));
        assert_eq!(bad.len(), 1, "{bad:?}");
        assert!(bad[0].contains("(config, layer 0)"), "{}", bad[0]);
    }

    #[test]
    fn build_dependency_counts_like_normal() {
        let p = pkg("tine-z", "crates/tools", &[("tine-query-loop", "build")]);
        assert_eq!(violations(&sample(p)).len(), 1);
    }

    #[test]
    fn mock_never_shares_client_code() {
        let p = pkg(
            "tine-mock2",
            "crates/mock-api",
            &[("tine-api-client", "normal")],
        );
        let bad = violations(&sample(p));
        assert_eq!(bad.len(), 1);
        assert!(bad[0].contains("raw JSON"));
    }

    #[test]
    fn mock_as_normal_dependency_of_product_fails() {
        let p = pkg(
            "tine-w",
            "crates/query-loop",
            &[("tine-mock-api", "normal")],
        );
        let bad = violations(&sample(p));
        assert_eq!(bad.len(), 1);
        assert!(bad[0].contains("dev-dependency"));
    }

    #[test]
    fn test_support_is_a_dev_dependency_only() {
        let support = pkg(
            "tine-test-support",
            "crates/test-support",
            &[("tine-mock-api", "normal"), ("tine-memory", "normal")],
        );
        let mut packages = sample(support);
        packages.push(pkg(
            "tine-memory2",
            "crates/memory",
            &[("tine-test-support", "dev")],
        ));
        assert!(violations(&packages).is_empty(), "it may use anything");
        packages.push(pkg(
            "tine-tools2",
            "crates/tools",
            &[("tine-test-support", "normal")],
        ));
        let bad = violations(&packages);
        assert_eq!(bad.len(), 1, "{bad:?}");
        assert!(bad[0].contains("dev-dependency"));
    }

    #[test]
    fn tests_and_xtask_may_use_anything() {
        let p = pkg(
            "tine-e2e",
            "tests",
            &[("tine-mock-api", "normal"), ("tine-cli", "normal")],
        );
        assert!(violations(&sample(p)).is_empty());
    }
}
