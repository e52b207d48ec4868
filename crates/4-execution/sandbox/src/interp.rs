//! Interpreter resolution: the executable a script's interpreter command names, found once per
//! server and PATH.
//!
//! A version manager's shim (pyenv, rbenv, nodenv, asdf: a shell script; mise, rtx, volta: a
//! symlink to the manager's own binary) chooses a version at every start — with pyenv a chain
//! of about a dozen bash processes — and needs the manager's whole tree (often in the home
//! directory) inside the sandbox. So a shim is asked once for the real executable
//! (`sys.executable`, `process.execPath`, ...), which then runs directly. The answer is cached
//! per (command, PATH) and asked again when PATH changes or the cached file disappears (a
//! version uninstalled). A server also keeps its shims' answers across restarts (`keep_in`: a
//! file in its cache directory, which no sandboxed process can reach): after a restart the
//! answer kept is used at once — asking a pyenv shim takes about 150 ms — and the shim is asked
//! again in the background; a version switched meanwhile is used from the next start on. A
//! real binary — including a tool's own venv interpreter, given by its
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

type Key = (String, Option<OsString>);
type Cache = Mutex<HashMap<Key, PathBuf>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

/// The file a server keeps its shims' answers in (`keep_in`).
static KEPT: OnceLock<PathBuf> = OnceLock::new();

/// Keep the answers of version managers' shims across restarts in `cache_dir` (a server's
/// cache directory; set once).
pub fn keep_in(cache_dir: &Path) {
    let _ = KEPT.set(cache_dir.join("interpreters.json"));
}

/// A key as text: the command and PATH (None when PATH is not Unicode: not kept).
fn key_text(key: &Key) -> Option<String> {
    let path = match &key.1 {
        Some(p) => p.to_str()?,
        None => "",
    };
    Some(format!("{}\0{path}", key.0))
}

