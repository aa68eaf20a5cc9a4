//! The integration tests of tine-config, one binary (see `suite/`).

mod suite;
