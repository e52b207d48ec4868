//! Running `cargo build --release --target wasm32-wasip1` for one tool: offline first, its
//! status lines forwarded as progress and logs, compiler diagnostics parsed from cargo's JSON
//! messages, and the whole process group killed on cancellation.

use super::BuildError;
use super::toolchain::{CargoHome, Toolchain};
use crate::config::SandboxConfig;
use crate::runner::script::Host;
use crate::sandbox::contained::{self, Job, Network};
use serde::Serialize;
use serde_json::Value;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio_util::sync::CancellationToken;

pub use super::toolchain::{COMPONENT_TARGET, TARGET};
/// The longest a single cargo run may take.
pub const BUILD_TIMEOUT: Duration = Duration::from_secs(20 * 60);
/// How many compiler errors a failed build reports in full.
const MAX_ERRORS: usize = 10;
/// How many cargo status lines a report keeps.
pub const MAX_LOG: usize = 200;
/// The longest line of cargo's output kept (a build script's panic message can be long).
const MAX_LINE: usize = 2000;
/// The longest rendering of one diagnostic kept.
const MAX_RENDERED: usize = 4000;

/// One compiler diagnostic, located in the tool's own source where possible.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Diagnostic {
    /// "error" or "warning".
    pub level: String,
    /// The error code, e.g. "E0308".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The compiler's message.
    pub message: String,
    /// Relative to the tool directory, e.g. "src/main.rs".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// 1-based line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// 1-based column.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u64>,
    /// rustc's rendering: the message with the source lines it points at.
    pub rendered: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let (Some(file), Some(line)) = (&self.file, self.line) {
            write!(f, "{file}:{line}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
            write!(f, ": ")?;
        }
        write!(f, "{}", self.level)?;
        if let Some(c) = &self.code {
            write!(f, "[{c}]")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// What a successful cargo run produced.
#[derive(Debug, Clone)]
pub struct Report {
    /// Where the built module was (in the build's own target directory, removed after it).
    pub wasm: PathBuf,
    /// The built module.
    pub bytes: Vec<u8>,
    /// The sandbox the build ran in ("bubblewrap", "landlock", "seatbelt", "none").
    pub mechanism: &'static str,
    /// Packages cargo compiled (not fresh) in this run, e.g. ["serde_json", "tool-x"].
    pub compiled: Vec<String>,
    /// cargo's status lines ("Compiling serde_json v1.0.1", "Finished ...").
    pub log: Vec<String>,
    pub warnings: Vec<Diagnostic>,
    pub elapsed: Duration,
}

/// What a build step needs: the tool chain, the cache, the sandbox settings, who hears about
/// progress and who may cancel.
pub struct Cx<'a> {
    pub toolchain: &'a Toolchain,
    /// The Rust target: `TARGET` (a wasip1 module) or `COMPONENT_TARGET` (a component).
    pub target: &'a str,
    pub cache: &'a Path,
    pub sandbox: &'a SandboxConfig,
    pub host: &'a dyn Host,
    pub cancel: &'a CancellationToken,
}

/// A cargo run while a tool is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Compile the dependencies of a dependency set (`artifacts.rs`), offline.
    Dependencies,
    /// Compile the tool, offline.
    Tool,
}

/// The environment of a cargo process: only what the tool chain needs.
fn cargo_env(cx: &Cx<'_>, home: &CargoHome, target: Option<&Path>) -> Vec<(String, OsString)> {
    let path = contained::path_with(cx.toolchain.bin.as_slice());
    let mut env: Vec<(String, OsString)> = vec![
        ("PATH".into(), path),
        ("CARGO_HOME".into(), home.path().into()),
        ("CARGO_TERM_PROGRESS_WHEN".into(), "never".into()),
        ("CARGO_TERM_COLOR".into(), "never".into()),
        ("LANG".into(), "C.UTF-8".into()),
    ];
    if let Some(rustc) = &cx.toolchain.rustc {
        env.push(("RUSTC".into(), rustc.into()));
    }
    if let Some(t) = target {
        env.push(("CARGO_TARGET_DIR".into(), t.into()));
    }
    env
}

