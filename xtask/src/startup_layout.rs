//! `cargo xtask startup-layout`: writes `crates/cli/startup-layout.ld`, the order in which
//! the `tine` binary's start-up code is laid out.
//!
//! Why: a run's resident code is not the code it runs but every 64 KiB window of the binary it
//! touches (the kernel maps a file's neighbouring pages on each fault: fault-around). The
//! functions `tine -p hello` runs are about 2 MiB, scattered over 24 MiB of code, so the run
//! had 12.5 MiB of it resident. Placed together they take their own size.
//!
//! How: a release build linked with a map (`TINE_LINK_MAP`, read by `crates/cli/build.rs`);
//! `tine -p hello` (a first run, then a warm one), a resumed `tine -c -p` in a git repository
//! and a profiled `tine -p hello` (`TINE_PROFILE_STARTUP=1`) against the simulator, each under valgrind's lackey, which prints the address of every block of code
//! run; each address mapped through the link map to its function's section. The layout lists
//! those functions in the order they first ran (the warm run, then what the resume adds, then
//! what only a first run does, then the profile's own), each by a pattern with what depends on the build a wildcard
//! (`pattern`), so it holds for a build with other features or dependency versions (the
//! bench's, a workspace build, `cargo install`) until the functions themselves change.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::demo::{start_mock, target_dir};
use crate::symbol_pattern::pattern;

/// The layout, relative to the workspace root (`crates/cli/build.rs` links it in).
const LAYOUT: &str = "crates/cli/startup-layout.ld";

pub(crate) fn run(root: &Path) -> Result<()> {
    if Command::new("valgrind")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_err()
    {
        bail!("startup-layout traces tine under valgrind: install it (apt-get install valgrind)");
    }
    let release = target_dir(root).join("release");
    let map_path = release.join("tine.map");
    build(root, &map_path)?;
    let map = LinkMap::read(&map_path)?;
    let tine = release.join("tine");
    let entry = elf_entry(&tine)?;

    let scratch = Scratch::new()?;
    let scenario = scratch.0.join("scenario.json");
    std::fs::write(&scenario, "{}").context("writing the scenario")?;
    let mock = start_mock(&target_dir(root).join("debug"), &scenario)?;
    let flows = Flows {
        tine: &tine,
        home: scratch.0.join("home"),
        base_url: mock.base_url.clone(),
        trace: scratch.0.join("trace.txt"),
    };
    std::fs::create_dir_all(&flows.home).context("creating the scratch home")?;
    let project = scratch.0.join("project");
    std::fs::create_dir_all(&project).context("creating the scratch project")?;
    // As the start-up bench runs them: `-p hello` in a plain folder; the resume in a git
    // repository (its context has the git status), memory off.
    let hello = Run::new(&project, &["-p", "hello"]);
    let first = flows.traced(&hello)?;
    let warm = flows.traced(&hello)?;
    let repository = git_repository(&scratch.0.join("repository"))?;
    let memory_off = [("TINE_DISABLE_AUTO_MEMORY", "1")];
    flows.native(&Run::new(&repository, &["-p", "what is a monad?"]).env(&memory_off))?;
    flows.native(&Run::new(&repository, &["-c", "-p", "and a functor?"]).env(&memory_off))?;
    let resumed = flows
        .traced(&Run::new(&repository, &["-c", "-p", "one more question"]).env(&memory_off))?;
    // Last, so it stays out of the way: what `TINE_PROFILE_STARTUP=1` adds, so the profile
    // barely measures itself.
    let profiled = flows.traced(&hello.env(&[("TINE_PROFILE_STARTUP", "1")]))?;

    let mut ran = Vec::new();
    let mut seen = HashSet::new();
    for (name, trace) in [
        ("warm", &warm),
        ("resume", &resumed),
        ("first", &first),
        ("profiled", &profiled),
    ] {
        let before = ran.len();
        let base = load_base(trace, entry, &map)
            .with_context(|| format!("the {name} run's trace holds no code of tine"))?;
        for &address in trace {
            if let Some(section) = address.checked_sub(base).and_then(|a| map.section_at(a))
                && seen.insert(section)
            {
                ran.push(section);
            }
        }
        eprintln!(
            "{name} run: {} blocks, {} functions more",
            trace.len(),
            ran.len() - before
        );
    }
    let bytes: u64 = ran.iter().map(|&i| map.sections[i].size).sum();
    let names: Vec<&str> = ran.iter().map(|&i| map.sections[i].name.as_str()).collect();
    let text = layout(&names, bytes);
    std::fs::write(root.join(LAYOUT), text).with_context(|| format!("writing {LAYOUT}"))?;
    println!(
        "{LAYOUT}: {} functions, {:.2} MiB; rebuild (cargo build --release) and run `cargo xtask bench startup`",
        names.len(),
        bytes as f64 / 1048576.0
    );
    Ok(())
}

