//! The session layer against the in-process mock, through the real engine and tools.

mod suite;
