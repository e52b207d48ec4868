//! The Rust tool chain a build runs and what of it a build sandbox sees: the real `cargo` and
//! `rustc` of the active toolchain (resolved once through rustup's proxies, which would need
//! all of `~/.rustup` and `~/.cargo` visible), its sysroot (read-only), and a cargo home of
//! the build's own whose `registry` is the person's registry cache (read-only while building,
//! writable while fetching) and whose `config.toml` keeps only where crates come from (sources,
//! registries, network settings; never tokens, linkers, flags or wrappers).

use super::BuildError;

/// The compilation target of WASM tools.
pub const TARGET: &str = "wasm32-wasip1";
/// The Rust target of component tools (WASI 0.2, `[run] world`).
pub const COMPONENT_TARGET: &str = "wasm32-wasip2";
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use toml_edit::{DocumentMut, Item};

/// The hosts of crates.io: its sparse index and its downloads.
pub const CRATES_IO: &[&str] = &["index.crates.io", "static.crates.io", "crates.io"];

/// A resolved tool chain.
#[derive(Debug, Clone)]
pub struct Toolchain {
    /// The cargo binary to run inside the sandbox.
    pub cargo: PathBuf,
    /// The rustc it uses (`RUSTC`), when found.
    pub rustc: Option<PathBuf>,
    /// The sysroot's `bin` (first on the build's PATH).
    pub bin: Option<PathBuf>,
    /// Directories the tool chain needs visible, read-only.
    pub visible: Vec<PathBuf>,
    /// `rustc -vV`: part of the dependency cache's key.
    pub version: String,
    /// `rustc --print sysroot`.
    pub sysroot: PathBuf,
}

impl Toolchain {
    /// Whether the standard library of `target` is installed.
    pub fn has_target(&self, target: &str) -> bool {
        self.sysroot.join("lib/rustlib").join(target).is_dir()
    }
}

fn under_system(p: &Path) -> bool {
    crate::sandbox::SYSTEM_DIRS.iter().any(|d| p.starts_with(d))
}

fn capture(program: &Path, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new(program)
        .args(args)
        .current_dir("/")
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Resolve the tool chain of the configured cargo (once per cargo path).
pub fn resolve(cargo: &Path) -> Result<Toolchain, BuildError> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Toolchain>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    if let Some(t) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(cargo) {
        return Ok(t.clone());
    }
    let no_cargo = |message: String| BuildError::NoCargo {
        command: cargo.display().to_string(),
        message,
    };
    let found = crate::sandbox::which(&cargo.to_string_lossy())
        .filter(|p| p.is_file())
        .ok_or_else(|| no_cargo("not found (No such file or directory)".into()))?;
    let rustc = found
        .parent()
        .map(|d| d.join("rustc"))
        .filter(|p| p.is_file())
        .or_else(|| crate::sandbox::which("rustc"))
        .ok_or_else(|| no_cargo("no rustc beside it or on PATH".into()))?;
    let sysroot = capture(&rustc, &["--print", "sysroot"])
        .map(PathBuf::from)
        .ok_or_else(|| no_cargo(format!("`{} --print sysroot` failed", rustc.display())))?;
    let version = capture(&rustc, &["-vV"]).unwrap_or_default();
    // rustup's proxies (cargo, rustc in ~/.cargo/bin) choose a toolchain and run its
    // binaries: the build runs those directly.
    let (cargo_bin, rustc_bin) = (sysroot.join("bin/cargo"), sysroot.join("bin/rustc"));
    let real_cargo = if cargo_bin.is_file() {
        cargo_bin
    } else {
        found.canonicalize().unwrap_or(found)
    };
    let real_rustc = rustc_bin.is_file().then_some(rustc_bin);
    if !sysroot.join("lib/rustlib").join(TARGET).is_dir() {
        return Err(BuildError::NoTarget);
    }
    let mut visible = Vec::new();
    if !under_system(&sysroot) {
        visible.push(sysroot.clone());
    }
    if let Some(dir) = real_cargo.parent()
        && !under_system(dir)
        && !dir.starts_with(&sysroot)
    {
        visible.push(dir.to_path_buf());
    }
    let t = Toolchain {
        cargo: real_cargo,
        rustc: real_rustc,
        bin: sysroot.join("bin").is_dir().then(|| sysroot.join("bin")),
        visible,
        version,
        sysroot,
    };
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(cargo.to_path_buf(), t.clone());
    Ok(t)
}

/// The person's cargo home (`CARGO_HOME`, else `~/.cargo`).
pub fn host_cargo_home() -> Option<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".cargo")))
}

/// The cargo home builds see: `<cache>/cargo-home`, at one fixed path (cargo's fingerprints
/// hold the path of every crate's source, so a path that changed would recompile every
/// dependency), holding `registry` — a link to the person's registry cache — and
/// `config.toml` with only where crates come from. Fetches write it (cargo's locks, the
/// crates downloaded); compiling steps see it read-only.
pub struct CargoHome {
    dir: PathBuf,
    /// The person's registry cache (what `registry` points at).
    pub registry: PathBuf,
    /// Directories that source replacement reads crates from (vendored, local registries).
    pub sources: Vec<PathBuf>,
    /// The hosts crates are fetched from.
    pub hosts: Vec<String>,
}

