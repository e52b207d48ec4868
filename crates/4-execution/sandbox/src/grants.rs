//! What one script process may touch, as paths: the system directories an interpreter needs
//! (read-only), the interpreter's own prefix when it lives elsewhere, the tool's directory and
//! dependency environment (read-only), its scratch directory (writable), and the declared
//! roots. Every mechanism (bubblewrap, the in-process Linux sandbox, Seatbelt) is built from
//! the same `Grants`, so they grant the same things and report them the same way.

use super::{SandboxError, Spec};
use crate::config::SandboxConfig;
use std::path::{Path, PathBuf};

/// System directories an interpreter reads (read-only; those that exist on this machine).
#[cfg(not(target_os = "macos"))]
pub const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];
/// System directories an interpreter reads (read-only; those that exist on this machine).
#[cfg(target_os = "macos")]
pub const SYSTEM_DIRS: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/System",
    "/Library/Frameworks",
    "/opt/homebrew",
    "/private/var/db/timezone",
];

/// Entries of /etc an interpreter or its libraries read. Never the whole of /etc: it holds
/// `shadow`, keys and credentials.
pub const ETC_ENTRIES: &[&str] = &[
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    // Certificates and the OpenSSL configuration, never `ssl/private` (keys).
    "ssl/certs",
    "ssl/openssl.cnf",
    "ssl/cert.pem",
    "ca-certificates",
    "pki",
    "localtime",
    "timezone",
    "nsswitch.conf",
    "passwd",
    "group",
    "hosts",
    "host.conf",
    "resolv.conf",
    "gai.conf",
    "protocols",
    "services",
    "mime.types",
    "magic",
    "magic.mime",
    "locale.alias",
    "os-release",
    "debian_version",
    "lsb-release",
    "php",
    "perl",
    "ruby",
    "python3",
    "npmrc",
];

/// The paths of one call, resolved and existing.
#[derive(Debug, Clone, Default)]
pub struct Grants {
    /// Where it may connect.
    pub network: super::Net,
    /// The working directory: the only place the script writes by default.
    pub scratch: PathBuf,
    /// System directories and /etc entries (read-only).
    pub system: Vec<PathBuf>,
    /// The interpreter's prefix, the tool directory, its environment, declared reads.
    pub read: Vec<PathBuf>,
    /// Declared writes (inside the allowed roots).
    pub write: Vec<PathBuf>,
    /// The working directory when it is not the scratch directory (a build's).
    pub cwd: Option<PathBuf>,
}

fn resolve_declared(
    p: &str,
    what: &'static str,
    roots: &[PathBuf],
) -> Result<PathBuf, SandboxError> {
    let path = Path::new(p);
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        match roots.first() {
            Some(r) => r.join(path),
            None => path.to_path_buf(),
        }
    };
    if abs.is_absolute() && crate::inside_roots(&abs, roots) {
        Ok(abs.canonicalize().unwrap_or(abs))
    } else {
        Err(SandboxError::OutsideRoots {
            path: p.to_string(),
            what,
            roots: if roots.is_empty() {
                "none: set TOOLSMITH_ROOTS".into()
            } else {
                roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(":")
            },
        })
    }
}

/// The program `argv0` names: itself when it has a slash, else the first match on PATH.
pub fn which(argv0: &str) -> Option<PathBuf> {
    crate::interp::which_in(argv0, std::env::var_os("PATH").as_deref())
}

/// Whether `p` lies under one of the system directories.
fn under_system(p: &Path) -> bool {
    SYSTEM_DIRS.iter().any(|d| p.starts_with(d))
}

/// Files and directories under HOME that hold credentials or configuration a tool must never
/// read, whatever interpreter it names (`~/.cargo/bin/x` must not grant `~/.cargo`, which
/// holds `credentials.toml`; `~/.local/bin/python3` must not grant `~/.local`, which holds
/// toolsmith's personal directory).
const HOME_PRIVATE: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config",
    ".docker",
    ".kube",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".gitconfig",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".cargo/config",
    ".cargo/config.toml",
    ".local/share",
    ".local/state",
    ".bash_history",
    ".zsh_history",
];

