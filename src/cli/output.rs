//! How the CLI prints: tables for people, JSON for scripts, errors with a hint.

use crate::error::Hint;
use std::fmt;

/// An error for the person at the terminal: what went wrong, then what to do.
#[derive(Debug)]
pub struct UserError {
    pub message: String,
    pub hint: Option<String>,
}

impl fmt::Display for UserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for UserError {}

impl UserError {
    /// Already wrapped in `anyhow::Error`, so commands can `return Err(UserError::new(..))`.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(message: impl Into<String>, hint: impl Into<String>) -> anyhow::Error {
        anyhow::Error::new(UserError {
            message: message.into(),
            hint: Some(hint.into()),
        })
    }

    /// The one bridge from a library error to what the CLI prints: the error with its cause
    /// chain, and its hint when it has one (no `hint:` line when it has none).
    pub fn of<E: std::error::Error + Hint + 'static>(e: &E) -> UserError {
        UserError {
            message: crate::error::chain(e),
            hint: e.hint().filter(|h| !h.trim().is_empty()),
        }
    }

    /// The hint of `e` for a log line: ` (hint: …)`, or nothing when it has none.
    pub fn hint_suffix(e: &dyn Hint) -> String {
        e.hint()
            .filter(|h| !h.trim().is_empty())
            .map(|h| format!(" (hint: {h})"))
            .unwrap_or_default()
    }

    /// [`of`](UserError::of), as the `anyhow::Error` a command returns.
    pub fn wrap<E: std::error::Error + Hint + 'static>(e: &E) -> anyhow::Error {
        anyhow::Error::new(UserError::of(e))
    }
}

impl From<crate::toolbox::ToolboxError> for UserError {
    fn from(e: crate::toolbox::ToolboxError) -> Self {
        UserError::of(&e)
    }
}

/// A hint as the person at the terminal reads it: errors shared with the MCP surface name
/// meta-tools (`get_tool NAME`, `list_tools`, `search_tools`); here they name the commands that
/// do the same. Hints that already name a `toolsmith` command are left as they are.
pub fn for_terminal(hint: &str) -> String {
    // (MCP spelling, CLI spelling); a NAME after `get_tool` is kept.
    const SAME: &[(&str, &str)] = &[
        ("`get_tool `", "`toolsmith show `"),
        ("(`get_tool`)", "(`toolsmith show NAME`)"),
        ("`list_tools`", "`toolsmith list`"),
        ("`search_tools`", "`toolsmith search WORDS`"),
    ];
    let mut out = hint.to_string();
    for (mcp, cli) in SAME {
        if let Some(prefix) = mcp.strip_suffix('`').filter(|p| p.ends_with(' ')) {
            // `get_tool NAME`: the name follows.
            out = out.replace(prefix, cli.trim_end_matches('`'));
        } else {
            out = out.replace(mcp, cli);
        }
    }
    out
}

/// Print rows as an aligned plain-text table.
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if i < widths.len() {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
    }
    let mut out = String::new();
    let line = |cells: Vec<&str>, out: &mut String| {
        let last = cells.len().saturating_sub(1);
        for (i, c) in cells.iter().enumerate() {
            out.push_str(c);
            if i < last {
                out.push_str(&" ".repeat(widths[i] - c.chars().count() + 2));
            }
        }
        out.push('\n');
    };
    line(headers.to_vec(), &mut out);
    for row in rows {
        line(row.iter().map(String::as_str).collect(), &mut out);
    }
    out
}

/// Print JSON to stdout.
pub fn json(value: &serde_json::Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
    );
}

#[cfg(test)]
mod tests {
    use super::for_terminal;

    #[test]
    fn hints_name_the_terminals_commands() {
        assert_eq!(
            for_terminal("`get_tool add` shows the input schema"),
            "`toolsmith show add` shows the input schema"
        );
        assert_eq!(
            for_terminal("`list_tools` or `search_tools` shows the tools there are"),
            "`toolsmith list` or `toolsmith search WORDS` shows the tools there are"
        );
        assert_eq!(
            for_terminal(
                "check the arguments against the tool's input schema (`get_tool`), or fix the tool"
            ),
            "check the arguments against the tool's input schema (`toolsmith show NAME`), or fix the tool"
        );
        assert_eq!(
            for_terminal("run `toolsmith build x`"),
            "run `toolsmith build x`"
        );
    }
}
