//! Link flags of the `tine` binary.
//!
//! Packed relative relocations (`-z pack-relative-relocs`, DT_RELR): the binary is a PIE with
//! about 54,000 relative relocations (vtables, static tables of pointers). As RELA entries they
//! take 1.27 MB that the dynamic loader reads whole at every start, so every run had them
//! resident; as RELR they take 16 KB. Measured on `tine -p hello`: peak RSS 17.6 -> 16.5 MiB
//! (`cargo xtask bench startup`). The loader must know DT_RELR (glibc 2.36): the flag is given
//! only when building on Linux/glibc for this machine with a glibc that has it, so the binary
//! always runs where it was built; `TINE_NO_RELR=1` leaves it out.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=TINE_NO_RELR");
    let target = std::env::var("TARGET").unwrap_or_default();
    let host = std::env::var("HOST").unwrap_or_default();
    let wanted = std::env::var_os("TINE_NO_RELR").is_none_or(|v| v.is_empty() || v == "0");
    if wanted && target == host && target.ends_with("-linux-gnu") && glibc_has_relr() {
        println!("cargo:rustc-link-arg-bin=tine=-Wl,-z,pack-relative-relocs");
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
