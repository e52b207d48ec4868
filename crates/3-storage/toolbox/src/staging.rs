//! A candidate tool staged before it is committed (a registration, an MCP entry): its files in
//! a hidden directory beside the tools (`tools/.staging-<name>-<pid>-<nanos>`, which the index
//! and the watcher ignore), hashed and tried there, removed when the candidate is dropped.
//! The one way the making crates stage a tool.

use crate::index::{Callee, Tool};
use crate::{FileSpec, Toolbox, ToolboxError, io_err};
use std::path::{Path, PathBuf};

/// A staged candidate tool. Its directory is removed when this is dropped.
#[derive(Debug)]
pub struct Staging {
    dir: PathBuf,
}

impl Staging {
    /// A new, empty staging directory for the tool `name` (already validated) in `tb`.
    pub fn new(tb: &Toolbox, name: &str) -> Result<Staging, ToolboxError> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let dir = tb
            .tools_dir()
            .join(format!(".staging-{name}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(io_err("create", &dir))?;
        Ok(Staging { dir })
    }

    /// Where the candidate's files are.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Write `files` into the candidate (each path checked by the one rule set, as every write
    /// into a tool directory is).
    pub fn write(&self, files: &[FileSpec]) -> Result<(), ToolboxError> {
        crate::write_files(&self.dir, files)
    }

    /// The source hash of the files staged so far (what its tool.toml records).
    pub fn source_hash(&self) -> Result<String, ToolboxError> {
        crate::hashing::source_hash(&self.dir, None).map_err(io_err("hash", &self.dir))
    }

    /// The candidate as a call's subject: staged, not stored (no trust or approval of a stored
    /// version applies, nothing is kept warm for it).
    pub fn callee(&self, tool: Tool) -> Callee {
        Callee::staged(&self.dir, tool)
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_staged_candidate_is_hidden_checked_and_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let tb = Toolbox::init(&tmp.path().join("box"), &[], "test").unwrap();
        let staged = Staging::new(&tb, "echo").unwrap();
        let dir = staged.path().to_path_buf();
        assert!(dir.starts_with(tb.tools_dir()));
        assert!(
            dir.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".staging-echo-"),
            "hidden, so the index ignores it: {dir:?}"
        );
        staged
            .write(&[FileSpec::new("main.py", "print(1)\n")])
            .unwrap();
        assert!(staged.source_hash().unwrap().starts_with("sha256:"));
        // A path outside the one rule set is refused, as in every tool directory.
        assert!(staged.write(&[FileSpec::new("../escape", "x")]).is_err());
        assert!(!tb.tools_dir().join("escape").exists());
        drop(staged);
        assert!(!dir.exists(), "removed when dropped");
    }
}
