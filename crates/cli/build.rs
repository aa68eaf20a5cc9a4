//! Link flags of the `tine` binary: what `tine -p hello` keeps resident is mostly the
//! binary's own pages (`TINE_PROFILE_STARTUP=1` shows where they go), and two flags cut them.
//!
//! - Packed relative relocations (`-z pack-relative-relocs`, DT_RELR): the binary is a PIE
//!   with about 54,000 relative relocations (vtables, static tables of pointers). As RELA
//!   entries they take 1.27 MB that the dynamic loader reads whole at every start; as RELR,
//!   16 KB. Measured on `tine -p hello`: peak RSS 17.6 -> 16.5 MiB. The loader must know
//!   DT_RELR (glibc 2.36): the flag is given only when building on Linux/glibc for this machine
//!   with a glibc that has it, so the binary always runs where it was built; `TINE_NO_RELR=1`
//!   leaves it out.
//! - The start-up layout (`startup-layout.ld`, written by `cargo xtask startup-layout`): the
//!   functions a `tine -p` run and a resume run, placed together before the rest of the code.
//!   The kernel maps a file's pages 64 KiB around each fault, so the 2 MiB of functions a
//!   run needs, scattered over 24 MiB of code, kept 12.5 MiB of it resident; together they
//!   keep about their size (peak RSS 17.8 -> 8.5 MiB). Release builds only, with a linker
//!   that takes a linker script's `INSERT` (lld, the default here, and GNU ld; not mold or
//!   gold). Only the order changes: a function the layout names that no longer exists is
//!   ignored, one it misses stays where it was.
//!
//! `TINE_LINK_MAP=PATH` writes the link map there (`cargo xtask startup-layout` reads it).

use std::process::Command;

/// The layout, beside this file.
const LAYOUT: &str = "startup-layout.ld";

fn main() {
    println!("cargo:rerun-if-env-changed=TINE_NO_RELR");
    println!("cargo:rerun-if-env-changed=TINE_LINK_MAP");
    println!("cargo:rerun-if-changed={LAYOUT}");
    let target = std::env::var("TARGET").unwrap_or_default();
    let host = std::env::var("HOST").unwrap_or_default();
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    let wanted = std::env::var_os("TINE_NO_RELR").is_none_or(|v| v.is_empty() || v == "0");
    if wanted && target == host && target.ends_with("-linux-gnu") && glibc_has_relr() {
        println!("cargo:rustc-link-arg-bin=tine=-Wl,-z,pack-relative-relocs");
    }
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let layout =
        std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join(LAYOUT);
    if linux && release && layout.is_file() && linker_takes_insert() {
        println!("cargo:rustc-link-arg-bin=tine=-Wl,-T,{}", layout.display());
    }
    if let Some(map) = std::env::var_os("TINE_LINK_MAP").filter(|m| !m.is_empty()) {
        println!(
            "cargo:rustc-link-arg-bin=tine=-Wl,-Map,{}",
            map.to_string_lossy()
        );
    }
}

/// Whether this machine's glibc is 2.36 or newer (`getconf GNU_LIBC_VERSION`: "glibc 2.36").
fn glibc_has_relr() -> bool {
    let Ok(output) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let Some(version) = text.trim().strip_prefix("glibc ") else {
        return false;
    };
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (2, 36)
}

/// Whether the linker takes a partial linker script (`INSERT BEFORE`): lld (rustc's default on
/// x86_64 Linux) and GNU ld do; mold and gold, when the flags or the configured linker name
/// them, do not.
fn linker_takes_insert() -> bool {
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let linker = std::env::var("RUSTC_LINKER").unwrap_or_default();
    ![flags.as_str(), linker.as_str()]
        .iter()
        .any(|text| text.contains("mold") || text.contains("gold"))
}