impl CargoHome {
    pub fn new(cache: &Path) -> Result<CargoHome, BuildError> {
        let host = host_cargo_home().ok_or_else(|| BuildError::Internal {
            message: "no home directory, so no cargo registry cache (set CARGO_HOME)".into(),
        })?;
        let registry = host.join("registry");
        std::fs::create_dir_all(&registry).map_err(BuildError::io("create", &registry))?;
        let registry = registry.canonicalize().unwrap_or(registry);
        let dir = cache.join("cargo-home");
        std::fs::create_dir_all(&dir).map_err(BuildError::io("create", &dir))?;
        let link = dir.join("registry");
        if std::fs::read_link(&link).ok().as_deref() != Some(registry.as_path()) {
            let _ = std::fs::remove_file(&link);
            #[cfg(unix)]
            std::os::unix::fs::symlink(&registry, &link).map_err(BuildError::io("link", &link))?;
        }
        let text = ["config.toml", "config"]
            .iter()
            .find_map(|f| std::fs::read_to_string(host.join(f)).ok())
            .unwrap_or_default();
        let (config, sources, extra_hosts) = sanitized_config(&text);
        let path = dir.join("config.toml");
        if std::fs::read_to_string(&path).ok().as_deref() != Some(config.as_str()) {
            std::fs::write(&path, config).map_err(BuildError::io("write", &path))?;
        }
        // cargo's lock files, there before a read-only step opens them.
        for f in [".package-cache", ".package-cache-mutate"] {
            let p = dir.join(f);
            if !p.exists() {
                std::fs::write(&p, "").map_err(BuildError::io("create", &p))?;
            }
        }
        let mut hosts: Vec<String> = CRATES_IO.iter().map(|h| h.to_string()).collect();
        hosts.extend(extra_hosts);
        hosts.sort();
        hosts.dedup();
        Ok(CargoHome {
            dir,
            registry,
            sources,
            hosts,
        })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }
}

/// The host of a registry URL (`sparse+https://host/...`, `https://host/...`).
fn url_host(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let host = rest.split(['/', ':', '?']).next()?;
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// The person's cargo configuration, keeping only `[source]`, `[registries]`, `[registry]`,
/// `[net]` and `[http]` without tokens or credential providers; also the directories of
/// source replacement and the hosts of configured registries.
fn sanitized_config(text: &str) -> (String, Vec<PathBuf>, Vec<String>) {
    let Ok(mut doc) = text.parse::<DocumentMut>() else {
        return (String::new(), Vec::new(), Vec::new());
    };
    let keep = ["source", "registries", "registry", "net", "http"];
    let drop: Vec<String> = doc
        .iter()
        .map(|(k, _)| k.to_string())
        .filter(|k| !keep.contains(&k.as_str()))
        .collect();
    for k in drop {
        doc.remove(&k);
    }
    let secret = [
        "token",
        "credential-provider",
        "global-credential-providers",
    ];
    let (mut dirs, mut hosts) = (Vec::new(), Vec::new());
    let mut scrub = |t: &mut dyn toml_edit::TableLike| {
        for s in secret {
            t.remove(s);
        }
        for key in ["index", "registry"] {
            if let Some(h) = t.get(key).and_then(Item::as_str).and_then(url_host) {
                hosts.push(h);
            }
        }
        for key in ["directory", "local-registry"] {
            if let Some(d) = t.get(key).and_then(Item::as_str) {
                dirs.push(PathBuf::from(d));
            }
        }
    };
    if let Some(r) = doc.get_mut("registry").and_then(Item::as_table_like_mut) {
        scrub(r);
    }
    for group in ["registries", "source"] {
        if let Some(all) = doc.get_mut(group).and_then(Item::as_table_like_mut) {
            for (_, t) in all.iter_mut() {
                if let Some(t) = t.as_table_like_mut() {
                    scrub(t);
                }
            }
        }
    }
    (doc.to_string(), dirs, hosts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_sees_where_crates_come_from_and_nothing_else() {
        let (text, dirs, hosts) = sanitized_config(
            "[build]\nrustc-wrapper = \"/home/p/sccache\"\n[target.x86_64-unknown-linux-gnu]\nlinker = \"/x\"\n[registry]\ntoken = \"SECRET\"\n[registries.corp]\nindex = \"sparse+https://crates.corp.example/index/\"\ntoken = \"SECRET2\"\n[source.crates-io]\nreplace-with = \"vendored\"\n[source.vendored]\ndirectory = \"/srv/vendor\"\n[net]\nretry = 3\n",
        );
        assert!(
            !text.contains("SECRET") && !text.contains("sccache") && !text.contains("linker"),
            "{text}"
        );
        assert!(
            text.contains("replace-with") && text.contains("retry"),
            "{text}"
        );
        assert_eq!(dirs, vec![PathBuf::from("/srv/vendor")]);
        assert_eq!(hosts, vec!["crates.corp.example".to_string()]);
    }
}
