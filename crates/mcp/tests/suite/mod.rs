mod calls;
mod commands;
mod faults;
mod http;
mod start;
mod support;
mod trust;
