//! Secrets: values a tool needs (API keys, tokens) that must never reach git, a tool result or
//! the model. A tool declares them by name in `[secrets]`; a person sets the values
//! (`toolsmith secret set NAME`, or the Secrets page of `toolsmith console`); they are stored in the personal
//! directory (`secrets.json`, mode 0600), injected only into the environment of a tool that
//! declared them and was approved on this machine, and replaced by `[secret NAME]` wherever
//! they show up in what a tool returns, logs or fails with (`Redactor`). Nor do they reach a
//! commit: `commit_scan` finds them (and common credential formats) in a change's files.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod commit_scan;
pub mod forms;
pub mod lines;
pub mod redact;

pub use redact::Redactor;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use thiserror::Error;
use toolsmith_personal as personal;

/// Why a secret could not be set, read or removed.
/// Each variant is told by its `#[error]` message; the fields are what the message names.
#[allow(missing_docs)]
#[derive(Debug, Error)]
pub enum SecretError {
    #[error("{name:?} is not a secret name")]
    BadName { name: String },
    #[error("the secret value is empty")]
    Empty,
    #[error("cannot read or write the secrets file {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("there is no secret named {name}")]
    NotSet { name: String },
}

impl toolsmith_error::Hint for SecretError {
    fn hint(&self) -> Option<String> {
        Some(match self {
            SecretError::BadName { .. } => "a secret name is an environment variable name: uppercase letters, digits and '_', starting with a letter (e.g. GITHUB_TOKEN)".into(),
            SecretError::Empty => "paste the value (it is not echoed) and press Enter".into(),
            SecretError::Io { path, .. } => format!("check that {} can be read and written by you (mode 0600)", path.display()),
            SecretError::NotSet { .. } => "`toolsmith secret list` shows the names that are set".into(),
        })
    }
}

/// The secret values kept on this machine.
#[derive(Debug, Clone)]
pub struct Store {
    path: PathBuf,
}

impl Store {
    /// The store of the personal directory `personal_dir` (its `secrets.json`).
    pub fn new(personal_dir: &Path) -> Store {
        Store {
            path: personal_dir.join("secrets.json"),
        }
    }

    /// The file the values are kept in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn io(&self, source: std::io::Error) -> SecretError {
        SecretError::Io {
            path: self.path.clone(),
            source,
        }
    }

    /// Every stored secret: name → value.
    pub fn load(&self) -> Result<BTreeMap<String, String>, SecretError> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| self.io(std::io::Error::other(format!("not valid JSON: {e}")))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(e) => Err(self.io(e)),
        }
    }

    fn save(&self, all: &BTreeMap<String, String>) -> Result<(), SecretError> {
        let bytes =
            serde_json::to_vec_pretty(all).map_err(|e| self.io(std::io::Error::other(e)))?;
        personal::write_private(&self.path, &bytes).map_err(|e| self.io(e))
    }

    /// Set (or replace) a secret. Trailing newlines are dropped.
    pub fn set(&self, name: &str, value: &str) -> Result<(), SecretError> {
        if !toolsmith_manifest::is_secret_name(name) {
            return Err(SecretError::BadName { name: name.into() });
        }
        let value = value.trim_end_matches(['\r', '\n']);
        if value.is_empty() {
            return Err(SecretError::Empty);
        }
        personal::with_lock(&self.path, || {
            let mut all = self.load().map_err(std::io::Error::other)?;
            all.insert(name.to_string(), value.to_string());
            self.save(&all).map_err(std::io::Error::other)
        })
        .map_err(|e| self.io(e))
    }

    /// Remove a secret.
    pub fn remove(&self, name: &str) -> Result<(), SecretError> {
        let mut missing = false;
        personal::with_lock(&self.path, || {
            let mut all = self.load().map_err(std::io::Error::other)?;
            if all.remove(name).is_none() {
                missing = true;
                return Ok(());
            }
            self.save(&all).map_err(std::io::Error::other)
        })
        .map_err(|e| self.io(e))?;
        if missing {
            return Err(SecretError::NotSet { name: name.into() });
        }
        Ok(())
    }

    /// The names that are set.
    pub fn names(&self) -> Result<Vec<String>, SecretError> {
        Ok(self.load()?.into_keys().collect())
    }
}

/// Secret values handed to one call's environment. Its `Debug` never shows a value.
#[derive(Clone, Default, PartialEq)]
pub struct SecretEnv(Vec<(String, String)>);

impl SecretEnv {
    /// The (name, value) pairs of one call.
    pub fn new(pairs: Vec<(String, String)>) -> SecretEnv {
        SecretEnv(pairs)
    }

    /// (name, value) pairs to set in the tool's environment.
    pub fn vars(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    /// Whether it holds no secret.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// A digest of names and values (a warm worker started with other values is replaced).
    pub fn fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.0.hash(&mut h);
        h.finish()
    }
}

impl std::fmt::Debug for SecretEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|(n, _)| format!("{n}=[secret {n}]")))
            .finish()
    }
}
