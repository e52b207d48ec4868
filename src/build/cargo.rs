//! Running `cargo build --release --target wasm32-wasip1` for one tool: offline first, its
//! status lines forwarded as progress and logs, compiler diagnostics parsed from cargo's JSON
//! messages, and the whole process group killed on cancellation.

use super::BuildError;
use crate::runner::script::Host;
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio_util::sync::CancellationToken;

/// The compilation target of WASM tools.
pub const TARGET: &str = "wasm32-wasip1";
/// The longest a single cargo run may take.
pub const BUILD_TIMEOUT: Duration = Duration::from_secs(20 * 60);
/// How many compiler errors a failed build reports in full.
const MAX_ERRORS: usize = 10;
/// How many cargo status lines a report keeps.
const MAX_LOG: usize = 200;

/// One compiler diagnostic, located in the tool's own source where possible.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Diagnostic {
    /// "error" or "warning".
    pub level: String,
    /// The error code, e.g. "E0308".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    pub message: String,
    /// Relative to the tool directory, e.g. "src/main.rs".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
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
    /// The built module in the shared target directory.
    pub wasm: PathBuf,
    /// Packages cargo compiled (not fresh) in this run, e.g. ["serde_json", "tool-x"].
    pub compiled: Vec<String>,
    /// cargo's status lines ("Compiling serde_json v1.0.1", "Finished ...").
    pub log: Vec<String>,
    pub warnings: Vec<Diagnostic>,
    pub elapsed: Duration,
}

/// Build the crate in `work` into `target_dir`. Tries `--offline` first (fast, no network,
/// and it reuses the versions already compiled); when that cannot resolve the crates, once more
/// online.
pub async fn build(
    cargo: &Path,
    tool: &str,
    work: &Path,
    target_dir: &Path,
    host: &dyn Host,
    cancel: &CancellationToken,
) -> Result<Report, BuildError> {
    let run = |offline| run(cargo, tool, work, target_dir, offline, host, cancel);
    match run(true).await {
        Err(BuildError::Cargo { output, .. }) if output.contains("offline") => {
            host.log(
                "info",
                "cargo: the crates are not all cached locally; resolving them online",
            );
            run(false).await
        }
        other => other,
    }
}

/// Environment a surrounding cargo (e.g. `cargo test`) sets that must not leak into a tool
/// build: it would redirect the target, change flags or profiles.
fn scrub(cmd: &mut tokio::process::Command) {
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        let drop = [
            "CARGO_TARGET_DIR",
            "CARGO_BUILD_TARGET",
            "CARGO_BUILD_TARGET_DIR",
            "CARGO_BUILD_RUSTFLAGS",
            "CARGO_ENCODED_RUSTFLAGS",
            "RUSTFLAGS",
            "CARGO_MAKEFLAGS",
            "MAKEFLAGS",
            "MFLAGS",
            "CARGO_PRIMARY_PACKAGE",
            "CARGO_MANIFEST_DIR",
            "CARGO_MANIFEST_PATH",
        ]
        .contains(&k.as_ref())
            || [
                "CARGO_PROFILE_",
                "CARGO_PKG_",
                "CARGO_CFG_",
                "CARGO_BIN_",
                "CARGO_CRATE_",
            ]
            .iter()
            .any(|p| k.starts_with(p));
        if drop {
            cmd.env_remove(k.as_ref());
        }
    }
}

async fn run(
    cargo: &Path,
    tool: &str,
    work: &Path,
    target_dir: &Path,
    offline: bool,
    host: &dyn Host,
    cancel: &CancellationToken,
) -> Result<Report, BuildError> {
    let started = Instant::now();
    let mut cmd = tokio::process::Command::new(cargo);
    cmd.args(["build", "--release", "--target", TARGET])
        .args(["--message-format", "json", "--color", "never"])
        .arg("--manifest-path")
        .arg(work.join("Cargo.toml"));
    if offline {
        cmd.arg("--offline");
    }
    scrub(&mut cmd);
    cmd.env("CARGO_TARGET_DIR", target_dir)
        .env("CARGO_TERM_PROGRESS_WHEN", "never")
        .current_dir(work)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // cargo, rustc and the linkers are one tree, killed together on a stop or a drop.
    let mut child = crate::platform::ProcessTree::spawn(cmd).map_err(|e| BuildError::NoCargo {
        command: cargo.display().to_string(),
        message: e.to_string(),
    })?;
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
    let mut stderr_text = String::new();
    let mut errors: Vec<Diagnostic> = Vec::new();
    let mut warnings: Vec<Diagnostic> = Vec::new();
    let mut compiled: Vec<String> = Vec::new();
    let mut wasm: Option<PathBuf> = None;
    let mut steps = 0u32;
    host.progress(
        0.0,
        None,
        Some(format!("cargo build --release --target {TARGET}")),
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
                    output: tail(&stderr_text, 40),
                });
            }
            line = out_lines.next_line(), if out_open => match line {
                Ok(Some(l)) => on_message(&l, &mut errors, &mut warnings, &mut compiled, &mut wasm),
                _ => out_open = false,
            },
            line = err_lines.next_line(), if err_open => match line {
                Ok(Some(l)) => {
                    stderr_text.push_str(&l);
                    stderr_text.push('\n');
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

    let missing_target = errors
        .iter()
        .any(|d| d.rendered.contains("target may not be installed"))
        || stderr_text.contains("target may not be installed");
    if missing_target {
        return Err(BuildError::NoTarget);
    }
    if !status.success() || wasm.is_none() {
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
    let wasm = wasm.ok_or_else(|| BuildError::Internal {
        message: "cargo reported no .wasm file".into(),
    })?;
    Ok(Report {
        wasm,
        compiled,
        log,
        warnings,
        elapsed: started.elapsed(),
    })
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
            let is_bin = v["target"]["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|x| x == "bin"));
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
        message,
        file: primary.and_then(|p| p["file_name"].as_str().map(str::to_string)),
        line: primary.and_then(|p| p["line_start"].as_u64()),
        column: primary.and_then(|p| p["column_start"].as_u64()),
        rendered: m["rendered"].as_str().unwrap_or("").trim_end().to_string(),
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
