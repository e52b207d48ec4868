//! Tool names, file paths inside a tool and free text (descriptions): the one check each
//! passes wherever it enters (MCP, CLI, imports, history, builds, disk).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

use thiserror::Error;

/// Longest tool name accepted. MCP clients cap tool names at 64 characters.
pub const MAX_NAME_LEN: usize = 64;

/// The server's own meta-tools: a stored tool may not take one of these names (it is also
/// exposed under its own name, so a clash would shadow one). The MCP layer's registry of
/// meta-tools is tested to list exactly these.
pub const META_TOOL_NAMES: &[&str] = &[
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
    "import_mcp",
    "undo_session",
    "sync",
];

/// Other names a stored tool may not take: names that mean something to git or to some file
/// systems.
pub const RESERVED_NAMES: &[&str] = &["git", "con", "nul", "aux", "prn", "tools", "toolsmith"];

/// Why a tool name was refused.
/// Each variant is told by its `#[error]` message; the fields are what the message names.
#[allow(missing_docs)]
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

impl toolsmith_error::Hint for NameError {
    /// What the user can do about it.
    fn hint(&self) -> Option<String> {
        Some(match self {
            NameError::Reserved { .. } => {
                "pick another name; reserved names (toolsmith's own tools, git and device names, and any name starting with \"toolsmith\") belong to toolsmith".into()
            }
            _ => "use a name like `word_count` or `json-format`: lowercase letters, digits, '_' and '-', starting with a letter, at most 64 characters".into(),
        })
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
    // A tool named like toolsmith itself could pass its questions and output for toolsmith's
    // (also spelt with look-alikes: `too1smith`, `t00lsmith`, `toolsrnith`, `tool_smith`).
    let joined: String = name.chars().filter(|c| *c != '_' && *c != '-').collect();
    if RESERVED_NAMES.contains(&name)
        || META_TOOL_NAMES.contains(&name)
        || reads_as(&joined).starts_with(&reads_as("toolsmith"))
    {
        return Err(NameError::Reserved {
            name: name.to_string(),
        });
    }
    Ok(())
}

/// Check the name an MCP server gives one of its tools (it becomes `<entry>__<name>`): MCP's
/// tool-name characters (ASCII letters, digits, `_`, `-`, `.`), at most [`MAX_NAME_LEN`]
/// characters. Never a path: upstream names name no file.
pub fn validate_upstream(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the name is empty".into());
    }
    if name.len() > MAX_NAME_LEN {
        return Err(format!(
            "the name is {} characters long; the limit is {MAX_NAME_LEN}",
            name.len()
        ));
    }
    match name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        Some(c) => Err(format!(
            "the name {:?} has the character U+{:04X}; MCP tool names use ASCII letters, digits, `_`, `-` and `.`",
            name.escape_debug().to_string(),
            c as u32
        )),
        None => Ok(()),
    }
}

/// Longest relative file path accepted inside a tool directory, in bytes.
pub const MAX_PATH_LEN: usize = 1024;

/// The manifest's file name inside a tool directory (`manifest::FILE_NAME`): here, with the
/// other names of a tool's layout, so that what hashes a tool's files needs nothing above this.
pub const MANIFEST_FILE: &str = "tool.toml";

/// Directory names that never belong to a tool's committed files: build output, environments,
/// caches and git itself (they are ignored by git, so a file there would be silently lost).
pub const RESERVED_DIRS: &[&str] = &[
    "target",
    ".venv",
    "node_modules",
    "__pycache__",
    ".toolsmith",
    ".git",
];

/// Why a file path inside a tool was refused.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("file path {path:?} is not allowed: {reason}")]
pub struct PathError {
    /// The path as given.
    pub path: String,
    /// Which rule it broke.
    pub reason: String,
}

impl toolsmith_error::Hint for PathError {
    fn hint(&self) -> Option<String> {
        Some("use a relative `/`-separated path inside the tool directory, of plain visible characters, without `.`, `..`, `.git` or build/environment directories (target, node_modules, .venv, ...)".into())
    }
}

/// Characters that are invisible or reorder text: control characters, bidirectional
/// overrides/isolates/marks, zero-width characters, the BOM and other format characters.
/// Text containing them can show a reviewer something other than what runs.
pub fn is_invisible(c: char) -> bool {
    c.is_control()
        || unicode_general_category::get_general_category(c)
            == unicode_general_category::GeneralCategory::Format
        || matches!(c,
            '\u{00AD}'                 // soft hyphen
            | '\u{034F}'               // combining grapheme joiner
            | '\u{061C}'               // arabic letter mark
            | '\u{115F}' | '\u{1160}'  // hangul fillers
            | '\u{17B4}' | '\u{17B5}'
            | '\u{180B}'..='\u{180F}'  // mongolian variation selectors, vowel separator
            | '\u{200B}'..='\u{200F}'  // zero-width space/joiners, LRM, RLM
            | '\u{202A}'..='\u{202E}'  // bidi embeddings and overrides
            | '\u{2060}'..='\u{206F}'  // word joiner, invisible operators, bidi isolates
            | '\u{3164}'               // hangul filler
            | '\u{FE00}'..='\u{FE0F}'  // variation selectors
            | '\u{FEFF}'               // BOM / zero-width no-break space
            | '\u{FFA0}'
            | '\u{FFF9}'..='\u{FFFB}'  // interlinear annotations
            | '\u{E0000}'..='\u{E007F}' // tags
            | '\u{E0100}'..='\u{E01EF}')
}

