//! Interpreter resolution: the executable a script's interpreter command names, found once per
//! server and PATH.
//!
//! A version manager's shim (pyenv, rbenv, nodenv, asdf: a shell script; mise, rtx, volta: a
//! symlink to the manager's own binary) chooses a version at every start — with pyenv a chain
//! of about a dozen bash processes — and needs the manager's whole tree (often in the home
//! directory) inside the sandbox. So a shim is asked once for the real executable
//! (`sys.executable`, `process.execPath`, ...), which then runs directly. The answer is cached
//! per (command, PATH) and asked again when PATH changes or the cached file disappears (a
//! version uninstalled). A real binary — including a tool's own venv interpreter, given by its
//! path — is used as found, never canonicalised (a venv's python finds its venv through the path
//! it was started by).

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Version managers whose shims are symlinks to the manager's binary (or a launcher).
const MANAGER_BINARIES: &[&str] = &["mise", "rtx", "volta", "volta-shim", "asdf", "proto"];

/// The interpreter families toolsmith knows how to ask for their real executable.
const PROBES: &[(&str, &[&str])] = &[
    ("python", &["-c", "import sys; print(sys.executable)"]),
    ("node", &["-e", "console.log(process.execPath)"]),
    ("ruby", &["-e", "print RbConfig.ruby"]),
    ("perl", &["-e", "print $^X"]),
    ("php", &["-r", "echo PHP_BINARY;"]),
];

/// The program `argv0` names on `path`: itself when it has a slash, else the first match in
/// an absolute PATH entry (a relative entry such as `.` would make the answer depend on the
/// working directory, which may be a tool's).
pub fn which_in(argv0: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    if argv0.contains('/') {
        return Some(PathBuf::from(argv0));
    }
    std::env::split_paths(path?)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(argv0))
        .find(|p| p.is_file())
}

/// The family name of an interpreter command (`python3.11` → `python`), if it is one toolsmith
/// can probe.
fn family(name: &str) -> Option<&'static str> {
    // Exactly the family's name and a version (`python3.12`), not any command that starts so
    // (`phpdismod`, `perlbug`, `python3-config` are no interpreters and must not be run).
    PROBES.iter().map(|(f, _)| *f).find(|f| {
        name.strip_prefix(f)
            .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
    })
}

/// Whether the file found for an interpreter command is a version manager's shim rather than
/// the interpreter: a script (`#!`), or a symlink to a manager's binary.
pub fn is_shim(found: &Path) -> bool {
    let mut head = [0u8; 2];
    let script = std::fs::File::open(found)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok()
        && &head == b"#!";
    if script {
        return true;
    }
    let target = found.canonicalize().unwrap_or_else(|_| found.to_path_buf());
    target
        .file_name()
        .map(|f| f.to_string_lossy())
        .is_some_and(|f| MANAGER_BINARIES.contains(&f.as_ref()))
}

/// Ask a shim for the real executable it starts.
fn probe(shim: &Path, family: &str) -> Option<PathBuf> {
    let args = PROBES.iter().find(|(f, _)| *f == family)?.1;
    let out = std::process::Command::new(shim)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let real = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    (out.status.success() && real.is_absolute() && real.is_file() && !is_shim(&real))
        .then_some(real)
}

/// Resolve `argv0` on `path` without the cache: the real executable behind a shim, the file
/// found otherwise; None when nothing of that name is on PATH.
///
/// Only a bare command name found on the person's PATH is asked (run on the host, outside
/// every sandbox): a path comes from a manifest the AI may have written, and the file it names
/// may be one the AI wrote (a tool's file, a build's output), so it is used as given and only
/// ever runs inside a sandbox.
pub fn resolve_uncached(argv0: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    let found = which_in(argv0, path)?;
    if argv0.contains('/') || !is_shim(&found) {
        return Some(found);
    }
    let name = found.file_name()?.to_string_lossy().into_owned();
    match family(&name).and_then(|f| probe(&found, f)) {
        Some(real) => {
            tracing::debug!(shim = %found.display(), real = %real.display(), "resolved an interpreter shim");
            Some(real)
        }
        // A script that is not a known shim (or a shim that would not answer): run it as is.
        None => Some(found),
    }
}

type Cache = Mutex<HashMap<(String, Option<OsString>), PathBuf>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

/// The executable to run for the interpreter command `argv0` under the server's PATH, cached;
/// None when it is not installed (the spawn then reports it).
pub fn resolve(argv0: &str) -> Option<PathBuf> {
    resolve_on(argv0, std::env::var_os("PATH"))
}

