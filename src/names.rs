//! Tool names: the one check every name passes wherever it enters (MCP, CLI, imports, disk).

use thiserror::Error;

/// Longest tool name accepted. MCP clients cap tool names at 64 characters.
pub const MAX_NAME_LEN: usize = 64;

/// Names a stored tool may not take: the server's own meta-tools (a stored tool is also exposed
/// under its own name, so a clash would shadow one), and names that mean something to git or
/// to some file systems.
pub const RESERVED_NAMES: &[&str] = &[
    "list_tools",
    "get_tool",
    "search_tools",
    "call_tool",
    "delete_tool",
    "build_tool",
    "register_script",
    "tool_history",
    "diff_tool",
    "rollback_tool",
    "restore_tool",
    "import_tool",
    "update_tool",
    "export_tool",
    "pipeline",
    "memory",
    "execute_code",
    "undo_session",
    "git",
    "con",
    "nul",
    "aux",
    "prn",
    "tools",
    "toolsmith",
];

/// Why a tool name was refused.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum NameError {
    #[error("tool name is empty")]
    Empty,
    #[error("tool name is {len} characters long; the limit is {MAX_NAME_LEN}")]
    TooLong { len: usize },
    #[error(
        "tool name {name:?} has the character {ch:?} at position {pos}; allowed are a-z, 0-9, '_' and '-'"
    )]
    BadChar { name: String, ch: char, pos: usize },
    #[error("tool name {name:?} must start with a lowercase letter a-z")]
    BadStart { name: String },
    #[error("tool name {name:?} is reserved")]
    Reserved { name: String },
}

impl NameError {
    /// What the user can do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            NameError::Reserved { .. } => {
                "pick another name; reserved names belong to toolsmith's own tools"
            }
            _ => {
                "use a name like `word_count` or `json-format`: lowercase letters, digits, '_' and '-', starting with a letter, at most 64 characters"
            }
        }
    }
}

/// Check a tool name. A valid name is safe as a single path component, an MCP tool name and a
/// git tree entry: it can never contain a separator, `..`, a control character or whitespace.
pub fn validate(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    let len = name.chars().count();
    if len > MAX_NAME_LEN {
        return Err(NameError::TooLong { len });
    }
    for (pos, ch) in name.chars().enumerate() {
        let ok = ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_' || ch == '-';
        if !ok {
            return Err(NameError::BadChar {
                name: name.to_string(),
                ch,
                pos,
            });
        }
    }
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Err(NameError::BadStart {
            name: name.to_string(),
        });
    }
    if RESERVED_NAMES.contains(&name) {
        return Err(NameError::Reserved {
            name: name.to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_ordinary_names() {
        for n in ["word_count", "json-format", "a", "x1", &"a".repeat(64)] {
            assert_eq!(validate(n), Ok(()), "{n}");
        }
    }

    #[test]
    fn refuses_hostile_names() {
        let long = "a".repeat(300);
        let cases: &[(&str, &str)] = &[
            ("", "empty"),
            ("../x", "character '.'"),
            ("/abs", "character '/'"),
            ("a/b", "character '/'"),
            ("a\\b", "character '\\\\'"),
            (".git", "character '.'"),
            ("..", "character '.'"),
            ("a\nb", "character '\\n'"),
            ("a\u{7}b", "character '\\u{7}'"),
            ("a b", "character ' '"),
            ("Word", "character 'W'"),
            ("1abc", "must start"),
            ("_x", "must start"),
            ("call_tool", "reserved"),
            ("git", "reserved"),
            (&long, "300 characters"),
        ];
        for (name, want) in cases {
            let err = validate(name).expect_err(name).to_string();
            assert!(err.contains(want), "{name:?}: {err}");
        }
    }
}
