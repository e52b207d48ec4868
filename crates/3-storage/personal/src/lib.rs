//! This person's state on this machine, never in git: approvals, secret values and the audit
//! log live in one private directory (`Config::data_dir`: `$TOOLSMITH_DATA`, else
//! `<data dir>/toolsmith-private`),
//! created with mode 0700; every file in it is written atomically with mode 0600.
//!
//! It is deliberately outside every toolbox: a toolbox is shared (cloned, pulled, imported),
//! and a teammate's approval or secret must never become this person's.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

use std::path::Path;

/// Create `dir` (and parents) with mode 0700 for the last component.
pub fn ensure_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    toolsmith_platform::make_private_dir(dir)
}

/// Write `bytes` to `path` atomically (a temporary file beside it, fsync, rename), mode 0600.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("a private file needs a parent directory"))?;
    ensure_dir(dir)?;
    toolsmith_platform::write_atomic(path, bytes, toolsmith_platform::Atomic::PRIVATE)
}

/// `platform::with_lock` in the personal directory (made private first).
pub fn with_lock<T>(path: &Path, f: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
    if let Some(dir) = path.parent() {
        ensure_dir(dir)?;
    }
    toolsmith_platform::with_lock(path, f)
}

/// Open `path` for appending (created with mode 0600).
pub fn append_private(path: &Path) -> std::io::Result<std::fs::File> {
    if let Some(dir) = path.parent() {
        ensure_dir(dir)?;
    }
    toolsmith_platform::open_private(path, std::fs::OpenOptions::new().create(true).append(true))
}

/// Seconds since the Unix epoch, now.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// A time as RFC 3339 (UTC, whole seconds: `2023-11-14T22:13:20Z`).
pub fn rfc3339(secs: u64) -> String {
    match jiff::Timestamp::from_second(i64::try_from(secs).unwrap_or(i64::MAX)) {
        Ok(t) => t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        Err(_) => secs.to_string(),
    }
}

/// The person's own settings on this machine: `config.toml` in the private directory, which
/// no tool and no meta-tool can write.
///
/// ```toml
/// [approvals]
/// # Kinds of grant an answer given through the MCP client's elicitation may approve.
/// # Off (empty) by default: only `toolsmith approve` and `toolsmith console` approve.
/// elicitation = ["env", "limits"]
/// ```
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct Settings {
    /// `[approvals]`.
    #[serde(default)]
    pub approvals: ApprovalSettings,
}

/// `[approvals]` of the personal settings.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct ApprovalSettings {
    /// Kinds of grant an elicitation answer may approve (`ELICITATION_KINDS`, or "all").
    #[serde(default)]
    pub elicitation: Vec<String>,
}

/// The kinds of grant `[approvals] elicitation` may name.
pub const ELICITATION_KINDS: &[&str] = &[
    "network",
    "env",
    "read",
    "write",
    "secrets",
    "unsandboxed",
    "limits",
    "all",
];

/// The settings file of the private directory `dir`.
pub fn settings_path(dir: &Path) -> std::path::PathBuf {
    dir.join("config.toml")
}

impl Settings {
    /// Read `config.toml` of `dir` (the defaults when there is none). An unreadable file or an
    /// unknown kind is an error: the caller then keeps the defaults (fail closed).
    pub fn load(dir: &Path) -> Result<Settings, String> {
        let path = settings_path(dir);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Settings::default()),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let s: Settings =
            toml::from_str(&text).map_err(|e| format!("{} is not valid: {e}", path.display()))?;
        if let Some(bad) = s
            .approvals
            .elicitation
            .iter()
            .find(|k| !ELICITATION_KINDS.contains(&k.as_str()))
        {
            return Err(format!(
                "{}: [approvals] elicitation names {bad:?}, which is not a kind of grant (one of {})",
                path.display(),
                ELICITATION_KINDS.join(", ")
            ));
        }
        Ok(s)
    }

    /// Whether an elicitation answer may approve a grant of `kind`.
    pub fn elicitation_approves(&self, kind: &str) -> bool {
        self.approvals
            .elicitation
            .iter()
            .any(|k| k == "all" || k == kind)
    }
}

/// Where a running `toolsmith console` of this private directory records its address.
fn console_file(dir: &Path) -> std::path::PathBuf {
    dir.join("console.json")
}

/// Record the address of the console this process serves (removed by `forget_console`).
pub fn record_console(dir: &Path, url: &str) -> std::io::Result<()> {
    let v = serde_json::json!({"url": url, "pid": std::process::id()});
    write_private(&console_file(dir), v.to_string().as_bytes())
}

/// Remove the record, if it is this process's.
pub fn forget_console(dir: &Path) {
    let path = console_file(dir);
    let mine = std::fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .is_some_and(|v| v["pid"].as_u64() == Some(u64::from(std::process::id())));
    if mine {
        let _ = std::fs::remove_file(path);
    }
}

/// The address of a console running for this private directory (it answers on its port), if
/// one does. The address carries no credential: the console's pages need the person's session.
pub fn console_address(dir: &Path) -> Option<String> {
    let bytes = std::fs::read(console_file(dir)).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let url = v["url"].as_str()?.to_string();
    let addr: std::net::SocketAddr = url.strip_prefix("http://")?.parse().ok()?;
    if !addr.ip().is_loopback() {
        return None;
    }
    std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_millis(300)).ok()?;
    Some(url)
}

/// What one toolbox's file of records holds: records that name their toolbox.
pub trait ToolboxRecords: serde::Serialize + serde::de::DeserializeOwned {
    /// No records yet, for the toolbox at `toolbox` (its canonical path, as text).
    fn empty(toolbox: String) -> Self;
}

/// One toolbox's file of records of a kind (`approvals`, `references`) in the personal
/// directory, named by a hash of the toolbox's canonical path: read whole, changed under its
/// lock, written privately (mode 0600) and atomically.
#[derive(Debug, Clone)]
pub struct ToolboxFile {
    path: std::path::PathBuf,
    toolbox: std::path::PathBuf,
}

impl ToolboxFile {
    /// The file of `kind` for the toolbox at `root`, under `personal_dir`.
    pub fn new(personal_dir: &Path, kind: &str, root: &Path) -> ToolboxFile {
        let toolbox = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let key = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(
            toolbox.to_string_lossy().as_bytes(),
        ));
        ToolboxFile {
            path: personal_dir.join(kind).join(format!("{}.json", &key[..16])),
            toolbox,
        }
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its records (none yet when there is no file).
    pub fn load<T: ToolboxRecords>(&self) -> std::io::Result<T> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                std::io::Error::other(format!("{} is not valid: {e}", self.path.display()))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok(T::empty(self.toolbox.display().to_string()))
            }
            Err(e) => Err(e),
        }
    }

    /// Change its records with `f` under the file's lock, and write them back.
    pub fn change<T: ToolboxRecords, R>(&self, f: impl FnOnce(&mut T) -> R) -> std::io::Result<R> {
        with_lock(&self.path, || {
            let mut records = self.load()?;
            let out = f(&mut records);
            let bytes = serde_json::to_vec_pretty(&records).map_err(std::io::Error::other)?;
            write_private(&self.path, &bytes)?;
            Ok(out)
        })
    }
}
