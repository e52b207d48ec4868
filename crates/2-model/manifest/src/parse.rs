//! Parsing tool.toml text into a `Manifest`, with diagnostics that point at file, line and field.

use super::{FILE_NAME, Manifest, validate};
use serde::Serialize;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The manifest cannot be used.
    Error,
    /// Usable; something is probably not what was meant (an unknown field).
    Warning,
}

/// One problem found in a manifest, located as precisely as the text allows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The manifest file.
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column, when known.
    pub column: Option<usize>,
    /// Dotted field path, e.g. `run.entry`, when the problem belongs to one field.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, ": {sev}: ")?;
        if let Some(field) = &self.field {
            write!(f, "field `{field}`: ")?;
        }
        write!(f, "{}", self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

/// A successfully parsed manifest and the warnings found on the way.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The manifest.
    pub manifest: Manifest,
    /// What was found on the way (unknown fields), never errors.
    pub warnings: Vec<Diagnostic>,
}

/// Parse and validate the text of a tool.toml. `file` is only used in diagnostics;
/// `dir_name` is the tool directory's name, which the `name` field must equal (None skips
/// that check). Pure: no IO.
pub fn parse(file: &Path, dir_name: Option<&str>, text: &str) -> Result<Parsed, Vec<Diagnostic>> {
    let loc = Locator::new(file, text);
    let doc = match toml_edit::Document::parse(text) {
        Ok(doc) => doc,
        Err(e) => {
            return Err(vec![loc.diag(
                Severity::Error,
                e.span(),
                None,
                e.message().trim().to_string(),
                Some("fix the TOML syntax (fields: toolsmith://guide)".into()),
            )]);
        }
    };

    let mut unknown = Vec::new();
    let de = toml_edit::de::Deserializer::from(doc.clone());
    let manifest: Manifest =
        match serde_ignored::deserialize(de, |path| unknown.push(path.to_string())) {
            Ok(m) => m,
            Err(e) => {
                let message = e
                    .message()
                    .trim()
                    .replace("expected u64", "expected a non-negative integer")
                    .replace("expected u32", "expected a non-negative integer");
                let field = field_from_message(&message);
                return Err(vec![loc.diag(
                    Severity::Error,
                    e.span(),
                    field,
                    message,
                    Some("fields and types: the toolsmith://guide resource".into()),
                )]);
            }
        };

    let mut warnings: Vec<Diagnostic> = unknown
        .into_iter()
        .map(|path| {
            let span = span_of(&doc, &path);
            loc.diag(
                Severity::Warning,
                span,
                Some(path.clone()),
                "unknown field; it is ignored".into(),
                Some("check the spelling (fields: toolsmith://guide)".into()),
            )
        })
        .collect();

    let mut errors = Vec::new();
    for issue in validate::validate(&manifest, dir_name) {
        let span = span_of(&doc, &issue.field);
        let d = loc.diag(
            issue.severity,
            span,
            Some(issue.field),
            issue.message,
            issue.hint,
        );
        match issue.severity {
            Severity::Error => errors.push(d),
            Severity::Warning => warnings.push(d),
        }
    }
    if doc.get("format").is_none() {
        warnings.push(loc.diag(
            Severity::Warning,
            None,
            Some("format".into()),
            format!(
                "no format version; assuming format = {}",
                super::FORMAT_VERSION
            ),
            Some(format!(
                "add `format = {}` at the top",
                super::FORMAT_VERSION
            )),
        ));
    }
    if errors.is_empty() {
        Ok(Parsed { manifest, warnings })
    } else {
        errors.extend(warnings);
        Err(errors)
    }
}

/// Serde messages name the field in backticks ("missing field `name`"); use that as the field.
fn field_from_message(message: &str) -> Option<String> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(message[start..start + len].to_string())
}

/// Find the span of a dotted path (`run.entry`, `examples.0.input`) in the document: the
/// deepest part of the path that exists.
fn span_of<S>(doc: &toml_edit::Document<S>, path: &str) -> Option<Range<usize>> {
    let mut item: &toml_edit::Item = doc.as_item();
    let mut best = None;
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let next = match part.parse::<usize>() {
            Ok(i) if item.is_array() || item.is_array_of_tables() => item.get(i),
            _ => item.get(part),
        };
        match next {
            Some(n) => {
                // A key's span (for tables) is more useful than the whole table's.
                if let Some(table) = item.as_table_like()
                    && let Some((key, _)) = table.get_key_value(part)
                {
                    best = key.span().or(best);
                }
                if let Some(s) = n.span()
                    && !n.is_table()
                {
                    best = Some(s);
                }
                item = n;
            }
            None => break,
        }
    }
    best
}

/// Turns byte offsets into lines and columns.
struct Locator<'a> {
    file: &'a Path,
    text: &'a str,
}

impl<'a> Locator<'a> {
    fn new(file: &'a Path, text: &'a str) -> Self {
        Self { file, text }
    }

    fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = &self.text[..offset];
        let line = before.matches('\n').count() + 1;
        let col = before.rfind('\n').map(|i| offset - i).unwrap_or(offset + 1);
        (line, col)
    }

    fn diag(
        &self,
        severity: Severity,
        span: Option<Range<usize>>,
        field: Option<String>,
        message: String,
        hint: Option<String>,
    ) -> Diagnostic {
        let (line, column) = match span {
            Some(s) => {
                let (l, c) = self.line_col(s.start);
                (Some(l), Some(c))
            }
            None => (None, None),
        };
        let file = if self.file.as_os_str().is_empty() {
            PathBuf::from(FILE_NAME)
        } else {
            self.file.to_path_buf()
        };
        Diagnostic {
            severity,
            file,
            line,
            column,
            field,
            message,
            hint,
        }
    }
}
