//! toolsmith's configuration: every `TOOLSMITH_*` variable it reads, read once, here.
//!
//! The binary builds one `Config` at start (`Config::from_env`, a bad value is an error naming
//! the variable, before anything runs), hands it to `App`, and everything below gets the values
//! it needs from there: the runners through their recipe and sandbox spec, builds through
//! `App`. No other module reads a `TOOLSMITH_*` variable (`tests/it/architecture/boundaries.rs` checks it).
//! Variables toolsmith *sets* for a tool's process (`TOOLSMITH_TOOL`, `TOOLSMITH_TOOL_DIR`,
//! `TOOLSMITH_WORKER`) are not configuration. `TOOLSMITH_EXPOSE` is the environment form of
//! `serve --expose` and is parsed with that flag by clap.
//!
//! `Config::default()` is the configuration of an empty environment (tests, examples).
//!
//! One thing is process-wide: `Config::process()`, the configuration the binary installed at
//! start (`install`), else, in a library or a test, the environment's, read once on first use.
//! Its one reader is `Toolbox::open`, for the personal directory a toolbox handle starts with
//! (an `App` then hands the handle its own).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use thiserror::Error;

/// The default number of idle spares per script tool in a server.
pub const DEFAULT_SPARES: usize = 1;
/// The default bound on idle spares overall.
pub const DEFAULT_MAX_SPARES: usize = 8;
/// The default bound on the memory of what waits for script calls (MiB): spares and fork
/// servers together, a laptop's share.
pub const DEFAULT_SPARE_MEMORY_MB: u64 = 512;
/// The default bound on the memory of loaded WASM tools (MiB): their compiled code and memory
/// images, kept so their calls start warm; a laptop's share (about four Python components).
pub const DEFAULT_WASM_MEMORY_MB: u64 = 256;
/// The default bound on live warm workers.
pub const DEFAULT_MAX_WORKERS: usize = 8;

/// Everything toolsmith takes from its environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// `TOOLSMITH_DATA`: this person's private directory (approvals, secrets, audit log, keys);
    /// default `<platform data dir>/toolsmith-private`.
    pub data_dir: PathBuf,
    /// `TOOLSMITH_CACHE`: the cache directory (builds, compiled modules, environments of tools
    /// outside a toolbox); default `<platform cache dir>/toolsmith`, else
    /// `<temp dir>/toolsmith-cache`. Never inside a git repository.
    pub cache_dir: PathBuf,
    /// `TOOLSMITH_HOME`: the default toolbox; default `<platform data dir>/toolsmith`.
    pub home: PathBuf,
    /// `TOOLSMITH_TOOLBOX`: the toolbox the command line opens, as `--toolbox` (which wins).
    pub toolbox: Option<PathBuf>,
    /// `TOOLSMITH_LOG`: the log filter (`tracing` directives), instead of the one `-v` picks.
    pub log: Option<String>,
    /// `TOOLSMITH_ROOTS`: directories tools may be granted access to (a path list, absolute).
    pub roots: Vec<PathBuf>,
    /// `TOOLSMITH_SPARES`: idle spares per script tool in a server (`0`: none); default 1.
    pub spares: usize,
    /// `TOOLSMITH_MAX_SPARES`: the most idle spares (and fork servers) overall; default 8.
    pub max_spares: usize,
    /// `TOOLSMITH_SPARE_MEMORY`: the most resident memory (MiB) spares and fork servers may
    /// hold while they wait; default 512.
    pub spare_memory_mb: u64,
    /// `TOOLSMITH_WASM_MEMORY`: the most memory (MiB) loaded WASM tools (compiled code and
    /// memory images) may hold in a server; past it, the ones used least recently are unloaded
    /// and loaded again at their next call; default 256.
    pub wasm_memory_mb: u64,
    /// `TOOLSMITH_FORK_SERVERS`: Python tools' calls are forked from a fork server per tool
    /// (yes by default; `0` starts one process per call, through spares).
    pub fork_servers: bool,
    /// `TOOLSMITH_MAX_WORKERS`: the most live warm workers (at least 1); default 8.
    pub max_workers: usize,
    /// `TOOLSMITH_CARGO`: the cargo binary builds run; default `cargo` on PATH.
    pub cargo: PathBuf,
    /// `TOOLSMITH_COMPONENTIZE_PY`: the componentize-py executable Python component builds
    /// run; default `componentize-py` on PATH.
    pub componentize_py: PathBuf,
    /// `TOOLSMITH_COMPONENTIZE_JS`: the ComponentizeJS executable (npm's
    /// `node_modules/.bin/componentize-js`) JavaScript component builds run; default
    /// `componentize-js` on PATH.
    pub componentize_js: PathBuf,
    /// `TOOLSMITH_GIST_BASE`: where Gists are fetched from; default https://gist.github.com.
    pub gist_base: Option<String>,
    /// `TOOLSMITH_APPROVAL_WAIT`: seconds a call waits for the person to decide (or set a
    /// secret) in the console after its client opened the console's link; default 120.
    pub approval_wait_secs: usize,
    /// `TOOLSMITH_CONFORMANCE_FIXTURES`: serve the MCP conformance suite's fixtures (tests only).
    pub conformance_fixtures: bool,
    /// `TOOLSMITH_TELEMETRY_CONTENT`: a person lets exported traces carry tools' arguments and
    /// results (redacted of every stored secret); off by default. Where traces go is said by
    /// the standard `OTEL_*` variables, which the telemetry layer reads (`toolsmith-telemetry`).
    pub telemetry_content: bool,
    /// How script processes are isolated.
    pub sandbox: SandboxConfig,
    /// `TOOLSMITH_EMBEDDINGS` and its companions: where search's embeddings come from.
    pub embeddings: Embeddings,
}

