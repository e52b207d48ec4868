//! Tests for the git layer, with the git CLI as the oracle.

use super::*;

mod commit;
mod reading;
use std::process::Command;
use std::sync::Arc;

fn sig() -> Signature {
    Signature {
        name: "Tool Smith".into(),
        email: "smith@example.com".into(),
    }
}

/// A toolbox repository in a temp dir plus an empty HOME for the git CLI (no identity, no
/// user config).
struct Fixture {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
}

impl Fixture {
    fn empty() -> Fixture {
        let tmp = tempfile::tempdir().expect("create temp dir");
        let home = tmp.path().join("home");
        std::fs::create_dir(&home).expect("create HOME");
        let repo = tmp.path().join("box");
        Fixture {
            _tmp: tmp,
            home,
            repo,
        }
    }

    /// A toolbox with a .gitignore, a README and one tool `tools/a`.
    fn toolbox() -> Fixture {
        let fx = Fixture::empty();
        init_with_files(
            &fx.repo,
            &[
                (".gitignore", DEFAULT_GITIGNORE.as_bytes()),
                ("README.md", b"# toolbox\n"),
                ("tools/a/tool.toml", b"name = \"a\"\n"),
                ("tools/a/main.py", b"print('a')\n"),
            ],
            "init toolbox",
            &sig(),
        )
        .expect("init toolbox");
        fx
    }

    fn git_output(&self, args: &[&str]) -> std::process::Output {
        Command::new("git")
            .args(args)
            .current_dir(&self.repo)
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            .env_remove("GIT_AUTHOR_NAME")
            .env_remove("GIT_AUTHOR_EMAIL")
            .env_remove("GIT_COMMITTER_NAME")
            .env_remove("GIT_COMMITTER_EMAIL")
            .env_remove("EMAIL")
            .output()
            .expect("run git")
    }

    fn git(&self, args: &[&str]) -> String {
        let out = self.git_output(args);
        assert!(
            out.status.success(),
            "git {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("git prints UTF-8 here")
    }

    fn write(&self, rela: &str, content: &[u8]) {
        let path = self.repo.join(rela);
        std::fs::create_dir_all(path.parent().expect("has parent")).expect("mkdir");
        std::fs::write(&path, content).expect("write file");
    }

    fn make_executable(&self, rela: &str) {
        use std::os::unix::fs::PermissionsExt;
        let path = self.repo.join(rela);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    fn head(&self) -> String {
        self.git(&["rev-parse", "HEAD"]).trim().to_owned()
    }

    fn count(&self) -> usize {
        self.git(&["rev-list", "--count", "HEAD"])
            .trim()
            .parse()
            .expect("a number")
    }

    /// `git status` clean, index == HEAD tree exactly, fsck strict clean, no lock left behind.
    fn assert_consistent(&self) {
        assert_eq!(
            self.git(&["status", "--porcelain", "--untracked-files=all"]),
            "",
            "git status must be clean"
        );
        assert_eq!(
            self.git(&["diff-files", "--name-status"]),
            "",
            "work tree must match index"
        );
        assert_eq!(
            self.git(&["write-tree"]),
            self.git(&["rev-parse", "HEAD^{tree}"]),
            "index must match HEAD's tree exactly"
        );
        let fsck = self.git_output(&["fsck", "--strict", "--no-dangling"]);
        assert!(
            fsck.status.success() && fsck.stdout.is_empty() && fsck.stderr.is_empty(),
            "git fsck --strict: {}{}",
            String::from_utf8_lossy(&fsck.stdout),
            String::from_utf8_lossy(&fsck.stderr)
        );
        assert!(
            !self.repo.join(".git/index.lock").exists(),
            "index.lock left behind"
        );
    }

    fn last_message(&self) -> String {
        self.git(&["log", "-1", "--format=%B"])
    }

    fn ls_files(&self) -> String {
        self.git(&["ls-files", "-s"])
    }
}
