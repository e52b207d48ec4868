//! What one script process may touch, as paths: the system directories an interpreter needs
//! (read-only), the interpreter's own prefix when it lives elsewhere, the tool's directory and
//! dependency environment (read-only), its scratch directory (writable), and the declared
//! roots. Every mechanism (bubblewrap, the in-process Linux sandbox, Seatbelt) is built from
//! the same `Grants`, so they grant the same things and report them the same way.

use super::{SandboxError, Spec};
use std::path::{Path, PathBuf};

/// System directories an interpreter reads (read-only; those that exist on this machine).
#[cfg(not(target_os = "macos"))]
pub const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];
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
    "ssl",
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
    "php",
    "perl",
    "ruby",
    "python3",
    "npmrc",
];

/// The paths of one call, resolved and existing.
#[derive(Debug, Clone, Default)]
pub struct Grants {
    pub network: bool,
    /// The working directory: the only place the script writes by default.
    pub scratch: PathBuf,
    /// System directories and /etc entries (read-only).
    pub system: Vec<PathBuf>,
    /// The interpreter's prefix, the tool directory, its environment, declared reads.
    pub read: Vec<PathBuf>,
    /// Declared writes (inside the allowed roots).
    pub write: Vec<PathBuf>,
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
    if abs.is_absolute() && super::super::inside_roots(&abs, roots) {
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
    if argv0.contains('/') {
        return Some(PathBuf::from(argv0));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(argv0))
        .find(|p| p.is_file())
}

/// The real executable behind an interpreter command that is a version-manager shim (pyenv,
/// rbenv, nodenv, asdf: a shell script choosing a version at every start): asked once, then
/// run directly. A shim would need the manager's whole tree (often in the home directory)
/// inside the sandbox, and costs a dozen extra processes per call. None for a real binary.
pub fn real_interpreter(argv0: &str) -> Option<PathBuf> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static CACHE: OnceLock<Mutex<HashMap<String, Option<PathBuf>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    if let Some(r) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(argv0) {
        return r.clone();
    }
    let found = (|| {
        let path = which(argv0)?;
        let mut head = [0u8; 2];
        use std::io::Read;
        std::fs::File::open(&path)
            .ok()?
            .read_exact(&mut head)
            .ok()?;
        if &head != b"#!" {
            return None;
        }
        let name = path.file_name()?.to_string_lossy().into_owned();
        let probe: &[&str] = if name.starts_with("python") {
            &["-c", "import sys; print(sys.executable)"]
        } else if name.starts_with("node") {
            &["-e", "console.log(process.execPath)"]
        } else if name.starts_with("ruby") {
            &["-e", "print RbConfig.ruby"]
        } else if name.starts_with("perl") {
            &["-e", "print $^X"]
        } else if name.starts_with("php") {
            &["-r", "echo PHP_BINARY;"]
        } else {
            return None;
        };
        let out = std::process::Command::new(&path)
            .args(probe)
            .stdin(std::process::Stdio::null())
            .output()
            .ok()?;
        let real = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        (out.status.success() && real.is_absolute() && real.is_file()).then_some(real)
    })();
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(argv0.to_string(), found.clone());
    found
}

/// Whether `p` lies under one of the system directories.
fn under_system(p: &Path) -> bool {
    SYSTEM_DIRS.iter().any(|d| p.starts_with(d))
}

/// The directories the interpreter needs beyond the system ones: for `…/bin/python` outside
/// the system directories, its prefix `…` (and the same for every symlink hop, so a venv's
/// python leads to the base installation). Refuses prefixes that are a home directory or `/`.
pub fn interpreter_prefixes(argv0: &str) -> Vec<PathBuf> {
    let Some(mut p) = which(argv0) else {
        return Vec::new();
    };
    let home = dirs::home_dir();
    let mut out = Vec::new();
    for _ in 0..16 {
        if !under_system(&p) {
            let prefix = match p.parent() {
                Some(bin) if bin.file_name().is_some_and(|f| f == "bin") => bin.parent(),
                other => other,
            };
            if let Some(prefix) = prefix {
                let too_wide = prefix == Path::new("/") || home.as_deref() == Some(prefix);
                if !too_wide && !out.iter().any(|o: &PathBuf| prefix.starts_with(o)) {
                    out.push(prefix.to_path_buf());
                }
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

impl Grants {
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
        let mut system: Vec<PathBuf> = SYSTEM_DIRS.iter().map(PathBuf::from).collect();
        system.extend(ETC_ENTRIES.iter().map(|e| Path::new("/etc").join(e)));
        system.retain(|p| p.exists());
        let mut read = interpreter_prefixes(argv0);
        read.extend(spec.visible.iter().cloned());
        read.extend(read_declared);
        read.retain(|p| p.exists());
        Ok(Grants {
            network: spec.network,
            scratch: spec.scratch.to_path_buf(),
            system,
            read,
            write: write.into_iter().filter(|p| p.exists()).collect(),
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
        let p = interpreter_prefixes(bin.join("python").to_str().unwrap());
        assert_eq!(p, vec![tmp.path().join("py")]);
        assert!(interpreter_prefixes("/usr/bin/env").is_empty());
    }
}