/// Whether granting `dir` (read-only, with everything beneath it) would show a tool something
/// private: `/`, HOME itself, a directory holding toolsmith's personal directory, cache or
/// default toolbox, the temporary directory, or one of [`HOME_PRIVATE`].
fn too_wide(dir: &Path, config: &SandboxConfig) -> bool {
    let real = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    [dir, real.as_path()]
        .iter()
        .any(|d| too_wide_as_named(d, config))
}

fn too_wide_as_named(dir: &Path, config: &SandboxConfig) -> bool {
    // /etc holds shadow and keys; only the entries of ETC_ENTRIES are ever shown.
    if dir.parent().is_none() || dir.starts_with("/etc") || dir.starts_with("/private/etc") {
        return true;
    }
    let mut private: Vec<PathBuf> = config.private.clone();
    private.push(std::env::temp_dir());
    if let Some(home) = dirs::home_dir() {
        if dir == home || home.starts_with(dir) {
            return true;
        }
        private.extend(HOME_PRIVATE.iter().map(|p| home.join(p)));
    }
    let ancestor = private.iter().any(|p| {
        let real = p.canonicalize().unwrap_or_else(|_| p.clone());
        p.starts_with(dir) || real.starts_with(dir)
    });
    // Nor anything inside the personal directory or a credential store (install trees under
    // ~/.config and ~/.local/share, such as nvm's or uv's, are fine).
    let mut sealed: Vec<PathBuf> = config.private.first().cloned().into_iter().collect();
    if let Some(home) = dirs::home_dir() {
        sealed.extend(
            HOME_PRIVATE
                .iter()
                .filter(|p| !matches!(**p, ".config" | ".local/share" | ".local/state"))
                .map(|p| home.join(p)),
        );
    }
    ancestor || sealed.iter().any(|p| dir.starts_with(p))
}

/// The directories the interpreter needs beyond the system ones: for `…/bin/python` outside
/// the system directories, its prefix `…` (and the same for every symlink hop, so a venv's
/// python leads to the base installation). A prefix that is [`too_wide`] is narrowed to the
/// interpreter's own directory, or left out when that is too wide as well.
pub fn interpreter_prefixes(argv0: &str, config: &SandboxConfig) -> Vec<PathBuf> {
    let Some(mut p) = which(argv0) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for _ in 0..16 {
        if !under_system(&p) {
            // `…/bin/python`: the installation `…` (or just its bin). Any other hop of a
            // symlink chain: only the file itself.
            let candidates = match p.parent() {
                Some(bin) if bin.file_name().is_some_and(|f| f == "bin") => {
                    vec![bin.parent(), Some(bin)]
                }
                _ => vec![Some(p.as_path())],
            };
            let chosen = candidates
                .into_iter()
                .flatten()
                .find(|d| !too_wide(d, config));
            match chosen {
                Some(d) if !out.iter().any(|o: &PathBuf| d.starts_with(o)) => {
                    out.push(d.to_path_buf())
                }
                Some(_) => {}
                None => tracing::warn!(
                    interpreter = %p.display(),
                    "the interpreter's directory is not shown to the tool: it holds or is \
                     inside a private directory (HOME, toolsmith's own, credentials)"
                ),
            }
        }
        match std::fs::read_link(&p) {
            Ok(next) => {
                p = match p.parent() {
                    Some(parent) if next.is_relative() => parent.join(next),
                    _ => next,
                }
            }
            Err(_) => break,
        }
    }
    out
}

