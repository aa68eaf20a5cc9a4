//! tine-mock-api: a faithful local simulator of the Anthropic Messages API, with prompt-cache
//! accounting, scripted replies and injected faults. It parses raw JSON and never depends on
//! `tine-api-client`, so a client bug shows up as a failure instead of being shared.
