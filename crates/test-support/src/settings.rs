//! A scratch place for settings files: a project with its `.tine/`, a tine home, and a managed
//! settings path, none of them written yet.

use std::path::{Path, PathBuf};

use tine_config::SettingsPaths;

/// The settings files of a scratch project (deleted on drop): `paths.user`, `paths.project`,
/// `paths.local` and `paths.managed` can be written with [`write()`].
pub struct SettingsFixture {
    _dir: tempfile::TempDir,
    pub paths: SettingsPaths,
}

impl SettingsFixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("project");
        let home = dir.path().join("home/.tine");
        std::fs::create_dir_all(cwd.join(".tine")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let paths = SettingsPaths::new(&cwd, &home).with_managed(dir.path().join("managed.json"));
        SettingsFixture { _dir: dir, paths }
    }

    /// The paths with a user home (the tine home's parent, with an empty `.claude/`), so
    /// Claude Code's user settings file is read too; and that home.
    pub fn with_user_home(&self) -> (SettingsPaths, PathBuf) {
        let home = self._dir.path().join("home");
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        (self.paths.clone().with_user_home(&home), home)
    }
}

impl Default for SettingsFixture {
    fn default() -> Self {
        Self::new()
    }
}

/// Writes `value` to `path`.
pub fn write(path: &Path, value: &str) {
    std::fs::write(path, value).unwrap();
}
