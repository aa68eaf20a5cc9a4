#![allow(clippy::unwrap_used, clippy::expect_used)]

mod batching;
mod demo_scenario;
mod dream_clean;
mod dream_gates;
mod dream_kill;
mod dream_race;
mod dream_support;
mod extraction;
mod fork_reads;
mod harness;
mod index_race;
mod magic_docs;
mod recall;
mod scenario;
