//! The integration tests of tine-api-client: one binary, modules in `suite/`.
mod suite;
