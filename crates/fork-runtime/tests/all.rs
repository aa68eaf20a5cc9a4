//! Integration tests of tine-fork-runtime (one test binary per crate).

mod suite;
