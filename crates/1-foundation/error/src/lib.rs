//! How an error is told to a person or a model: its message followed by every cause in its
//! `source()` chain ("could not write file X: permission denied"), each cause once (many
//! messages already quote their source, and that text is not repeated); `Hint`; and
//! `HostError`, how a host refuses a tool's request (a JSON-RPC error with a named code).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

use std::error::Error;

/// What a person (or the model) can do about an error: one line, shown after `hint:`. Every
/// error type that reaches the CLI or an MCP client implements it; None when the message
/// already says all there is.
pub trait Hint {
    /// The hint, or None.
    fn hint(&self) -> Option<String>;
}

/// Why the host refused or could not answer a request a tool made: a JSON-RPC error the tool
/// receives as the answer (its code named, not a bare number).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HostError {
    /// Which kind of refusal (its JSON-RPC code).
    pub code: HostCode,
    /// What the tool is told.
    pub message: String,
}

/// The JSON-RPC error codes a host answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostCode {
    /// -32602: the request's parameters are wrong.
    InvalidParams,
    /// -32601: the host does not offer this method here.
    MethodNotFound,
    /// -32603: the host failed while answering.
    Internal,
    /// -32000: the host refused, or what it asked on the tool's behalf failed.
    Refused,
    /// -32002: the resource asked for does not exist.
    ResourceNotFound,
}

impl HostCode {
    /// The JSON-RPC error code.
    pub fn number(self) -> i64 {
        match self {
            HostCode::InvalidParams => -32602,
            HostCode::MethodNotFound => -32601,
            HostCode::Internal => -32603,
            HostCode::Refused => -32000,
            HostCode::ResourceNotFound => -32002,
        }
    }
}

impl HostError {
    /// A refusal with this code and message.
    pub fn new(code: HostCode, message: impl Into<String>) -> HostError {
        HostError {
            code,
            message: message.into(),
        }
    }
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
