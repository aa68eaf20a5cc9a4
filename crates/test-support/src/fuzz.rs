//! The property suites' configuration (`crates/*/tests/suite/fuzz_*.rs`).

use proptest::test_runner::Config as ProptestConfig;

/// `default` cases under `cargo test`; `PROPTEST_CASES` (set by `cargo xtask fuzz --cases N`)
/// for more. Failures are not persisted: a suite reruns from its seed, not from a file.
pub fn fuzz_config(default: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}