/// The sandbox's part of the configuration (it travels with a script's sandbox spec).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxConfig {
    /// `TOOLSMITH_ALLOW_UNSANDBOXED` (or `--allow-unsandboxed`): a person lets scripts run
    /// without a sandbox when none works here (or a tool asks for none).
    pub allow_unsandboxed: bool,
    /// `TOOLSMITH_BWRAP`: the bubblewrap binary; default `bwrap` on PATH.
    pub bwrap: PathBuf,
    /// `TOOLSMITH_SANDBOX_NO_FALLBACK` (tests only): pretend the in-process Linux sandbox is
    /// unavailable. It can only take protection away, never make a script run unsandboxed.
    pub no_fallback: bool,
    /// `TOOLSMITH_NO_CGROUP`: make no pids cgroup per call (rlimits and namespaces still apply).
    pub no_cgroup: bool,
    /// toolsmith's own directories, which no grant may show: the personal directory (first),
    /// the cache, toolsmith's home and the configured toolbox (from the variables above).
    pub private: Vec<PathBuf>,
}

/// Where the semantic half of search gets its embeddings (`TOOLSMITH_EMBEDDINGS`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Embeddings {
    /// `builtin` (the default): the static table compiled into toolsmith; nothing to download.
    #[default]
    Builtin,
    /// `none`: lexical search only.
    None,
    /// `local`: the model directory `TOOLSMITH_EMBEDDINGS_MODEL_DIR` (config.json,
    /// model.safetensors, tokenizer.json of a BERT sentence model), run in-process.
    Local {
        /// The model directory.
        dir: PathBuf,
    },
    /// `endpoint`: an OpenAI-compatible API at `TOOLSMITH_EMBEDDINGS_URL` (its base, e.g.
    /// `http://127.0.0.1:11434/v1`), model `TOOLSMITH_EMBEDDINGS_MODEL`, the API key in the
    /// toolsmith secret named by `TOOLSMITH_EMBEDDINGS_KEY` (none when unset).
    Endpoint {
        /// The API's base URL.
        url: String,
        /// The model asked for.
        model: String,
        /// The name of the toolsmith secret holding the API key.
        key: Option<String>,
    },
}

/// Whether `url` is plain HTTP to this machine.
fn loopback_http(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("http://") else {
        return false;
    };
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = host.rsplit_once(':').map_or(host, |(h, _)| h);
    matches!(host, "127.0.0.1" | "localhost" | "[::1]")
}