/// The release `tine` (with its link map at `map`) and `tine-mock`.
fn build(root: &Path, map: &Path) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let args = ["build", "--release", "-p", "tine-cli", "--bin", "tine"];
    eprintln!("$ TINE_LINK_MAP={} cargo {}", map.display(), args.join(" "));
    let status = Command::new(cargo)
        .args(args)
        .env("TINE_LINK_MAP", map)
        .current_dir(root)
        .status()
        .context("could not start cargo")?;
    if !status.success() {
        bail!("the release build failed ({status})");
    }
    // The simulator apart (a debug build): built with tine, it would change the features of
    // the dependencies they share, and so the binary traced.
    crate::cargo(
        root,
        &[
            "build",
            "--quiet",
            "-p",
            "tine-mock-api",
            "--bin",
            "tine-mock",
        ],
    )
}

/// The scratch directory, removed however the command ends.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Self> {
        let dir = std::env::temp_dir().join(format!("tine-startup-layout-{}", std::process::id()));
        std::fs::create_dir_all(&dir).context("creating the scratch directory")?;
        Ok(Self(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One run of `tine`: where, its arguments, and what it adds to the environment.
#[derive(Clone, Copy)]
struct Run<'a> {
    project: &'a Path,
    args: &'a [&'a str],
    env: &'a [(&'a str, &'a str)],
}

impl<'a> Run<'a> {
    fn new(project: &'a Path, args: &'a [&'a str]) -> Self {
        Self {
            project,
            args,
            env: &[],
        }
    }

    fn env(self, env: &'a [(&'a str, &'a str)]) -> Self {
        Self { env, ..self }
    }
}

/// The runs, all with one TINE_HOME, as the start-up bench has them.
struct Flows<'a> {
    tine: &'a Path,
    home: PathBuf,
    base_url: String,
    trace: PathBuf,
}

impl Flows<'_> {
    fn command(&self, program: &Path, run: &Run<'_>) -> Command {
        let mut command = Command::new(program);
        command
            .current_dir(run.project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("TINE_HOME", &self.home)
            .env("ANTHROPIC_API_KEY", "layout")
            .env("ANTHROPIC_BASE_URL", &self.base_url)
            .envs(run.env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        command
    }

    fn native(&self, run: &Run<'_>) -> Result<()> {
        let status = self
            .command(self.tine, run)
            .args(run.args)
            .status()
            .context("could not run tine")?;
        if !status.success() {
            bail!("tine {} failed ({status})", run.args.join(" "));
        }
        Ok(())
    }

    /// The start address of every block of code the run ran, in the order each first ran.
    fn traced(&self, run: &Run<'_>) -> Result<Vec<u64>> {
        let status = self
            .command(Path::new("valgrind"), run)
            .args(["--tool=lackey", "--trace-superblocks=yes"])
            .arg(format!("--log-file={}", self.trace.display()))
            .arg(self.tine)
            .args(run.args)
            .status()
            .context("could not run valgrind")?;
        if !status.success() {
            bail!(
                "tine {} under valgrind failed ({status})",
                run.args.join(" ")
            );
        }
        let file = std::fs::File::open(&self.trace).context("reading the trace")?;
        let mut seen = HashSet::new();
        let mut blocks = Vec::new();
        for line in BufReader::new(file).lines() {
            let line = line.context("reading the trace")?;
            let Some(hex) = line.strip_prefix("SB ") else {
                continue;
            };
            let hex = hex.trim().trim_start_matches("0x");
            if let Ok(address) = u64::from_str_radix(hex, 16)
                && seen.insert(address)
            {
                blocks.push(address);
            }
        }
        std::fs::remove_file(&self.trace).context("removing the trace")?;
        Ok(blocks)
    }
}

/// A git repository at `dir` with two files, committed.
fn git_repository(dir: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(dir.join("src")).context("creating the repository")?;
    std::fs::write(dir.join("README.md"), "# shop\n\nA small web shop.\n")
        .context("writing the repository")?;
    std::fs::write(dir.join("src/app.py"), "def foo():\n    return 1\n")
        .context("writing the repository")?;
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &["commit", "-q", "-m", "start"],
    ] {
        let status = Command::new("git")
            .args([
                "-c",
                "user.name=layout",
                "-c",
                "user.email=layout@example.com",
            ])
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .status()
            .context("could not run git")?;
        if !status.success() {
            bail!("git {} failed ({status})", args.join(" "));
        }
    }
    Ok(dir.to_path_buf())
}

/// Where valgrind loaded the binary: the page-aligned offset from the entry point to a traced
/// block at which the most traced blocks start a function.
fn load_base(trace: &[u64], entry: u64, map: &LinkMap) -> Option<u64> {
    let starts: HashSet<u64> = map.sections.iter().map(|s| s.address).collect();
    let candidates: HashSet<u64> = trace
        .iter()
        .filter_map(|&a| a.checked_sub(entry))
        .filter(|base| base % 4096 == 0)
        .collect();
    candidates
        .into_iter()
        .map(|base| {
            let hits = trace
                .iter()
                .filter(|&&a| a.checked_sub(base).is_some_and(|a| starts.contains(&a)))
                .count();
            (hits, base)
        })
        .filter(|&(hits, _)| hits > 0)
        .max()
        .map(|(_, base)| base)
}

