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
}

impl From<crate::toolbox::ToolboxError> for UserError {
    fn from(e: crate::toolbox::ToolboxError) -> Self {
        UserError {
            hint: e.hint(),
            message: crate::error::chain(&e),
        }
    }
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