impl Default for SandboxConfig {
    /// The sandbox settings of an empty environment.
    fn default() -> SandboxConfig {
        Config::default().sandbox
    }
}

/// A variable whose value toolsmith cannot use.
/// Each variant is told by its `#[error]` message; the fields are what the message names.
#[allow(missing_docs)]
#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("{var}={value:?} is not {expected}")]
    Invalid {
        var: &'static str,
        value: String,
        expected: &'static str,
        hint: String,
    },
}

impl toolsmith_error::Hint for ConfigError {
    fn hint(&self) -> Option<String> {
        match self {
            ConfigError::Invalid { hint, .. } => Some(hint.clone()),
        }
    }
}

impl Default for Config {
    /// The configuration of an empty environment.
    fn default() -> Config {
        Config::from_vars(|_| None).expect("an empty environment is a valid configuration")
    }
}

type Text<'a> = dyn Fn(&'static str) -> Result<Option<String>, ConfigError> + 'a;

/// `TOOLSMITH_EMBEDDINGS` and the variables of the source it names.
fn embeddings(
    text: &Text<'_>,
    path: &dyn Fn(&'static str) -> Option<PathBuf>,
) -> Result<Embeddings, ConfigError> {
    let invalid = |var: &'static str, value: String, expected: &'static str, hint: String| {
        ConfigError::Invalid {
            var,
            value,
            expected,
            hint,
        }
    };
    let kind = text("TOOLSMITH_EMBEDDINGS")?.unwrap_or_else(|| "builtin".into());
    match kind.trim().to_ascii_lowercase().as_str() {
        "builtin" | "built-in" | "default" => Ok(Embeddings::Builtin),
        "none" | "off" | "lexical" => Ok(Embeddings::None),
        "local" => match path("TOOLSMITH_EMBEDDINGS_MODEL_DIR") {
            Some(dir) if dir.is_absolute() => Ok(Embeddings::Local { dir }),
            Some(dir) => Err(invalid(
                "TOOLSMITH_EMBEDDINGS_MODEL_DIR",
                dir.display().to_string(),
                "an absolute path",
                "give the model directory (config.json, model.safetensors, tokenizer.json) as an absolute path".into(),
            )),
            None => Err(invalid(
                "TOOLSMITH_EMBEDDINGS",
                kind,
                "usable without TOOLSMITH_EMBEDDINGS_MODEL_DIR",
                "set TOOLSMITH_EMBEDDINGS_MODEL_DIR to a directory with config.json, model.safetensors and tokenizer.json (e.g. all-MiniLM-L6-v2)".into(),
            )),
        },
        "endpoint" => {
            let Some(url) = text("TOOLSMITH_EMBEDDINGS_URL")? else {
                return Err(invalid(
                    "TOOLSMITH_EMBEDDINGS",
                    kind,
                    "usable without TOOLSMITH_EMBEDDINGS_URL",
                    "set TOOLSMITH_EMBEDDINGS_URL to the API base of an OpenAI-compatible server (e.g. http://127.0.0.1:11434/v1)".into(),
                ));
            };
            let url = url.trim().trim_end_matches('/').to_string();
            let key = text("TOOLSMITH_EMBEDDINGS_KEY")?.map(|k| k.trim().to_string());
            let https = url.starts_with("https://");
            if !https && !url.starts_with("http://") {
                return Err(invalid(
                    "TOOLSMITH_EMBEDDINGS_URL",
                    url,
                    "an http:// or https:// URL",
                    "give the API base, e.g. http://127.0.0.1:11434/v1".into(),
                ));
            }
            if key.is_some() && !https && !loopback_http(&url) {
                return Err(invalid(
                    "TOOLSMITH_EMBEDDINGS_URL",
                    url,
                    "https (an API key is never sent in clear beyond this machine)",
                    "use the endpoint's https:// URL, or unset TOOLSMITH_EMBEDDINGS_KEY for a server that needs no key".into(),
                ));
            }
            let model = text("TOOLSMITH_EMBEDDINGS_MODEL")?.unwrap_or_else(|| "text-embedding-3-small".into());
            Ok(Embeddings::Endpoint { url, model, key })
        }
        _ => Err(invalid(
            "TOOLSMITH_EMBEDDINGS",
            kind,
            "builtin, none, local or endpoint",
            "unset it for the built-in embeddings, or set none, local (with TOOLSMITH_EMBEDDINGS_MODEL_DIR) or endpoint (with TOOLSMITH_EMBEDDINGS_URL)".into(),
        )),
    }
}

impl Config {
    /// Read every `TOOLSMITH_*` variable of this process, once.
    pub fn from_env() -> Result<Config, ConfigError> {
        Config::from_vars(std::env::var_os)
    }

    /// The configuration given by `get` (a variable's value, None when unset).
    pub fn from_vars(
        get: impl Fn(&'static str) -> Option<std::ffi::OsString>,
    ) -> Result<Config, ConfigError> {
        // An empty value counts as unset (`VAR= toolsmith ...`).
        let get = |var: &'static str| get(var).filter(|v| !v.is_empty());
        let path = |var| get(var).map(PathBuf::from);
        let text = |var: &'static str| -> Result<Option<String>, ConfigError> {
            get(var)
                .map(|v| {
                    v.into_string().map_err(|v| ConfigError::Invalid {
                        var,
                        value: v.to_string_lossy().into_owned(),
                        expected: "valid Unicode",
                        hint: format!("set {var} to a value in UTF-8, or unset it"),
                    })
                })
                .transpose()
        };
        let count = |var: &'static str, default: usize, min: usize| -> Result<usize, ConfigError> {
            let Some(v) = text(var)? else {
                return Ok(default);
            };
            match v.trim().parse::<usize>() {
                Ok(n) if n >= min => Ok(n),
                _ => Err(ConfigError::Invalid {
                    var,
                    expected: if min == 0 {
                        "a whole number"
                    } else {
                        "a whole number of at least 1"
                    },
                    hint: format!("set {var} to a whole number (default {default}), or unset it"),
                    value: v,
                }),
            }
        };
        let flag_or = |var: &'static str, default: bool| -> Result<bool, ConfigError> {
            let Some(v) = text(var)? else {
                return Ok(default);
            };
            match v.trim().to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" | "y" | "t" => Ok(true),
                "0" | "false" | "no" | "off" | "n" | "f" => Ok(false),
                _ => Err(ConfigError::Invalid {
                    var,
                    expected: "a yes or no",
                    hint: format!("set {var}=1 (on) or {var}=0 (off), or unset it"),
                    value: v,
                }),
            }
        };
        let flag = |var: &'static str| flag_or(var, false);
        let roots = match get("TOOLSMITH_ROOTS") {
            None => Vec::new(),
            Some(v) => {
                let roots: Vec<PathBuf> = std::env::split_paths(&v).collect();
                if let Some(bad) = roots.iter().find(|p| !p.is_absolute()) {
                    return Err(ConfigError::Invalid {
                        var: "TOOLSMITH_ROOTS",
                        value: v.to_string_lossy().into_owned(),
                        expected: "a list of absolute paths",
                        hint: format!(
                            "{} is relative: give every root as an absolute path, separated by `{}`",
                            bad.display(),
                            if cfg!(windows) { ';' } else { ':' }
                        ),
                    });
                }
                roots
            }
        };
        let embeddings = embeddings(&text, &path)?;
        let data = dirs::data_dir().unwrap_or_else(|| PathBuf::from("."));
        let data_dir = path("TOOLSMITH_DATA").unwrap_or_else(|| data.join("toolsmith-private"));
        let cache_dir = path("TOOLSMITH_CACHE")
            .or_else(|| dirs::cache_dir().map(|d| d.join("toolsmith")))
            .unwrap_or_else(|| std::env::temp_dir().join("toolsmith-cache"));
        let home = path("TOOLSMITH_HOME").unwrap_or_else(|| data.join("toolsmith"));
        let toolbox = path("TOOLSMITH_TOOLBOX");
        let mut private = vec![data_dir.clone(), cache_dir.clone(), home.clone()];
        private.extend(toolbox.clone());
        Ok(Config {
            embeddings,
            data_dir,
            cache_dir,
            home,
            toolbox,
            log: text("TOOLSMITH_LOG")?,
            roots,
            spares: count("TOOLSMITH_SPARES", DEFAULT_SPARES, 0)?,
            max_spares: count("TOOLSMITH_MAX_SPARES", DEFAULT_MAX_SPARES, 0)?,
            spare_memory_mb: count(
                "TOOLSMITH_SPARE_MEMORY",
                DEFAULT_SPARE_MEMORY_MB as usize,
                0,
            )? as u64,
            wasm_memory_mb: count("TOOLSMITH_WASM_MEMORY", DEFAULT_WASM_MEMORY_MB as usize, 0)?
                as u64,
            fork_servers: flag_or("TOOLSMITH_FORK_SERVERS", true)?,
            max_workers: count("TOOLSMITH_MAX_WORKERS", DEFAULT_MAX_WORKERS, 1)?,
            cargo: path("TOOLSMITH_CARGO").unwrap_or_else(|| PathBuf::from("cargo")),
            componentize_py: path("TOOLSMITH_COMPONENTIZE_PY")
                .unwrap_or_else(|| PathBuf::from("componentize-py")),
            componentize_js: path("TOOLSMITH_COMPONENTIZE_JS")
                .unwrap_or_else(|| PathBuf::from("componentize-js")),
            gist_base: text("TOOLSMITH_GIST_BASE")?,
            approval_wait_secs: count("TOOLSMITH_APPROVAL_WAIT", 120, 0)?,
            conformance_fixtures: flag("TOOLSMITH_CONFORMANCE_FIXTURES")?,
            telemetry_content: flag("TOOLSMITH_TELEMETRY_CONTENT")?,
            sandbox: SandboxConfig {
                allow_unsandboxed: flag("TOOLSMITH_ALLOW_UNSANDBOXED")?,
                bwrap: path("TOOLSMITH_BWRAP").unwrap_or_else(|| PathBuf::from("bwrap")),
                no_fallback: flag("TOOLSMITH_SANDBOX_NO_FALLBACK")?,
                no_cgroup: flag("TOOLSMITH_NO_CGROUP")?,
                private,
            },
        })
    }

    /// Make this the process's configuration (`Config::process`); the binary does it once at
    /// start, before anything reads it. Later calls change nothing.
    pub fn install(config: Arc<Config>) {
        let _ = PROCESS.set(config);
    }

    /// The process's configuration, for the few places no `App` reaches (see the module
    /// documentation): the installed one, else the environment's, read on first use (a value
    /// that does not parse is logged and its default used).
    pub fn process() -> Arc<Config> {
        Arc::clone(PROCESS.get_or_init(|| {
            Arc::new(Config::from_env().unwrap_or_else(|e| {
                tracing::warn!("{e}; using the defaults");
                Config::default()
            }))
        }))
    }
}

