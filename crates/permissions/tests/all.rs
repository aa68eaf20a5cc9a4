//! The integration tests of tine-permissions, one binary (see `suite/`).

mod suite;
