//! Atomic, locked, committed writes of tool directories.

use super::{Toolbox, ToolboxError, io_err, layout};
use crate::git;
use crate::index::TOOLS_DIR;
use crate::manifest;
use std::path::{Component, Path, PathBuf};

/// One file of a tool directory to write.
#[derive(Debug, Clone)]
pub struct FileSpec {
    /// Relative path inside the tool directory.
    pub path: String,
    pub contents: Vec<u8>,
    pub executable: bool,
}

impl FileSpec {
    pub fn new(path: impl Into<String>, contents: impl Into<Vec<u8>>) -> FileSpec {
        FileSpec {
            path: path.into(),
            contents: contents.into(),
            executable: false,
        }
    }
}

/// The result of a write.
#[derive(Debug, Clone, serde::Serialize)]
pub struct WriteOutcome {
    pub name: String,
    /// The new commit, or None when the tool was already exactly so.
    pub commit: Option<String>,
    /// "add", "update" or "delete".
    pub action: &'static str,
}

/// Who makes a change: recorded as the `Actor:` trailer (the MCP client's name, or `cli`), and
/// for MCP sessions a `Session:` trailer that `undo_session` finds the session's commits by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    pub name: String,
    pub session: Option<String>,
}

impl From<&str> for Actor {
    fn from(name: &str) -> Actor {
        Actor {
            name: name.to_string(),
            session: None,
        }
    }
}

impl From<&String> for Actor {
    fn from(name: &String) -> Actor {
        Actor::from(name.as_str())
    }
}

impl From<&Actor> for Actor {
    fn from(a: &Actor) -> Actor {
        a.clone()
    }
}

impl Actor {
    /// The trailer lines for a commit message.
    pub fn trailers(&self) -> String {
        let mut t = format!("Actor: {}\n", self.name.replace('\n', " "));
        if let Some(s) = &self.session {
            t.push_str(&format!("Session: {s}\n"));
        }
        t
    }
}

/// The commit message: `<verb> <name>: <summary>` with `Tool:`, `Actor:` (and `Session:`)
/// trailers.
pub fn message(
    verb: &str,
    name: &str,
    summary: &str,
    actor: &Actor,
    extra: Option<&str>,
) -> String {
    let summary: String = summary
        .lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(72)
        .collect();
    let mut m = format!("{verb} {name}: {summary}\n\n");
    if let Some(body) = extra {
        m.push_str(body.trim_end());
        m.push_str("\n\n");
    }
    m.push_str(&format!("Tool: {name}\n"));
    m.push_str(&actor.trailers());
    m
}

/// Check a relative file path stays inside a tool directory.
fn check_rel(path: &str) -> Result<PathBuf, ToolboxError> {
    let bad = |reason: &str| ToolboxError::BadPath {
        path: path.to_string(),
        reason: reason.to_string(),
    };
    let p = Path::new(path);
    if path.is_empty() || p.is_absolute() {
        return Err(bad("it must be a non-empty relative path"));
    }
    for c in p.components() {
        match c {
            Component::Normal(s) => {
                let s = s.to_string_lossy();
                if s.chars().any(char::is_control) || s == ".git" {
                    return Err(bad("it contains a control character or a .git component"));
                }
            }
            _ => return Err(bad("it must not contain `..`, `.` or a root")),
        }
    }
    Ok(p.to_path_buf())
}

impl Toolbox {
    /// Take the write lock: serializes writers across threads and processes.
    pub(crate) fn lock(&self) -> Result<git::ProcessLock, ToolboxError> {
        Ok(git::lock(&self.root)?)
    }

    fn commit(
        &self,
        lock: &git::ProcessLock,
        name: &str,
        message: &str,
    ) -> Result<Option<String>, ToolboxError> {
        let prefix = format!("{TOOLS_DIR}/{name}");
        Ok(git::commit_dirs_locked(
            lock,
            &self.root,
            &[prefix.as_str()],
            message,
            &layout::signature(&self.root),
        )?)
    }

    fn hidden(&self, what: &str, name: &str) -> PathBuf {
        let unique = format!(
            "{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        );
        self.tools_dir().join(format!(".{what}-{name}-{unique}"))
    }

    /// Write a tool directory (replacing any previous one entirely) and commit it.
    /// The manifest inside `files` must parse, and its name must equal `name`.
    pub fn write_tool(
        &self,
        name: &str,
        files: &[FileSpec],
        actor: impl Into<Actor>,
    ) -> Result<WriteOutcome, ToolboxError> {
        let actor: Actor = actor.into();
        let final_dir = self.tool_dir(name)?;
        for f in files {
            check_rel(&f.path)?;
        }
        let summary = files
            .iter()
            .find(|f| f.path == manifest::FILE_NAME)
            .and_then(|f| std::str::from_utf8(&f.contents).ok())
            .and_then(|t| manifest::parse(Path::new(""), Some(name), t).ok())
            .map(|p| p.manifest.summary().to_string())
            .unwrap_or_default();

        // Prepare the new directory beside its final place, outside the lock.
        let staging = self.hidden("staging", name);
        let result = (|| {
            for f in files {
                let path = staging.join(check_rel(&f.path)?);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(io_err("create", parent))?;
                }
                std::fs::write(&path, &f.contents).map_err(io_err("write", &path))?;
                #[cfg(unix)]
                if f.executable {
                    use std::os::unix::fs::PermissionsExt;
                    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                        .map_err(io_err("chmod", &path))?;
                }
            }
            let lock = self.lock()?;
            let existed = final_dir.exists();
            self.swap_in(&staging, &final_dir, name)?;
            let verb = if existed { "update" } else { "add" };
            let msg = message(verb, name, &summary, &actor, None);
            let commit = self.commit(&lock, name, &msg)?;
            Ok(WriteOutcome {
                name: name.to_string(),
                commit,
                action: if existed { "update" } else { "add" },
            })
        })();
        if staging.exists() {
            let _ = std::fs::remove_dir_all(&staging);
        }
        result
    }

