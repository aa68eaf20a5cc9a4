//! End-to-end tests of the built `tine` binary against the in-process mock API.
mod suite;
