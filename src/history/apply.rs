//! Put several tool directories into a given state (files, or absent) and commit them as ONE
//! commit, with the toolbox's staged, locked, atomic write discipline.

use super::{FileAt, HistoryError};
use crate::git::{self, Signature};
use crate::index::TOOLS_DIR;
use crate::names;
use crate::toolbox::Toolbox;
use std::path::{Component, Path, PathBuf};

/// The state a tool directory should have after [`apply`].
#[derive(Debug, Clone)]
pub enum Change {
    /// Exactly these files.
    Write(Vec<FileAt>),
    /// No directory.
    Remove,
}

/// Directories (ignored by git) that hold a tool's environment or build output; carried over
/// into the new directory only when the caller says the environment is still valid.
const ENV_DIRS: &[&str] = &[
    ".venv",
    "node_modules",
    "target",
    "__pycache__",
    ".toolsmith",
];

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> HistoryError {
    let path = path.to_path_buf();
    move |source| HistoryError::Io {
        action,
        path,
        source,
    }
}

/// A relative file path inside a tool directory: no `..`, no root, no `.git`.
pub(crate) fn check_rel(path: &str) -> Result<PathBuf, HistoryError> {
    let bad = || HistoryError::Io {
        action: "refuse the path",
        path: PathBuf::from(path),
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "it leaves the tool directory or names .git",
        ),
    };
    let p = Path::new(path);
    if path.is_empty() || p.is_absolute() {
        return Err(bad());
    }
    for c in p.components() {
        match c {
            Component::Normal(s) if s != ".git" && !s.to_string_lossy().contains('\0') => {}
            _ => return Err(bad()),
        }
    }
    Ok(p.to_path_buf())
}

/// The commit identity: like the toolbox's own (the repository's git identity, else toolsmith).
fn signature(root: &Path) -> Signature {
    let get = |key: &str| -> Option<String> {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(["config", "--get", key])
            .output()
            .ok()?;
        let v = String::from_utf8(out.stdout).ok()?.trim().to_string();
        (!v.is_empty()).then_some(v)
    };
    Signature {
        name: get("user.name").unwrap_or_else(|| "toolsmith".into()),
        email: get("user.email").unwrap_or_else(|| "toolsmith@localhost".into()),
    }
}

fn hidden(tb: &Toolbox, what: &str, name: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    // The toolbox's crash recovery knows this shape: .<what>-<name>-<pid>-<nanos>.
    tb.tools_dir()
        .join(format!(".{what}-{name}-{}-{nanos}", std::process::id()))
}

pub(crate) fn write_files(dir: &Path, files: &[FileAt]) -> Result<(), HistoryError> {
    std::fs::create_dir_all(dir).map_err(io("create", dir))?;
    for f in files {
        let path = dir.join(check_rel(&f.path)?);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io("create", parent))?;
        }
        std::fs::write(&path, &f.bytes).map_err(io("write", &path))?;
        #[cfg(unix)]
        if f.executable {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .map_err(io("chmod", &path))?;
        }
    }
    Ok(())
}

/// Bring every named tool directory into its state and make one commit with `message`.
/// `keep_env` names tools whose environment directories (`.venv`, `node_modules`, ...) are
/// moved into the new directory; for the others they are dropped and rebuilt lazily.
/// Returns the commit, or None when nothing changed.
pub fn apply(
    tb: &Toolbox,
    changes: &[(String, Change)],
    message: &str,
    keep_env: &[String],
) -> Result<Option<String>, HistoryError> {
    for (name, change) in changes {
        names::validate(name)?;
        if let Change::Write(files) = change {
            for f in files {
                check_rel(&f.path)?;
            }
        }
    }
    // Prepare outside the lock.
    let mut staged: Vec<(String, Option<PathBuf>)> = Vec::new();
    let cleanup = |staged: &[(String, Option<PathBuf>)]| {
        for (_, s) in staged {
            if let Some(s) = s {
                let _ = std::fs::remove_dir_all(s);
            }
        }
    };
    for (name, change) in changes {
        match change {
            Change::Write(files) => {
                let dir = hidden(tb, "staging", name);
                staged.push((name.clone(), Some(dir.clone())));
                if let Err(e) = write_files(&dir, files) {
                    cleanup(&staged);
                    return Err(e);
                }
            }
            Change::Remove => staged.push((name.clone(), None)),
        }
    }

    let lock = match tb.lock() {
        Ok(l) => l,
        Err(e) => {
            cleanup(&staged);
            return Err(e.into());
        }
    };
    // Swap every directory; remember how to undo it.
    let mut swapped: Vec<(PathBuf, Option<PathBuf>)> = Vec::new(); // (final, trash)
    let undo = |swapped: &[(PathBuf, Option<PathBuf>)]| {
        for (fin, trash) in swapped.iter().rev() {
            let _ = std::fs::remove_dir_all(fin);
            if let Some(t) = trash {
                let _ = std::fs::rename(t, fin);
            }
        }
    };
    let mut result = Ok(());
    for (name, stage) in &staged {
        let fin = tb.tools_dir().join(name);
        let trash = if fin.exists() {
            let t = hidden(tb, "trash", name);
            if let Err(e) = std::fs::rename(&fin, &t) {
                result = Err(io("move aside", &fin)(e));
                break;
            }
            Some(t)
        } else {
            None
        };
        if let (Some(t), Some(s)) = (&trash, stage)
            && keep_env.contains(name)
        {
            for d in ENV_DIRS {
                if t.join(d).is_dir() {
                    let _ = std::fs::rename(t.join(d), s.join(d));
                }
            }
        }
        swapped.push((fin.clone(), trash));
        if let Some(s) = stage
            && let Err(e) = std::fs::rename(s, &fin)
        {
            result = Err(io("move into place", &fin)(e));
            break;
        }
    }
    let prefixes: Vec<String> = changes
        .iter()
        .map(|(n, _)| format!("{TOOLS_DIR}/{n}"))
        .collect();
    let refs: Vec<&str> = prefixes.iter().map(String::as_str).collect();
    let commit = result.and_then(|()| {
        git::commit_dirs_locked(&lock, tb.root(), &refs, message, &signature(tb.root()))
            .map_err(HistoryError::from)
    });
    match commit {
        Ok(c) => {
            for (_, trash) in &swapped {
                if let Some(t) = trash {
                    let _ = std::fs::remove_dir_all(t);
                }
            }
            Ok(c)
        }
        Err(e) => {
            undo(&swapped);
            cleanup(&staged);
            Err(e)
        }
    }
}