/// The entry point of an ELF64 executable.
fn elf_entry(path: &Path) -> Result<u64> {
    let mut header = [0u8; 32];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut header))
        .with_context(|| format!("reading {}", path.display()))?;
    if &header[..4] != b"\x7fELF" || header[4] != 2 {
        bail!("{} is not a 64-bit ELF executable", path.display());
    }
    let mut entry = [0u8; 8];
    entry.copy_from_slice(&header[24..32]);
    Ok(u64::from_le_bytes(entry))
}

/// One function's section in the link map.
struct Section {
    address: u64,
    size: u64,
    /// `.text.SYMBOL`.
    name: String,
}

/// The code sections of lld's link map (`-Map`), by address.
struct LinkMap {
    sections: Vec<Section>,
}

impl LinkMap {
    /// lld's map: `VMA LMA SIZE ALIGN` then the output section one space in, each input
    /// section nine spaces in (`FILE:(SECTION)`), its symbols further in.
    fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the link map {}", path.display()))?;
        let mut sections = Vec::new();
        let mut in_code = false;
        for line in text.lines() {
            let mut rest = line;
            let mut fields = [0u64; 4];
            let mut parsed = true;
            for (i, field) in fields.iter_mut().enumerate() {
                let trimmed = rest.trim_start();
                let end = trimmed.find(' ').unwrap_or(trimmed.len());
                let radix = if i == 3 { 10 } else { 16 };
                match u64::from_str_radix(&trimmed[..end], radix) {
                    Ok(value) => *field = value,
                    Err(_) => parsed = false,
                }
                rest = &trimmed[end..];
            }
            if !parsed {
                continue;
            }
            let name = rest.trim_start();
            let indent = rest.len() - name.len();
            if indent == 1 {
                in_code = name.starts_with(".text");
            } else if in_code
                && indent < 16
                && let Some(open) = name.rfind(":(")
            {
                let section = name[open + 2..].trim_end_matches(')');
                if section.starts_with(".text.") {
                    sections.push(Section {
                        address: fields[0],
                        size: fields[2],
                        name: section.to_owned(),
                    });
                }
            }
        }
        if sections.is_empty() {
            bail!(
                "{} holds no code sections: is it lld's map (the default linker)?",
                path.display()
            );
        }
        sections.sort_by_key(|s| s.address);
        Ok(Self { sections })
    }

    /// The index of the section holding `address`.
    fn section_at(&self, address: u64) -> Option<usize> {
        let i = self
            .sections
            .partition_point(|s| s.address <= address)
            .checked_sub(1)?;
        let section = &self.sections[i];
        (address < section.address + section.size).then_some(i)
    }
}

/// The linker script: an output section of its own, before `.text`, holding the functions
/// that ran, in the order they first ran.
fn layout(names: &[&str], bytes: u64) -> String {
    let mut text = format!(
        "/* The start-up layout of the `tine` binary: the {} functions (about {} KiB) that\n   \
         `tine -p hello` and a resumed `tine -c -p` run, in the order they first ran, placed\n   \
         together before the rest of the code, so a run keeps only their pages resident.\n   \
         Each is named with what depends on the build (crate hashes, offsets) a wildcard.\n   \
         Generated by `cargo xtask startup-layout` (xtask/src/startup_layout.rs says how);\n   \
         linked in by crates/cli/build.rs. Do not edit: generate it again when `cargo xtask\n   \
         bench startup` shows more code resident outside it. */\n\
         SECTIONS\n{{\n  .text.hot :\n  {{\n",
        names.len(),
        bytes / 1024
    );
    let mut written = HashSet::new();
    for name in names {
        let pattern = pattern(name);
        if written.insert(pattern.clone()) {
            text.push_str(&format!("    *({pattern})\n"));
        }
    }
    text.push_str("  }\n}\nINSERT BEFORE .text;\n");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_map_gives_each_address_its_function() {
        let dir = std::env::temp_dir().join(format!("tine-layout-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tine.map");
        std::fs::write(
            &path,
            "             VMA              LMA     Size Align Out     In      Symbol\n\
             \x20         1000             1000      100    16 .rodata\n\
             \x20         1000             1000      100    16         a.o:(.rodata.x)\n\
             \x20         2000             2000      200    64 .text\n\
             \x20         2000             2000       22    16         crt1.o:(.text)\n\
             \x20         2030             2030       40    16         lib.rlib(a.o):(.text._ZN1a1f17h0123456789abcdefE)\n\
             \x20         2030             2030       40     1                 a::f::h0123456789abcdef\n\
             \x20         2070             2070       10    16         lib.rlib(a.o):(.text.main)\n",
        )
        .unwrap();
        let map = LinkMap::read(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(map.sections.len(), 2);
        assert_eq!(map.section_at(0x2031), Some(0));
        assert_eq!(map.section_at(0x2075), Some(1));
        assert_eq!(map.section_at(0x2080), None);
        assert_eq!(map.section_at(0x1010), None);
        // The entry point (_start at 0x2000) traced at base 0x108000.
        let trace = [0x10a000, 0x10a030, 0x10a070, 0x10a040];
        assert_eq!(load_base(&trace, 0x2000, &map), Some(0x108000));
    }
}
