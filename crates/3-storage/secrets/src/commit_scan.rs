//! The commit scan: before `Toolbox::apply` builds a commit, the files going into it are
//! searched for credentials — the values of secrets stored on this machine, and common
//! credential formats (GitHub, AWS, OpenAI/Anthropic-style keys, Slack tokens and webhooks,
//! private key blocks). A finding names the file and line and never repeats the value.

use std::path::Path;
use std::sync::OnceLock;

/// Stored secret values shorter than this are not searched for (too many false matches).
pub const MIN_STORED_LEN: usize = 8;
/// Files larger than this are not scanned for formats (stored values are still searched).
const MAX_TEXT_BYTES: usize = 4 << 20;

/// One credential found in a file about to be committed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The path, relative to what was scanned.
    pub path: String,
    /// 1-based line.
    pub line: usize,
    /// What it looks like ("a GitHub token", "the value of the secret API_KEY").
    pub what: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.path, self.line, self.what)
    }
}

fn formats() -> &'static [(regex::Regex, &'static str)] {
    static F: OnceLock<Vec<(regex::Regex, &'static str)>> = OnceLock::new();
    F.get_or_init(|| {
        [
            (r"\bgh[pousr]_[A-Za-z0-9]{36,}", "a GitHub token"),
            (
                r"\bgithub_pat_[A-Za-z0-9_]{22,}",
                "a GitHub fine-grained token",
            ),
            (r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", "an AWS access key id"),
            (
                r#"(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?[A-Za-z0-9/+=]{40}\b"#,
                "an AWS secret access key",
            ),
            (r"\bsk-ant-[A-Za-z0-9_\-]{20,}", "an Anthropic API key"),
            (
                r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{32,}",
                "an OpenAI-style API key",
            ),
            (r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", "a Slack token"),
            (
                r"https://hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+",
                "a Slack webhook URL",
            ),
            (
                r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
                "a private key block",
            ),
        ]
        .into_iter()
        .filter_map(|(re, what)| regex::Regex::new(re).ok().map(|r| (r, what)))
        .collect()
    })
}

fn line_of(text: &[u8], offset: usize) -> usize {
    text[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The scan of one change: the stored values' forms searched for with one automaton, made
/// once for every file of the change.
pub struct Scanner {
    stored: crate::redact::Finder,
}

impl Scanner {
    /// A scanner for the secrets stored on this machine, `stored` (name, value).
    pub fn new(stored: &[(String, String)]) -> Scanner {
        let long: Vec<(String, String)> = stored
            .iter()
            .filter(|(_, v)| v.len() >= MIN_STORED_LEN)
            .cloned()
            .collect();
        Scanner {
            stored: crate::redact::Finder::new(&long),
        }
    }

    /// Scan one file's bytes.
    pub fn bytes(&self, path: &str, bytes: &[u8]) -> Vec<Finding> {
        let mut out = Vec::new();
        let text = String::from_utf8_lossy(bytes);
        // Every form a script reaches first (base64, hex, URL-encoded, reversed), also split
        // across lines, as the redaction of results searches for.
        for (at, name, encoding) in self.stored.find(&text) {
            out.push(Finding {
                path: path.to_string(),
                line: line_of(text.as_bytes(), at),
                what: format!(
                    "the {}value of the secret {name} stored on this machine",
                    encoding.describe()
                ),
            });
        }
        let head = &bytes[..bytes.len().min(8192)];
        if bytes.len() <= MAX_TEXT_BYTES && !head.contains(&0) {
            for (re, what) in formats() {
                if let Some(m) = re.find(&text) {
                    out.push(Finding {
                        path: path.to_string(),
                        line: line_of(text.as_bytes(), m.start()),
                        what: (*what).to_string(),
                    });
                }
            }
        }
        out
    }

    /// Scan every file under `dir` (except environments and build output), naming each as
    /// `prefix/<relative path>`.
    pub fn dir(&self, dir: &Path, prefix: &str) -> Vec<Finding> {
        let mut out = Vec::new();
        let walker = toolsmith_hashing::walk_tool_dir(dir);
        for entry in walker.flatten() {
            if !entry.file_type().is_file() {
                continue;
            }
            let Ok(bytes) = std::fs::read(entry.path()) else {
                continue;
            };
            let rel = entry
                .path()
                .strip_prefix(dir)
                .map(|r| r.to_string_lossy().replace('\\', "/"))
                .unwrap_or_default();
            out.extend(self.bytes(&format!("{prefix}/{rel}"), &bytes));
        }
        out
    }
}

/// The secrets stored in this person's directory `personal`, for the scan; none when the file
/// cannot be read (the format scan still runs).
pub fn stored_secrets(personal: &std::path::Path) -> Vec<(String, String)> {
    crate::Store::new(personal)
        .load()
        .map(|m| m.into_iter().collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_stored_values_are_found_with_their_line() {
        let key = format!("ghp_{}", "a1B2".repeat(9));
        let src = format!("import os\nTOKEN = \"{key}\"\n");
        let f = Scanner::new(&[]).bytes("tools/t/main.py", src.as_bytes());
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!((f[0].line, f[0].what.as_str()), (2, "a GitHub token"));
        for (text, what) in [
            ("AKIAABCDEFGHIJKLMNOP", "an AWS access key id"),
            (
                &format!("k = 'sk-ant-api03-{}'", "x".repeat(30)),
                "an Anthropic API key",
            ),
            (
                &format!("sk-proj-{}", "Ab1".repeat(15)),
                "an OpenAI-style API key",
            ),
            ("xoxb-1234567890-abcdefghij", "a Slack token"),
            ("-----BEGIN OPENSSH PRIVATE KEY-----", "a private key block"),
            ("-----BEGIN RSA PRIVATE KEY-----", "a private key block"),
        ] {
            let f = Scanner::new(&[]).bytes("x", text.as_bytes());
            assert_eq!(f.first().map(|f| f.what.as_str()), Some(what), "{text}");
        }
        let stored = vec![("MY_KEY".to_string(), "plain-looking-value".to_string())];
        let f = Scanner::new(&stored).bytes("x", b"a\nb\nv = plain-looking-value\n");
        assert_eq!(f[0].line, 3);
        assert!(f[0].what.contains("MY_KEY"));
        assert!(
            Scanner::new(&stored)
                .bytes("x", b"print('hello sk-short')\n")
                .is_empty()
        );
        // Its base64 (at any alignment, URL-safe too), hex and reversal are refused as well.
        use base64::Engine;
        let b64 = base64::engine::general_purpose::STANDARD.encode("x=plain-looking-value");
        for (text, what) in [
            (format!("a\nb = '{b64}'\n"), "base64 of the value"),
            (
                format!("h = '{}'\n", hex::encode_upper("plain-looking-value")),
                "hex of the value",
            ),
            ("r = 'eulav-gnikool-nialp'\n".to_string(), "reversed value"),
            ("s = 'plain-looking-\nvalue'\n".to_string(), "value of"),
        ] {
            let f = Scanner::new(&stored).bytes("x", text.as_bytes());
            assert!(
                f.first().is_some_and(|f| f.what.contains(what)),
                "{text}: {f:?}"
            );
        }
    }
}