/// `resolve` for a given PATH (cached per command and PATH; re-resolved when the cached file
/// is gone).
pub fn resolve_on(argv0: &str, path: Option<OsString>) -> Option<PathBuf> {
    let key = (argv0.to_string(), path);
    if let Some(p) = cache()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&key)
        .filter(|p| p.is_file())
    {
        return Some(p.clone());
    }
    let found = resolve_uncached(argv0, key.1.as_deref())?;
    cache()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(key, found.clone());
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn script(path: &Path, body: &str) {
        std::fs::write(path, body).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn a_shim_is_followed_to_the_real_interpreter_and_asked_again_when_it_is_gone() {
        let real_perl = which_in("perl", std::env::var_os("PATH").as_deref()).expect("perl");
        let tmp = tempfile::tempdir().unwrap();
        let (shims, v1) = (tmp.path().join("shims"), tmp.path().join("v1/bin"));
        std::fs::create_dir_all(&shims).unwrap();
        std::fs::create_dir_all(&v1).unwrap();
        std::fs::copy(&real_perl, v1.join("perl")).unwrap();
        let target = tmp.path().join("version");
        std::fs::write(&target, v1.join("perl").to_str().unwrap()).unwrap();
        // Like pyenv's: a script choosing the version at every start.
        script(
            &shims.join("perl"),
            &format!("#!/bin/sh\nexec \"$(cat {})\" \"$@\"\n", target.display()),
        );
        let path = Some(OsString::from(&shims));
        assert!(is_shim(&shims.join("perl")));
        assert_eq!(resolve_on("perl", path.clone()), Some(v1.join("perl")));
        // Cached: the shim is not asked again while the file exists.
        std::fs::write(&target, real_perl.to_str().unwrap()).unwrap();
        assert_eq!(resolve_on("perl", path.clone()), Some(v1.join("perl")));
        // The version is uninstalled: asked again.
        std::fs::remove_file(v1.join("perl")).unwrap();
        assert_eq!(resolve_on("perl", path.clone()), Some(real_perl.clone()));
        // Another PATH is another answer.
        let other = tmp.path().join("other");
        std::fs::create_dir_all(&other).unwrap();
        assert_eq!(resolve_on("perl", Some(OsString::from(&other))), None);
    }

    #[test]
    fn a_shim_given_by_its_path_is_never_run_on_the_host() {
        let tmp = tempfile::tempdir().unwrap();
        let marker = tmp.path().join("ran");
        let shim = tmp.path().join("python3");
        script(
            &shim,
            &format!(
                "#!/bin/sh\ntouch {}\necho /usr/bin/true\n",
                marker.display()
            ),
        );
        assert!(is_shim(&shim));
        assert_eq!(
            resolve_uncached(shim.to_str().unwrap(), None),
            Some(shim.clone())
        );
        assert!(!marker.exists(), "the shim ran on the host");
        // Nor found through a relative PATH entry (the same directory, named from here).
        let here = std::env::current_dir().unwrap();
        let mut relative = PathBuf::new();
        for _ in here.components().skip(1) {
            relative.push("..");
        }
        relative.push(tmp.path().strip_prefix("/").unwrap());
        assert!(relative.join("python3").is_file());
        assert_eq!(which_in("python3", Some(relative.as_os_str())), None);
    }

    #[test]
    fn real_binaries_and_venv_paths_are_used_as_found() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("venv/bin");
        std::fs::create_dir_all(&bin).unwrap();
        let real_perl = which_in("perl", std::env::var_os("PATH").as_deref()).expect("perl");
        // A venv's interpreter is a symlink to the base one; it must keep its own path.
        std::os::unix::fs::symlink(&real_perl, bin.join("perl")).unwrap();
        let p = bin.join("perl");
        assert!(!is_shim(&p));
        assert_eq!(resolve_uncached(p.to_str().unwrap(), None), Some(p));
        // A mise-style shim: a symlink to the manager's binary.
        let mgr = tmp.path().join("mgr");
        std::fs::create_dir_all(&mgr).unwrap();
        std::fs::copy(&real_perl, mgr.join("mise")).unwrap();
        std::os::unix::fs::symlink(mgr.join("mise"), tmp.path().join("python3")).unwrap();
        assert!(is_shim(&tmp.path().join("python3")));
    }
}