/// What `text` looks like to a reader, in plain lower-case letters: invisible and format
/// characters dropped, compatibility forms folded (NFKC: full-width letters, ligatures), every
/// character replaced by the one it is confusable with (the UTS 39 skeleton: Cyrillic "а" and
/// Latin "a", "1" and "l", "rn" and "m" read alike), lower-cased.
pub fn reads_as(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let visible: String = text
        .chars()
        .filter(|c| !is_invisible(*c) || c.is_whitespace())
        .nfkc()
        .collect();
    unicode_security::skeleton(&visible.to_lowercase())
        .collect::<String>()
        .to_lowercase()
}

/// The first invisible character of `text` that is not ordinary whitespace in prose
/// (newline and tab are allowed in free text), with its character position.
pub fn find_invisible(text: &str) -> Option<(usize, char)> {
    text.chars()
        .enumerate()
        .find(|(_, c)| *c != '\n' && *c != '\t' && *c != '\r' && is_invisible(*c))
}

/// Check a relative file path inside a tool directory. This is the one rule set for every
/// path that reaches a tool directory (writes, history restores, imports, builds):
/// non-empty, at most [`MAX_PATH_LEN`] bytes, relative, `/`-separated, no empty, `.` or `..`
/// component, no backslash, no `.git` (any case) or [`RESERVED_DIRS`] component, and no
/// control, bidirectional or other invisible character.
pub fn check_file_path(path: &str) -> Result<std::path::PathBuf, PathError> {
    let bad = |reason: &str| PathError {
        path: path.to_string(),
        reason: reason.to_string(),
    };
    if path.is_empty() || path.starts_with('/') || std::path::Path::new(path).is_absolute() {
        return Err(bad("it must be a non-empty relative path"));
    }
    if path.len() > MAX_PATH_LEN {
        return Err(bad(&format!(
            "it is {} bytes long; the limit is {MAX_PATH_LEN}",
            path.len()
        )));
    }
    if path.contains('\\') {
        return Err(bad("use `/` as the separator, not a backslash"));
    }
    if let Some((pos, c)) = path.chars().enumerate().find(|(_, c)| is_invisible(*c)) {
        return Err(bad(&format!(
            "it contains the invisible or control character U+{:04X} at position {pos}",
            c as u32
        )));
    }
    for part in path.split('/') {
        if part.is_empty() || part == "." || part == ".." {
            return Err(bad("it must not contain empty, `.` or `..` components"));
        }
        if part.eq_ignore_ascii_case(".git") || RESERVED_DIRS.contains(&part) {
            return Err(bad(&format!(
                "{part:?} is reserved (git, build output or an environment, never committed)"
            )));
        }
    }
    Ok(std::path::PathBuf::from(path))
}

/// Check free text shown to people and models (a description, a summary): no control,
/// bidirectional or other invisible characters (newlines and tabs are fine).
pub fn check_text(field: &str, text: &str) -> Result<(), String> {
    match find_invisible(text) {
        None => Ok(()),
        Some((pos, c)) => Err(format!(
            "{field} contains the invisible or control character U+{:04X} at position {pos}",
            c as u32
        )),
    }
}

/// A valid tool name made from arbitrary text (lowercase, `_` for other characters).
pub fn sanitize(text: &str) -> String {
    let mut s: String = text
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !s.starts_with(|c: char| c.is_ascii_lowercase()) {
        s.insert(0, 't');
    }
    s.truncate(MAX_NAME_LEN);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_paths_follow_one_rule_set() {
        for ok in ["main.py", "src/lib.rs", "a/b/c.txt", "données.txt"] {
            assert!(check_file_path(ok).is_ok(), "{ok}");
        }
        for (bad, want) in [
            ("", "non-empty"),
            ("/etc/passwd", "relative"),
            ("../x", "`..`"),
            ("a/./b", "`.`"),
            ("a//b", "empty"),
            ("a\\b", "backslash"),
            (".git/config", "reserved"),
            ("x/.GIT/hooks", "reserved"),
            ("target/x", "reserved"),
            ("node_modules/y.js", "reserved"),
            ("a\u{202E}txt.py", "U+202E"),
            ("a\u{200B}.py", "U+200B"),
            ("a\nb", "U+000A"),
        ] {
            let e = check_file_path(bad).expect_err(bad).to_string();
            assert!(e.contains(want), "{bad:?}: {e}");
        }
        assert!(check_file_path(&"a".repeat(MAX_PATH_LEN + 1)).is_err());
    }

    #[test]
    fn text_refuses_bidi_and_invisible_characters() {
        assert!(check_text("description", "Counts words.\nTab\tok").is_ok());
        for c in [
            '\u{202E}',
            '\u{2066}',
            '\u{200B}',
            '\u{FEFF}',
            '\u{7}',
            '\u{E0041}',
        ] {
            let e = check_text("description", &format!("ab{c}cd")).expect_err("refused");
            assert!(e.contains("position 2"), "{e}");
        }
    }

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