static PROCESS: OnceLock<Arc<Config>> = OnceLock::new();

#[cfg(test)]
mod tests {
    use super::*;
    use toolsmith_error::Hint;

    fn with(vars: &[(&'static str, &str)]) -> Result<Config, ConfigError> {
        let vars: Vec<(&'static str, String)> =
            vars.iter().map(|(k, v)| (*k, v.to_string())).collect();
        Config::from_vars(|var| vars.iter().find(|(k, _)| *k == var).map(|(_, v)| v.into()))
    }

    #[test]
    fn defaults_and_values() {
        let d = Config::default();
        assert_eq!((d.spares, d.max_spares, d.max_workers), (1, 8, 8));
        assert!(d.fork_servers && d.spare_memory_mb == DEFAULT_SPARE_MEMORY_MB);
        assert_eq!(d.wasm_memory_mb, DEFAULT_WASM_MEMORY_MB);
        assert!(d.roots.is_empty() && !d.sandbox.allow_unsandboxed);
        assert_eq!(d.sandbox.bwrap, PathBuf::from("bwrap"));
        let c = with(&[
            ("TOOLSMITH_SPARES", "0"),
            ("TOOLSMITH_DATA", "/tmp/p"),
            ("TOOLSMITH_ALLOW_UNSANDBOXED", "yes"),
            ("TOOLSMITH_NO_CGROUP", "1"),
            ("TOOLSMITH_CACHE", ""),
            ("TOOLSMITH_FORK_SERVERS", "0"),
            ("TOOLSMITH_SPARE_MEMORY", "128"),
            ("TOOLSMITH_WASM_MEMORY", "64"),
        ])
        .unwrap();
        assert_eq!(c.spares, 0);
        assert_eq!(c.wasm_memory_mb, 64);
        assert!(!c.fork_servers && c.spare_memory_mb == 128);
        assert_eq!(c.data_dir, PathBuf::from("/tmp/p"));
        assert!(c.sandbox.allow_unsandboxed && c.sandbox.no_cgroup);
        assert_eq!(c.cache_dir, d.cache_dir, "an empty value is unset");
    }

    #[test]
    fn a_bad_value_names_the_variable_and_what_to_do() {
        let e = with(&[("TOOLSMITH_SPARES", "abc")]).unwrap_err();
        assert!(e.to_string().contains("TOOLSMITH_SPARES=\"abc\""), "{e}");
        assert!(e.hint().unwrap().contains("whole number"), "{e:?}");
        let e = with(&[("TOOLSMITH_MAX_WORKERS", "0")]).unwrap_err();
        assert!(e.to_string().contains("at least 1"), "{e}");
        let e = with(&[("TOOLSMITH_ALLOW_UNSANDBOXED", "maybe")]).unwrap_err();
        assert!(e.to_string().contains("TOOLSMITH_ALLOW_UNSANDBOXED"), "{e}");
        let e = with(&[("TOOLSMITH_ROOTS", "relative/dir")]).unwrap_err();
        assert!(e.hint().unwrap().contains("relative/dir"), "{e:?}");
    }

    #[test]
    fn embedding_sources() {
        assert_eq!(Config::default().embeddings, Embeddings::Builtin);
        assert_eq!(
            with(&[("TOOLSMITH_EMBEDDINGS", "none")])
                .unwrap()
                .embeddings,
            Embeddings::None
        );
        let c = with(&[
            ("TOOLSMITH_EMBEDDINGS", "local"),
            ("TOOLSMITH_EMBEDDINGS_MODEL_DIR", "/models/minilm"),
        ])
        .unwrap();
        assert_eq!(
            c.embeddings,
            Embeddings::Local {
                dir: "/models/minilm".into()
            }
        );
        let e = with(&[("TOOLSMITH_EMBEDDINGS", "local")]).unwrap_err();
        assert!(
            e.hint().unwrap().contains("TOOLSMITH_EMBEDDINGS_MODEL_DIR"),
            "{e}"
        );
        let c = with(&[
            ("TOOLSMITH_EMBEDDINGS", "endpoint"),
            ("TOOLSMITH_EMBEDDINGS_URL", "http://127.0.0.1:11434/v1/"),
            ("TOOLSMITH_EMBEDDINGS_MODEL", "nomic-embed-text"),
            ("TOOLSMITH_EMBEDDINGS_KEY", "ollama"),
        ])
        .unwrap();
        assert_eq!(
            c.embeddings,
            Embeddings::Endpoint {
                url: "http://127.0.0.1:11434/v1".into(),
                model: "nomic-embed-text".into(),
                key: Some("ollama".into())
            }
        );
        // A key is never sent in clear past this machine.
        let e = with(&[
            ("TOOLSMITH_EMBEDDINGS", "endpoint"),
            ("TOOLSMITH_EMBEDDINGS_URL", "http://api.example.com/v1"),
            ("TOOLSMITH_EMBEDDINGS_KEY", "k"),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("https"), "{e}");
        let e = with(&[("TOOLSMITH_EMBEDDINGS", "magic")]).unwrap_err();
        assert!(
            e.to_string().contains("builtin, none, local or endpoint"),
            "{e}"
        );
        assert!(e.hint().unwrap().contains("unset it"), "{e}");
    }
}
