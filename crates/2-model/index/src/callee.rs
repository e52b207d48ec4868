//! What a call is for, said by the entry point that makes it — the MCP handler, `call_tool`,
//! the CLI, a pipeline's step and a tool's nested call (a stored tool by name), a build or a
//! registration checking its examples (a staged candidate), `execute_code` (scratch code).
//! The gates (files against git, trust, approval, audit) and the runners (warm processes)
//! read the [`Origin`]; none of them guesses it from a directory's path.

use crate::Tool;
use std::path::{Path, PathBuf};

/// What kind of code a call runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A tool stored in the toolbox, as the index read it from `tools/<name>/`. Its files are
    /// compared with git, its version must be trusted, its grants approved; its calls are
    /// audited and it keeps warm processes.
    Stored,
    /// A candidate not stored yet: a build's or a registration's work directory checking its
    /// examples, an MCP entry's staged copy listing its tools. It is this request's own
    /// making: nothing of it arrived from elsewhere to be trusted, and it runs with the
    /// default grants only; nothing is kept warm for it.
    Staged,
    /// Code run once (`execute_code`) from a directory of its own: default grants only,
    /// nothing kept.
    Scratch,
}

/// One call's subject: the tool, the directory its files are in, and what it is.
#[derive(Clone, Debug)]
pub struct Callee {
    /// The tool as the index (or the staging step) parsed it.
    pub tool: Tool,
    /// Its files.
    pub dir: PathBuf,
    /// What it is.
    pub origin: Origin,
}

impl Callee {
    /// The stored tool `tool` in its directory under `tools_dir` (for a tool of an MCP
    /// entry's server: the entry's directory, where that server's files are).
    pub fn stored(tools_dir: &Path, tool: Tool) -> Callee {
        let dir = match &tool.upstream {
            Some(u) => tools_dir.join(&u.entry),
            None => tools_dir.join(tool.manifest.name.as_str()),
        };
        Callee {
            tool,
            dir,
            origin: Origin::Stored,
        }
    }

    /// A candidate `tool` staged in `dir`, not stored yet.
    pub fn staged(dir: &Path, tool: Tool) -> Callee {
        Callee {
            tool,
            dir: dir.to_path_buf(),
            origin: Origin::Staged,
        }
    }

    /// Scratch code in `dir`, run once.
    pub fn scratch(dir: &Path, tool: Tool) -> Callee {
        Callee {
            tool,
            dir: dir.to_path_buf(),
            origin: Origin::Scratch,
        }
    }
}

impl Origin {
    /// Whether this is a stored tool (gated, audited, kept warm).
    pub fn is_stored(self) -> bool {
        self == Origin::Stored
    }
}
