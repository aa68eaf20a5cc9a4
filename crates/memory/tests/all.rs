//! tine-memory's integration tests, against the in-process mock.
mod suite;