/// Fetch the crates `work` needs into the registry cache and write its Cargo.lock: offline
/// first (what is cached already), then from the registries (through the proxy, which lets
/// only their hosts through). cargo runs no package code while fetching.
pub async fn fetch(
    cx: &Cx<'_>,
    tool: &str,
    work: &Path,
    home: &CargoHome,
) -> Result<(), BuildError> {
    let manifest = work.join("Cargo.toml").to_string_lossy().into_owned();
    let job = |online: bool| {
        let mut argv = vec![
            cx.toolchain.cargo.to_string_lossy().into_owned(),
            "fetch".to_string(),
            "--target".into(),
            cx.target.into(),
            "--manifest-path".into(),
            manifest.clone(),
            "--color".into(),
            "never".into(),
        ];
        if !online {
            argv.push("--offline".into());
        }
        let mut read = cx.toolchain.visible.clone();
        read.extend(home.sources.iter().cloned());
        Job {
            what: format!("dependency fetch of tool {tool:?}"),
            argv,
            env: cargo_env(cx, home, None),
            cwd: work.to_path_buf(),
            read,
            write: vec![
                work.to_path_buf(),
                home.path().to_path_buf(),
                home.registry.clone(),
            ],
            network: if online {
                Network::Registries(home.hosts.clone())
            } else {
                Network::None
            },
            config: cx.sandbox,
        }
    };
    let run = |online: bool| async move {
        let job = job(online);
        tokio::select! {
            _ = cx.cancel.cancelled() => Err(BuildError::Cancelled { tool: tool.to_string() }),
            out = contained::output(&job, BUILD_TIMEOUT) => out.map_err(|e| contain_error(tool, e)),
        }
    };
    // Fetches write the person's registry cache: one at a time (cargo's own lock is in the
    // step's private cargo home).
    let lock_path = cx.cache.join("cargo-fetch.lock");
    std::fs::create_dir_all(cx.cache).map_err(BuildError::io("create", cx.cache))?;
    let _guard = crate::platform::blocking(move || {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(BuildError::io("open", &lock_path))?;
        f.lock().map_err(BuildError::io("lock", &lock_path))?;
        Ok::<_, BuildError>(f)
    })
    .await
    .map_err(|e| BuildError::Internal {
        message: e.to_string(),
    })??;
    let out = run(false).await?;
    if out.success {
        return Ok(());
    }
    if !out.stderr.contains("offline") {
        return Err(fetch_failed(tool, &out));
    }
    cx.host.log(
        "info",
        "cargo: the crates are not all cached locally; fetching them from the registries",
    );
    cx.host.progress(
        0.0,
        None,
        Some("fetching crates from the registries".into()),
    );
    let out = run(true).await?;
    if out.success {
        Ok(())
    } else {
        Err(fetch_failed(tool, &out))
    }
}

fn fetch_failed(tool: &str, out: &contained::Output) -> BuildError {
    let message = out
        .stderr
        .lines()
        .find(|l| l.trim_start().starts_with("error"))
        .map(|l| l.trim().to_string())
        .unwrap_or_else(|| format!("cargo fetch ended with {}", out.status));
    BuildError::Cargo {
        tool: tool.to_string(),
        message,
        output: tail(&out.stderr, 40),
    }
}

fn contain_error(tool: &str, e: contained::ContainError) -> BuildError {
    use toolsmith_error::Hint;
    BuildError::Sandbox {
        tool: tool.to_string(),
        hint: e.hint().unwrap_or_default(),
        message: e.to_string(),
    }
}

