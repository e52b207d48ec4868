//! Checks on what callers pass in: repository-relative paths, prefixes, messages, signatures.

use super::*;

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

/// Validate a repo-relative path and return it without a trailing `/`.
pub(super) fn normalize_rela_path(path: &str) -> Result<String, GitError> {
    let invalid = |reason| GitError::InvalidPath {
        path: path.to_owned(),
        reason,
    };
    let trimmed = path.strip_suffix('/').unwrap_or(path);
    if trimmed.is_empty() {
        return Err(invalid("the path is empty"));
    }
    if trimmed.starts_with('/') {
        return Err(invalid("the path must be relative to the repository root"));
    }
    if trimmed.contains('\\') || trimmed.contains('\0') {
        return Err(invalid(
            "the path must be '/'-separated and must not contain NUL",
        ));
    }
    for component in trimmed.split('/') {
        match component {
            "" => return Err(invalid("the path contains an empty component")),
            "." | ".." => return Err(invalid("the path must not contain '.' or '..' components")),
            c if c.eq_ignore_ascii_case(".git") => {
                return Err(invalid("the path must not contain a .git component"));
            }
            _ => {}
        }
    }
    Ok(trimmed.to_owned())
}

pub(super) fn normalize_prefixes(prefixes: &[&str]) -> Result<Vec<String>, GitError> {
    let mut out: Vec<String> = prefixes
        .iter()
        .map(|p| normalize_rela_path(p))
        .collect::<Result<_, _>>()?;
    out.sort();
    out.dedup();
    for pair in out.windows(2) {
        if is_ancestor_or_self(&pair[0], &pair[1]) {
            return Err(GitError::InvalidPath {
                path: pair[1].clone(),
                reason: "the prefix lies inside another prefix of the same commit",
            });
        }
    }
    Ok(out)
}

/// `true` if `path` is `ancestor` or lies below it.
pub(super) fn is_ancestor_or_self(ancestor: &str, path: &str) -> bool {
    path.strip_prefix(ancestor)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

pub(super) fn normalize_message(message: &str) -> Result<String, GitError> {
    let trimmed = message.trim_end();
    if trimmed.trim().is_empty() {
        return Err(GitError::InvalidMessage {
            reason: "the message is empty",
        });
    }
    if trimmed.contains('\0') {
        return Err(GitError::InvalidMessage {
            reason: "the message contains a NUL byte",
        });
    }
    // Like `git commit`: no trailing blank lines, exactly one final newline.
    Ok(format!("{trimmed}\n"))
}

pub(super) fn check_signature(sig: &Signature) -> Result<(), GitError> {
    let invalid = |reason| GitError::InvalidSignature {
        name: sig.name.clone(),
        email: sig.email.clone(),
        reason,
    };
    if sig.name.trim().is_empty() {
        return Err(invalid("the name is empty"));
    }
    let bad = |s: &str| s.contains(['<', '>', '\n', '\0']);
    if bad(&sig.name) || bad(&sig.email) {
        return Err(invalid(
            "name and email must not contain '<', '>', newlines or NUL",
        ));
    }
    Ok(())
}

pub(super) fn join_rela(prefix: &str, path: &str) -> String {
    if prefix.is_empty() {
        path.to_owned()
    } else {
        format!("{prefix}/{path}")
    }
}
