//! The public writes of a toolbox (`write_tool`, `commit_tool`, `delete_tool`), the commit
//! message and the actor recorded in it; all go through [`Toolbox::apply`]. And writing a
//! tool's files into a directory (the staging step of every write).

use super::{Change, Toolbox, ToolboxError, io_err};
use crate::manifest;
use crate::names;
use std::path::Path;

/// One file of a tool directory to write.
#[derive(Debug, Clone)]
pub struct FileSpec {
    /// Relative path inside the tool directory.
    pub path: String,
    /// What the file holds.
    pub contents: Vec<u8>,
    /// Whether it is written executable (git mode 100755).
    pub executable: bool,
}

impl FileSpec {
    /// A file that is not executable.
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
    /// The tool.
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
    /// The `Actor:` trailer.
    pub name: String,
    /// The `Session:` trailer (an MCP session's id).
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

impl Toolbox {
    /// Write a tool directory (replacing any previous one entirely) and commit it: the
    /// single-tool case of [`Toolbox::apply`]. The manifest inside `files` must parse, and its
    /// name must equal `name`.
    pub fn write_tool(
        &self,
        name: &str,
        files: &[FileSpec],
        actor: impl Into<Actor>,
    ) -> Result<WriteOutcome, ToolboxError> {
        let actor: Actor = actor.into();
        let final_dir = self.tool_dir(name)?;
        for f in files {
            crate::names::check_file_path(&f.path)?;
        }
        let summary = files
            .iter()
            .find(|f| f.path == manifest::FILE_NAME)
            .and_then(|f| std::str::from_utf8(&f.contents).ok())
            .and_then(|t| manifest::parse(Path::new(""), Some(name), t).ok())
            .map(|p| p.manifest.summary().to_string())
            .unwrap_or_default();
        let existed = final_dir.exists();
        let verb = if existed { "update" } else { "add" };
        let msg = message(verb, name, &summary, &actor, None);
        let change = Change::Write {
            files: files.to_vec(),
            keep_env: false,
        };
        let commit = self.apply(&[(name.to_string(), change)], &msg)?;
        Ok(WriteOutcome {
            name: name.to_string(),
            commit,
            action: verb,
        })
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
        let summary = read_summary(&dir, name).unwrap_or_default();
        let msg = message(verb, name, &summary, &actor, body);
        let commit = self.apply(&[(name.to_string(), Change::InPlace)], &msg)?;
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
        if !dir.exists() {
            return Err(ToolboxError::NoSuchTool {
                name: name.to_string(),
            });
        }
        let summary = read_summary(&dir, name).unwrap_or_else(|| "removed".into());
        let msg = message("delete", name, &summary, &actor, None);
        let commit = self.apply(&[(name.to_string(), Change::Remove)], &msg)?;
        Ok(WriteOutcome {
            name: name.to_string(),
            commit,
            action: "delete",
        })
    }
}

fn read_summary(dir: &Path, name: &str) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(manifest::FILE_NAME)).ok()?;
    manifest::parse(Path::new(""), Some(name), &text)
        .ok()
        .map(|p| p.manifest.summary().to_string())
}

/// Write `files` into `dir` (created), after checking every path with the one rule set.
pub fn write_files(dir: &Path, files: &[FileSpec]) -> Result<(), ToolboxError> {
    std::fs::create_dir_all(dir).map_err(io_err("create", dir))?;
    for f in files {
        let path = dir.join(names::check_file_path(&f.path)?);
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
    Ok(())
}
