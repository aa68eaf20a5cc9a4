//! Integration tests of tine-query-loop's public API (one test binary per crate).

mod suite;