    /// Commit the tool directory as it is on disk now (after it was changed in place, e.g. by
    /// a build that wrote its artifact), with the given verb.
    pub fn commit_tool(
        &self,
        name: &str,
        verb: &str,
        actor: impl Into<Actor>,
        body: Option<&str>,
    ) -> Result<WriteOutcome, ToolboxError> {
        let actor: Actor = actor.into();
        let dir = self.tool_dir(name)?;
        let lock = self.lock()?;
        let summary = std::fs::read_to_string(dir.join(manifest::FILE_NAME))
            .ok()
            .and_then(|t| manifest::parse(Path::new(""), Some(name), &t).ok())
            .map(|p| p.manifest.summary().to_string())
            .unwrap_or_default();
        let msg = message(verb, name, &summary, &actor, body);
        let commit = self.commit(&lock, name, &msg)?;
        Ok(WriteOutcome {
            name: name.to_string(),
            commit,
            action: "update",
        })
    }

    /// Delete a tool as one commit. Its history stays in git.
    pub fn delete_tool(
        &self,
        name: &str,
        actor: impl Into<Actor>,
    ) -> Result<WriteOutcome, ToolboxError> {
        let actor = actor.into();
        let dir = self.tool_dir(name)?;
        let lock = self.lock()?;
        if !dir.exists() {
            return Err(ToolboxError::NoSuchTool {
                name: name.to_string(),
            });
        }
        let summary = std::fs::read_to_string(dir.join(manifest::FILE_NAME))
            .ok()
            .and_then(|t| manifest::parse(Path::new(""), Some(name), &t).ok())
            .map(|p| p.manifest.summary().to_string())
            .unwrap_or_else(|| "removed".into());
        let trash = self.hidden("trash", name);
        std::fs::rename(&dir, &trash).map_err(io_err("move aside", &dir))?;
        let msg = message("delete", name, &summary, &actor, None);
        let commit = self.commit(&lock, name, &msg);
        match commit {
            Ok(commit) => {
                let _ = std::fs::remove_dir_all(&trash);
                Ok(WriteOutcome {
                    name: name.to_string(),
                    commit,
                    action: "delete",
                })
            }
            Err(e) => {
                let _ = std::fs::rename(&trash, &dir);
                Err(e.into())
            }
        }
    }

    /// Put `staging` at `final_dir`: move any old directory aside, rename the new one in,
    /// then drop the old one. A crash in between is repaired by `recover`.
    fn swap_in(&self, staging: &Path, final_dir: &Path, name: &str) -> Result<(), ToolboxError> {
        if final_dir.exists() {
            let trash = self.hidden("trash", name);
            std::fs::rename(final_dir, &trash).map_err(io_err("move aside", final_dir))?;
            if let Err(e) = std::fs::rename(staging, final_dir) {
                let _ = std::fs::rename(&trash, final_dir);
                return Err(ToolboxError::Io {
                    action: "move into place",
                    path: final_dir.to_path_buf(),
                    source: e,
                });
            }
            let _ = std::fs::remove_dir_all(&trash);
        } else {
            std::fs::rename(staging, final_dir).map_err(io_err("move into place", final_dir))?;
        }
        Ok(())
    }

    /// Finish or undo writes a crash interrupted: drop half-prepared staging directories, and
    /// put an old tool directory back when the crash came between moving it aside and moving
    /// the new one in.
    pub(crate) fn recover(&self) -> Result<(), ToolboxError> {
        let Ok(rd) = std::fs::read_dir(self.tools_dir()) else {
            return Ok(());
        };
        let mut leftovers: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
        leftovers.retain(|p| {
            p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.starts_with(".staging-") || n.starts_with(".trash-")
            })
        });
        if leftovers.is_empty() {
            return Ok(());
        }
        let _lock = self.lock()?;
        leftovers.sort();
        for p in leftovers {
            let file = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            // ".<what>-<name>-<pid>-<nanos>": a live process may still be preparing it.
            let mut parts = file.rsplitn(3, '-');
            let (_nanos, pid, rest) = (parts.next(), parts.next(), parts.next().unwrap_or(""));
            if pid
                .and_then(|p| p.parse::<i32>().ok())
                .is_some_and(process_alive)
            {
                continue;
            }
            if let Some(name) = rest.strip_prefix(".trash-") {
                let target = self.tools_dir().join(name);
                if crate::names::validate(name).is_ok() && !target.exists() {
                    tracing::warn!(
                        tool = name,
                        "restoring a tool directory after an interrupted write"
                    );
                    std::fs::rename(&p, &target).map_err(io_err("restore", &target))?;
                    continue;
                }
            }
            tracing::warn!(path = %p.display(), "removing a leftover of an interrupted write");
            if let Err(e) = std::fs::remove_dir_all(&p) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    return Err(ToolboxError::Io {
                        action: "remove",
                        path: p,
                        source: e,
                    });
                }
            }
        }
        Ok(())
    }
}

/// Whether a process with this pid exists (so its in-flight write must be left alone).
fn process_alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill(2) with signal 0 only checks for existence and permission; no signal is sent.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}