fn read_kept(file: &Path) -> HashMap<String, PathBuf> {
    std::fs::read(file)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// The answer kept for `key`, when it still names an interpreter (an absolute path to a file
/// that is no shim).
fn kept(file: &Path, key: &Key) -> Option<PathBuf> {
    let p = read_kept(file).remove(&key_text(key)?)?;
    (p.is_absolute() && p.is_file() && !is_shim(&p)).then_some(p)
}

fn keep(file: &Path, key: &Key, real: &Path) {
    let Some(k) = key_text(key) else {
        return;
    };
    let mut all = read_kept(file);
    if all.get(&k).map(PathBuf::as_path) == Some(real) {
        return;
    }
    all.insert(k, real.to_path_buf());
    if let Ok(bytes) = serde_json::to_vec_pretty(&all) {
        let _ = std::fs::create_dir_all(file.parent().unwrap_or(Path::new(".")));
        if let Err(e) = crate::platform::write_atomic(file, &bytes, crate::platform::Atomic::CACHE)
        {
            tracing::debug!(file = %file.display(), "cannot keep an interpreter's path: {e}");
        }
    }
}

/// The executable to run for the interpreter command `argv0` under the server's PATH, cached;
/// None when it is not installed (the spawn then reports it).
pub fn resolve(argv0: &str) -> Option<PathBuf> {
    resolve_on(argv0, std::env::var_os("PATH"))
}

/// `resolve` for a given PATH (cached per command and PATH; re-resolved when the cached file
/// is gone).
pub fn resolve_on(argv0: &str, path: Option<OsString>) -> Option<PathBuf> {
    resolve_kept(argv0, path, KEPT.get().map(PathBuf::as_path))
}

/// `resolve_on`, keeping shims' answers across restarts in `kept_in` (when given).
fn resolve_kept(argv0: &str, path: Option<OsString>, kept_in: Option<&Path>) -> Option<PathBuf> {
    let key = (argv0.to_string(), path);
    if let Some(p) = cache()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&key)
        .filter(|p| p.is_file())
    {
        return Some(p.clone());
    }
    let remember = |found: &PathBuf| {
        cache()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.clone(), found.clone());
    };
    // Only a bare command found as a shim has an answer kept (a path is used as given).
    let shim = !argv0.contains('/')
        && which_in(argv0, key.1.as_deref()).is_some_and(|found| is_shim(&found));
    if let Some(file) = kept_in.filter(|_| shim)
        && let Some(p) = kept(file, &key)
    {
        remember(&p);
        // Asked again in the background: a version switched since the answer was kept is
        // used from then on (the processes kept for the old one are keyed by it).
        let (file, key, was) = (file.to_path_buf(), key.clone(), p.clone());
        std::thread::spawn(move || {
            if let Some(now) = resolve_uncached(&key.0, key.1.as_deref())
                && now != was
                && !is_shim(&now)
            {
                cache()
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(key.clone(), now.clone());
                keep(&file, &key, &now);
            }
        });
        return Some(p);
    }
    let found = resolve_uncached(argv0, key.1.as_deref())?;
    remember(&found);
    if let Some(file) = kept_in.filter(|_| shim && !is_shim(&found)) {
        keep(file, &key, &found);
    }
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
    fn a_shims_answer_is_kept_across_restarts_and_asked_again_behind_it() {
        let real_perl = which_in("perl", std::env::var_os("PATH").as_deref()).expect("perl");
        let tmp = tempfile::tempdir().unwrap();
        let (shims, v1, v2) = (
            tmp.path().join("shims"),
            tmp.path().join("v1/bin"),
            tmp.path().join("v2/bin"),
        );
        for d in [&shims, &v1, &v2] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::copy(&real_perl, v1.join("perl")).unwrap();
        std::fs::copy(&real_perl, v2.join("perl")).unwrap();
        let target = tmp.path().join("version");
        std::fs::write(&target, v1.join("perl").to_str().unwrap()).unwrap();
        let asked = tmp.path().join("asked");
        script(
            &shims.join("perl"),
            &format!(
                "#!/bin/sh\necho >> {}\nexec \"$(cat {})\" \"$@\"\n",
                asked.display(),
                target.display()
            ),
        );
        let kept_in = tmp.path().join("cache/interpreters.json");
        let path = Some(OsString::from(&shims));
        let times = || std::fs::read_to_string(&asked).unwrap_or_default().len();
        assert_eq!(
            resolve_kept("perl", path.clone(), Some(&kept_in)),
            Some(v1.join("perl"))
        );
        assert_eq!(times(), 1, "the shim was asked once");
        assert_eq!(
            kept(&kept_in, &("perl".into(), path.clone())),
            Some(v1.join("perl"))
        );
        // A restart (the process's memory is gone) after a switch to v2: the answer kept is
        // used at once, the shim asked again behind it, and its new answer kept.
        cache()
            .lock()
            .unwrap()
            .remove(&("perl".to_string(), path.clone()));
        std::fs::write(&target, v2.join("perl").to_str().unwrap()).unwrap();
        assert_eq!(
            resolve_kept("perl", path.clone(), Some(&kept_in)),
            Some(v1.join("perl"))
        );
        for _ in 0..500 {
            if kept(&kept_in, &("perl".into(), path.clone())) == Some(v2.join("perl")) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(
            resolve_kept("perl", path.clone(), Some(&kept_in)),
            Some(v2.join("perl"))
        );
        assert_eq!(
            kept(&kept_in, &("perl".into(), path.clone())),
            Some(v2.join("perl"))
        );
        // A kept answer that names a shim (or nothing) is not used.
        std::fs::write(
            &kept_in,
            serde_json::to_vec(&HashMap::from([(
                key_text(&("perl".into(), path.clone())).unwrap(),
                shims.join("perl"),
            )]))
            .unwrap(),
        )
        .unwrap();
        assert_eq!(kept(&kept_in, &("perl".into(), path)), None);
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
