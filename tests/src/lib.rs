//! tine-e2e: end-to-end tests of the built `tine` binary, run against `tine-mock`.
//! The tests live in `tests/all.rs` (one integration-test binary, `mod suite;`).