/// The system directories and /etc entries that exist here (looked up once per process).
fn system_paths() -> &'static [PathBuf] {
    static SYSTEM: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    SYSTEM.get_or_init(|| {
        let mut system: Vec<PathBuf> = SYSTEM_DIRS.iter().map(PathBuf::from).collect();
        system.extend(ETC_ENTRIES.iter().map(|e| Path::new("/etc").join(e)));
        system.retain(|p| p.exists());
        system
    })
}

impl Grants {
    /// The grants of a build or install process: the system directories, the spec's reads
    /// and writes (those that exist), and the proxy's socket directory and bridge.
    pub fn for_build(spec: &super::BuildSpec<'_>) -> Result<Grants, SandboxError> {
        let mut read = spec.read.clone();
        if let super::Net::Proxy(super::Endpoint::Unix { dir, .. }) = &spec.network {
            read.push(dir.clone());
            read.push(super::net::bridge_program().map_err(SandboxError::Setup)?);
        }
        read.retain(|p| p.exists());
        let mut write = spec.write.clone();
        write.retain(|p| p.exists());
        Ok(Grants {
            network: spec.network.clone(),
            scratch: spec.scratch.to_path_buf(),
            system: system_paths().to_vec(),
            read,
            write,
            cwd: Some(spec.cwd.to_path_buf()),
        })
    }

    /// Resolve a spec for the interpreter `argv0`.
    pub fn new(spec: &Spec<'_>, argv0: &str) -> Result<Grants, SandboxError> {
        let read_declared = spec
            .read
            .iter()
            .map(|p| resolve_declared(p, "read", spec.roots))
            .collect::<Result<Vec<_>, _>>()?;
        let write = spec
            .write
            .iter()
            .map(|p| resolve_declared(p, "write", spec.roots))
            .collect::<Result<Vec<_>, _>>()?;
        let system = system_paths().to_vec();
        let mut read = interpreter_prefixes(argv0, spec.config);
        read.extend(spec.visible.iter().cloned());
        read.extend(read_declared);
        // The proxy's socket directory, and the bridge that reaches it from inside.
        if let super::Net::Proxy(super::Endpoint::Unix { dir, .. }) = &spec.network {
            read.push(dir.clone());
            read.push(super::net::bridge_program().map_err(SandboxError::Setup)?);
        }
        read.retain(|p| p.exists());
        Ok(Grants {
            network: spec.network.clone(),
            scratch: spec.scratch.to_path_buf(),
            system,
            read,
            write: write.into_iter().filter(|p| p.exists()).collect(),
            cwd: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_outside_the_system_dirs_is_its_bin_parent() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("py/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("python"), "").unwrap();
        let config = SandboxConfig::default();
        let p = interpreter_prefixes(bin.join("python").to_str().unwrap(), &config);
        assert_eq!(p, vec![tmp.path().join("py")]);
        assert!(interpreter_prefixes("/usr/bin/env", &config).is_empty());
    }

    #[test]
    fn a_prefix_holding_something_private_is_too_wide() {
        let config = crate::config::Config::default();
        let too_wide = |d: &Path| too_wide(d, &config.sandbox);
        let home = dirs::home_dir().expect("HOME");
        assert!(too_wide(Path::new("/")));
        assert!(too_wide(&home));
        // `~/.cargo/bin/x` must not show ~/.cargo (credentials.toml), only its bin directory.
        assert!(too_wide(&home.join(".cargo")));
        assert!(!too_wide(&home.join(".cargo/bin")));
        // `~/.local/bin/python3` must not show ~/.local (the personal directory's parent).
        assert!(too_wide(&home.join(".local")));
        assert!(!too_wide(&home.join(".local/share/uv/python/cpython-3.12")));
        assert!(too_wide(&home.join(".ssh/bin")));
        if let Some(parent) = config.data_dir.parent() {
            assert!(too_wide(parent));
        }
        assert!(too_wide(&config.data_dir.join("bin")));
        assert!(too_wide(Path::new("/etc")));
        assert!(too_wide(Path::new("/etc/ssl")));
    }
}
