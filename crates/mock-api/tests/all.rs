//! The one integration-test binary of tine-mock-api: real HTTP against an in-process server.
mod suite;
