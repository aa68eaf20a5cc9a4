//! The integration tests of tine-tools, one binary (see `suite/`).

mod suite;