/// Run `cargo build` for the crate in `work` into `target_dir`, offline and contained: the
/// crate's directory read-only, the target directory writable, nothing else of HOME.
pub async fn run(
    cx: &Cx<'_>,
    tool: &str,
    work: &Path,
    target_dir: &Path,
    home: &CargoHome,
    step: Step,
) -> Result<Report, BuildError> {
    let started = Instant::now();
    let host = cx.host;
    let cancel = cx.cancel;
    let manifest = work.join("Cargo.toml").to_string_lossy().into_owned();
    let mut argv = vec![
        cx.toolchain.cargo.to_string_lossy().into_owned(),
        "build".into(),
        "--release".into(),
        "--target".into(),
        cx.target.into(),
        "--message-format".into(),
        "json".into(),
        "--color".into(),
        "never".into(),
        "--manifest-path".into(),
        manifest,
        "--offline".into(),
    ];
    // The tool's lock is what was fetched; a dependency crate's may lose the tool's own path
    // crates (cargo prunes them, offline).
    if step == Step::Tool {
        argv.push("--locked".into());
    }
    let mut read = cx.toolchain.visible.clone();
    read.extend(home.sources.iter().cloned());
    read.push(home.registry.clone());
    read.push(home.path().to_path_buf());
    read.push(work.to_path_buf());
    let job = Job {
        what: format!("build of tool {tool:?}"),
        argv,
        env: cargo_env(cx, home, Some(target_dir)),
        cwd: work.to_path_buf(),
        read,
        // A dependency crate is toolsmith's own (its entry's), rewritten lock and all.
        write: match step {
            Step::Tool => vec![target_dir.to_path_buf()],
            Step::Dependencies => vec![target_dir.to_path_buf(), work.to_path_buf()],
        },
        network: Network::None,
        config: cx.sandbox,
    };
    // cargo, rustc, build scripts and linkers are one tree, killed together on a stop or a drop.
    let mut started_job = contained::spawn(&job).map_err(|e| contain_error(tool, e))?;
    let child = &mut started_job.child;
    let (Some(stdout), Some(stderr)) = (child.stdout().take(), child.stderr().take()) else {
        return Err(BuildError::Internal {
            message: "cargo's output pipes are missing".into(),
        });
    };
    let mut out_lines = BufReader::new(stdout).lines();
    let mut err_lines = BufReader::new(stderr).lines();
    let (mut out_open, mut err_open) = (true, true);
    let deadline = tokio::time::sleep(BUILD_TIMEOUT);
    tokio::pin!(deadline);

    let mut log: Vec<String> = Vec::new();
    let mut stderr_text = contained::Bounded::default();
    let mut errors: Vec<Diagnostic> = Vec::new();
    let mut warnings: Vec<Diagnostic> = Vec::new();
    let mut compiled: Vec<String> = Vec::new();
    let mut wasm: Option<PathBuf> = None;
    let mut steps = 0u32;
    let what = match step {
        Step::Dependencies => "the dependencies",
        Step::Tool => "the tool",
    };
    host.progress(
        0.0,
        None,
        Some(format!(
            "cargo build --release --target {} ({what})",
            cx.target
        )),
    );
    while out_open || err_open {
        tokio::select! {
            _ = cancel.cancelled() => {
                child.kill();
                return Err(BuildError::Cancelled { tool: tool.to_string() });
            }
            _ = &mut deadline => {
                child.kill();
                return Err(BuildError::Cargo {
                    tool: tool.to_string(),
                    message: format!("cargo ran longer than {} s and was stopped", BUILD_TIMEOUT.as_secs()),
                    output: tail(&stderr_text.text(), 40),
                });
            }
            line = out_lines.next_line(), if out_open => match line {
                Ok(Some(l)) => on_message(&l, &mut errors, &mut warnings, &mut compiled, &mut wasm),
                _ => out_open = false,
            },
            line = err_lines.next_line(), if err_open => match line {
                Ok(Some(l)) => {
                    let l = clip(&l, MAX_LINE);
                    stderr_text.push(l.as_bytes());
                    stderr_text.push(b"\n");
                    let status = l.trim();
                    if !status.is_empty() {
                        if status.starts_with("Compiling") || status.starts_with("Finished") || status.starts_with("Locking")
                            || status.starts_with("Downloaded") || status.starts_with("Updating") {
                            steps += 1;
                            host.progress(f64::from(steps), None, Some(status.to_string()));
                        }
                        host.log("info", &format!("cargo: {status}"));
                        if log.len() < MAX_LOG {
                            log.push(status.to_string());
                        }
                    }
                }
                _ => err_open = false,
            },
        }
    }
    let status = tokio::select! {
        _ = cancel.cancelled() => {
            child.kill();
            return Err(BuildError::Cancelled { tool: tool.to_string() });
        }
        s = child.wait() => s,
    };
    let status = status.map_err(|e| BuildError::Internal {
        message: format!("waiting for cargo: {e}"),
    })?;
    let stderr_text = stderr_text.text();

    let missing_target = errors
        .iter()
        .any(|d| d.rendered.contains("target may not be installed"))
        || stderr_text.contains("target may not be installed");
    if missing_target {
        return Err(match cx.target {
            COMPONENT_TARGET => BuildError::NoComponentTarget,
            _ => BuildError::NoTarget,
        });
    }
    let finished = status.success() && (step == Step::Dependencies || wasm.is_some());
    if !finished {
        if !errors.is_empty() {
            let total = errors.len();
            errors.truncate(MAX_ERRORS);
            return Err(BuildError::Compile {
                tool: tool.to_string(),
                total,
                diagnostics: errors,
            });
        }
        let message = stderr_text
            .lines()
            .find(|l| l.trim_start().starts_with("error"))
            .map(|l| l.trim().to_string())
            .unwrap_or_else(|| format!("cargo exited with {status}"));
        return Err(BuildError::Cargo {
            tool: tool.to_string(),
            message,
            output: tail(&stderr_text, 40),
        });
    }
    Ok(Report {
        wasm: wasm.unwrap_or_default(),
        bytes: Vec::new(),
        compiled,
        log,
        warnings,
        elapsed: started.elapsed(),
        mechanism: started_job.mechanism.as_str(),
    })
}

/// At most `n` bytes of a line (cut at a character boundary).
fn clip(s: &str, n: usize) -> String {
    if s.len() <= n {
        return s.to_string();
    }
    let mut end = n;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes left out)", &s[..end], s.len() - end)
}

