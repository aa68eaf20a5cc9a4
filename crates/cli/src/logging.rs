//! Logs go to a file under `$TINE_HOME/logs/`, only with `--verbose` or `TINE_LOG` set; never to
//! stdout, never secrets (the client marks credentials sensitive and nothing here logs them).

use std::path::Path;
use std::sync::Mutex;

use tine_config::private_fs;
use tracing_subscriber::EnvFilter;

/// Installs the file subscriber when asked for. Returns the log file's path, if any. Failing to
/// open the file is reported once and otherwise ignored: logs are never worth failing a run.
pub(crate) fn init(home: &Path, verbose: bool) -> Option<std::path::PathBuf> {
    init_with_default(home, verbose.then_some("debug"))
}

/// [`init`] with the filter used when `TINE_LOG` is unset (`None`: no log then). The
/// interactive UI always logs (info), since nothing of it may reach the screen.
pub(crate) fn init_with_default(home: &Path, default: Option<&str>) -> Option<std::path::PathBuf> {
    let filter = match std::env::var("TINE_LOG") {
        Ok(spec) if !spec.trim().is_empty() => spec,
        _ => default?.to_owned(),
    };
    let dir = home.join("logs");
    // tine's state is private: the directory 0700, the log 0600 (tine_config::private_fs).
    if let Err(error) = private_fs::create_dir_all(&dir) {
        eprintln!(
            "tine: warning: cannot create the log directory {}: {error}",
            dir.display()
        );
        return None;
    }
    let path = dir.join("tine.log");
    let file = match private_fs::open_append(&path) {
        Ok(file) => file,
        Err(error) => {
            eprintln!(
                "tine: warning: cannot open the log file {}: {error}",
                path.display()
            );
            return None;
        }
    };
    let filter = EnvFilter::try_new(&filter).unwrap_or_else(|_| EnvFilter::new("debug"));
    let installed = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(Mutex::new(file))
        .try_init();
    installed.is_ok().then_some(path)
}
