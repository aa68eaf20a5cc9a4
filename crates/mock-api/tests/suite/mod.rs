#![allow(clippy::unwrap_used, clippy::expect_used)]

mod binary;
mod cache_http;
mod chat;
mod conversation;
mod faults;
mod responses;
mod support;
mod validation;