/// The last `n` lines of a text.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The package name in a cargo package id (`registry+https://...#serde_json@1.0.1`, or the
/// older `serde_json 1.0.1 (registry+...)`).
fn package_of(id: &str) -> String {
    if id.contains(' ') {
        return id.split(' ').next().unwrap_or(id).to_string();
    }
    let after = id.rsplit('#').next().unwrap_or(id);
    after.split('@').next().unwrap_or(after).to_string()
}

/// Interpret one line of cargo's JSON output.
fn on_message(
    line: &str,
    errors: &mut Vec<Diagnostic>,
    warnings: &mut Vec<Diagnostic>,
    compiled: &mut Vec<String>,
    wasm: &mut Option<PathBuf>,
) {
    let Ok(v) = serde_json::from_str::<Value>(line) else {
        return;
    };
    match v.get("reason").and_then(Value::as_str) {
        Some("compiler-artifact") => {
            let pkg = package_of(v["package_id"].as_str().unwrap_or(""));
            if v["fresh"] == Value::Bool(false) && !compiled.contains(&pkg) {
                compiled.push(pkg);
            }
            // A module is the tool's bin, a component its cdylib.
            let is_bin = v["target"]["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|x| x == "bin" || x == "cdylib"));
            if is_bin {
                let file = v["filenames"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .find(|f| f.ends_with(".wasm"));
                if let Some(f) = file {
                    *wasm = Some(PathBuf::from(f));
                }
            }
        }
        Some("compiler-message") => {
            if let Some(d) = diagnostic(&v["message"]) {
                match d.level.as_str() {
                    "error" => errors.push(d),
                    "warning" => warnings.push(d),
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// A compiler message as a `Diagnostic`; None for the summaries ("aborting due to ...").
fn diagnostic(m: &Value) -> Option<Diagnostic> {
    let level = m["level"].as_str()?.to_string();
    let message = m["message"].as_str()?.to_string();
    if message.starts_with("aborting due to") || message.contains("warning emitted") {
        return None;
    }
    let spans = m["spans"].as_array();
    let primary = spans.and_then(|s| {
        s.iter()
            .find(|x| x["is_primary"] == Value::Bool(true))
            .or_else(|| s.first())
    });
    let level = if level.starts_with("error") {
        "error".to_string()
    } else {
        level
    };
    Some(Diagnostic {
        level,
        code: m["code"]["code"].as_str().map(str::to_string),
        message: clip(&message, MAX_LINE),
        file: primary.and_then(|p| p["file_name"].as_str().map(str::to_string)),
        line: primary.and_then(|p| p["line_start"].as_u64()),
        column: primary.and_then(|p| p["column_start"].as_u64()),
        rendered: clip(
            m["rendered"].as_str().unwrap_or("").trim_end(),
            MAX_RENDERED,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_ids_both_formats() {
        assert_eq!(
            package_of("registry+https://github.com/rust-lang/crates.io-index#serde_json@1.0.154"),
            "serde_json"
        );
        assert_eq!(package_of("path+file:///tmp/t#tool-x@0.1.0"), "tool-x");
        assert_eq!(package_of("serde 1.0.0 (registry+https://x)"), "serde");
    }

    #[test]
    fn compiler_messages_become_located_diagnostics() {
        let line = r#"{"reason":"compiler-message","package_id":"path+file:///w#tool-x@0.1.0","message":{"rendered":"error[E0308]: mismatched types\n --> src/main.rs:4:13\n","level":"error","message":"mismatched types","code":{"code":"E0308"},"spans":[{"file_name":"src/main.rs","line_start":4,"column_start":13,"is_primary":true}]}}"#;
        let (mut e, mut w, mut c, mut wasm) = (vec![], vec![], vec![], None);
        on_message(line, &mut e, &mut w, &mut c, &mut wasm);
        assert_eq!(e.len(), 1);
        assert_eq!(
            e[0].to_string(),
            "src/main.rs:4:13: error[E0308]: mismatched types"
        );
        let summary = r#"{"reason":"compiler-message","message":{"rendered":"error: aborting due to 1 previous error","level":"error","message":"aborting due to 1 previous error","code":null,"spans":[]}}"#;
        on_message(summary, &mut e, &mut w, &mut c, &mut wasm);
        assert_eq!(e.len(), 1);
        let art = r#"{"reason":"compiler-artifact","package_id":"path+file:///w#tool-x@0.1.0","target":{"kind":["bin"]},"filenames":["/t/wasm32-wasip1/release/tool-x.wasm"],"fresh":false}"#;
        on_message(art, &mut e, &mut w, &mut c, &mut wasm);
        assert_eq!(c, vec!["tool-x".to_string()]);
        assert_eq!(
            wasm,
            Some(PathBuf::from("/t/wasm32-wasip1/release/tool-x.wasm"))
        );
    }
}
