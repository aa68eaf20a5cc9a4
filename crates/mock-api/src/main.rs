//! `tine-mock`: the simulator as a standalone server.

fn main() {
    eprintln!("tine-mock: the simulator lands with issue 3; nothing to serve yet");
    std::process::exit(1);
}
