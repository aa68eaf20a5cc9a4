mod calls;
mod commands;
mod faults;
mod http;
mod sdk;
mod start;
mod support;
mod trust;
