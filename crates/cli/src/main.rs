//! `tine`: the terminal coding agent. Headless `-p` and the TUI land with later issues.

fn main() {
    eprintln!("tine: the agent loop lands with issue 5; nothing to run yet");
    std::process::exit(1);
}
