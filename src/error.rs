//! How an error is told to a person or a model: its message followed by every cause in its
//! `source()` chain ("could not write file X: permission denied"), each cause once (many
//! messages already quote their source, and that text is not repeated).

use std::error::Error;

/// What a person (or the model) can do about an error: one line, shown after `hint:`. Every
/// error type that reaches the CLI or an MCP client implements it; None when the message
/// already says all there is.
pub trait Hint {
    fn hint(&self) -> Option<String>;
}

/// `message: cause: cause …`, skipping a cause whose text the line already contains.
pub fn chain(e: &(dyn Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !text.is_empty() && !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cause = c.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("could not write file {path}")]
    struct Write {
        path: String,
        #[source]
        source: std::io::Error,
    }

    #[derive(Debug, thiserror::Error)]
    #[error("could not store the tool: {0}")]
    struct Quoting(#[source] std::io::Error);

    #[test]
    fn every_cause_once() {
        let e = Write {
            path: "tools/x/main.py".into(),
            source: std::io::Error::new(std::io::ErrorKind::PermissionDenied, "permission denied"),
        };
        assert_eq!(
            chain(&e),
            "could not write file tools/x/main.py: permission denied"
        );
        let q = Quoting(std::io::Error::other("disk full"));
        assert_eq!(chain(&q), "could not store the tool: disk full");
    }
}
