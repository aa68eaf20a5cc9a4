//! tine-mcp's integration tests: real rmcp servers (the `tine-mcp-test-server` binary over
//! stdio, the same server in-process over streamable HTTP and behind an SDK app's relay) driven
//! through the real `Tool` trait, `run_tool` and the permission engine.

mod suite;
