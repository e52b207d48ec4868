//! Writing commit objects, signed the way git signs them when the user's git config asks for
//! it: `commit.gpgsign = true` with `gpg.format = ssh` and `user.signingkey` (a key file, a
//! public key whose private half is in the agent, or `key::<literal public key>`). The
//! signature is made by `ssh-keygen -Y sign -n git` (or `gpg.ssh.program`) over the commit
//! without its `gpgsig` header, exactly what `git commit -S` does, so `git verify-commit`
//! and `git log --show-signature` check it.
//!
//! Signing failures are errors (a user who asked for signed commits never gets an unsigned
//! one silently). Other signature formats (`openpgp`, `x509`) are not supported: such commits
//! are made unsigned, with a warning in the log.

use super::*;
use std::io::Write;
use std::process::{Command, Stdio};

/// How this repository's commits are to be signed, read from the git config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SigningKey {
    /// The program (`gpg.ssh.program`, default `ssh-keygen`).
    program: String,
    /// `user.signingkey` as configured.
    key: String,
}

/// The SSH signing key to use, or None when commits are not to be signed.
pub(super) fn signing_key(repo: &gix::Repository) -> Option<SigningKey> {
    let config = repo.config_snapshot();
    if !config.boolean("commit.gpgsign").unwrap_or(false) {
        return None;
    }
    let format = config
        .string("gpg.format")
        .map(|s| s.to_str_lossy().to_lowercase())
        .unwrap_or_else(|| "openpgp".into());
    if format != "ssh" {
        tracing::warn!(
            format,
            "commit.gpgsign is set but toolsmith signs with SSH keys only (gpg.format = ssh); committing unsigned"
        );
        return None;
    }
    let key = config
        .string("user.signingkey")?
        .to_str_lossy()
        .into_owned();
    let program = config
        .string("gpg.ssh.program")
        .map(|s| s.to_str_lossy().into_owned())
        .unwrap_or_else(|| "ssh-keygen".into());
    Some(SigningKey { program, key })
}

impl SigningKey {
    /// Sign `payload` (a commit without its signature header); the armored signature.
    fn sign(&self, payload: &[u8], workdir: &Path) -> Result<String, GitError> {
        let fail = |message: String| GitError::Sign {
            key: self.key.clone(),
            message,
        };
        // A literal key (`key::ssh-ed25519 AAAA…`, or a bare `ssh-…` line) goes through a file;
        // ssh-keygen then asks the agent for its private half.
        let literal = self
            .key
            .strip_prefix("key::")
            .or_else(|| self.key.starts_with("ssh-").then_some(self.key.as_str()));
        let tmp;
        let key_path = match literal {
            Some(text) => {
                tmp = tempfile::NamedTempFile::new()
                    .map_err(|e| fail(format!("cannot write the public key to a file: {e}")))?;
                std::fs::write(tmp.path(), format!("{text}\n"))
                    .map_err(|e| fail(format!("cannot write the public key to a file: {e}")))?;
                tmp.path().to_path_buf()
            }
            None => match self.key.strip_prefix("~/") {
                Some(rest) => dirs::home_dir().unwrap_or_default().join(rest),
                None => workdir.join(&self.key),
            },
        };
        let mut cmd = Command::new(&self.program);
        cmd.args(["-Y", "sign", "-n", "git", "-f"]).arg(&key_path);
        if literal.is_some() {
            cmd.arg("-U");
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| fail(format!("cannot run {}: {e}", self.program)))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(payload)
                .map_err(|e| fail(format!("cannot pass the commit to {}: {e}", self.program)))?;
        }
        let out = child
            .wait_with_output()
            .map_err(|e| fail(format!("{} did not finish: {e}", self.program)))?;
        let text = String::from_utf8_lossy(&out.stdout).trim_end().to_string();
        if !out.status.success() || !text.starts_with("-----BEGIN SSH SIGNATURE-----") {
            return Err(fail(
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .filter(|l| !l.starts_with("Signing data on standard input"))
                    .collect::<Vec<_>>()
                    .join("; "),
            ));
        }
        Ok(text)
    }
}

/// Write a commit object with `tree` and `parents`, signed when the git config asks for it.
pub(super) fn write_commit(
    repo: &gix::Repository,
    workdir: &Path,
    sig: &Signature,
    message: &str,
    tree: ObjectId,
    parents: &[ObjectId],
) -> Result<ObjectId, GitError> {
    let signature = gix::actor::Signature {
        name: sig.name.as_str().into(),
        email: sig.email.as_str().into(),
        time: gix::date::Time::now_local_or_utc(),
    };
    let mut commit = gix::objs::Commit {
        tree,
        parents: parents.iter().copied().collect(),
        author: signature.clone(),
        committer: signature,
        encoding: None,
        message: message.into(),
        extra_headers: Vec::new(),
    };
    if let Some(key) = signing_key(repo) {
        use gix::objs::WriteTo;
        let mut payload = Vec::new();
        commit
            .write_to(&mut payload)
            .map_err(io_err("serialize the commit to sign", workdir))?;
        let armored = key.sign(&payload, workdir)?;
        commit.extra_headers.push(("gpgsig".into(), armored.into()));
    }
    let id = repo
        .write_object(&commit)
        .ctx(workdir, || "write the commit object".into())?;
    Ok(id.detach())
}
