//! `toolsmith doctor`: what works on this machine, one line per check, each with a hint when
//! something is missing. It only reads: no toolbox is created, nothing is written.

mod telemetry;
mod toolchains;

use super::output;
use crate::build::componentize::Language;
use crate::config::{Config, SandboxConfig};
use crate::error::Hint;
use crate::sandbox;
use crate::toolbox::Toolbox;
use anyhow::Result;
use serde::Serialize;
use std::path::Path;
use toolchains::{builds_check, componentize, interpreters, rust_target};

/// Below this much free space in the cache, builds and environments may fail.
const LOW_DISK: u64 = 2 << 30;

#[derive(Debug, Serialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Status {
    Ok,
    Warn,
    Fail,
}

#[derive(Debug, Serialize)]
struct Check {
    check: String,
    status: Status,
    detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
}

fn check(name: &str, status: Status, detail: impl Into<String>, hint: Option<String>) -> Check {
    Check {
        check: name.into(),
        status,
        detail: detail.into(),
        hint,
    }
}

/// Run every check and print them. Exit code 1 when a check failed.
pub(super) fn run(
    explicit: Option<&Path>,
    location: &Path,
    config: &Config,
    as_json: bool,
) -> Result<i32> {
    let mut checks = Vec::new();
    toolbox_checks(explicit.unwrap_or(location), &mut checks);
    checks.extend(interpreters());
    checks.push(rust_target(
        &config.cargo,
        "rust/wasm",
        crate::build::TARGET,
        "Rust tools",
    ));
    checks.push(rust_target(
        &config.cargo,
        "rust/component",
        crate::build::COMPONENT_TARGET,
        "Rust component tools",
    ));
    for language in Language::ALL {
        checks.push(componentize(
            language,
            &language.configured(config),
            &config.sandbox,
        ));
    }
    checks.extend(sandbox_checks(&config.sandbox));
    checks.push(builds_check(&config.sandbox));
    checks.push(spares_check(config));
    checks.push(wasm_memory_check(config));
    checks.push(disk(&config.cache_dir));
    checks.push(search(config));
    checks.push(telemetry::telemetry(config));
    checks.extend(approval_checks(&config.data_dir));
    checks.push(references_check(
        &config.data_dir,
        explicit.unwrap_or(location),
    ));

    if as_json {
        output::json(&serde_json::to_value(&checks)?);
    } else {
        for c in &checks {
            let mark = match c.status {
                Status::Ok => "ok  ",
                Status::Warn => "warn",
                Status::Fail => "FAIL",
            };
            println!("{mark}  {:<12} {}", c.check, c.detail);
            if let Some(h) = &c.hint {
                println!("      {:<12} hint: {h}", "");
            }
        }
    }
    Ok(i32::from(checks.iter().any(|c| c.status == Status::Fail)))
}

/// Who approves (the personal setting `[approvals] elicitation`) and whether a console runs.
fn approval_checks(personal: &Path) -> Vec<Check> {
    let path = crate::personal::settings_path(personal);
    let approvals = match crate::personal::Settings::load(personal) {
        Ok(s) if s.approvals.elicitation.is_empty() => check(
            "approvals",
            Status::Ok,
            "only you approve, outside the MCP client (`toolsmith console`, `toolsmith approve`); elicitation only tells you what waits",
            Some(format!(
                "to let an answer in the MCP client approve some kinds of grant, set [approvals] elicitation = [\"env\", ...] in {} (kinds: {}); the AI drives that client",
                path.display(),
                crate::personal::ELICITATION_KINDS.join(", ")
            )),
        ),
        Ok(s) => check(
            "approvals",
            Status::Warn,
            format!(
                "an answer in the MCP client approves {} ([approvals] elicitation in {})",
                s.approvals.elicitation.join(", "),
                path.display()
            ),
            Some("an auto-accepting client or agent loop then grants these itself; remove the setting to approve only in `toolsmith console` or with `toolsmith approve`".into()),
        ),
        Err(e) => check(
            "approvals",
            Status::Warn,
            format!("{e}; elicitation approves nothing"),
            Some(format!("fix or remove {}", path.display())),
        ),
    };
    let console = match crate::personal::console_address(personal) {
        Some(url) => check("console", Status::Ok, format!("running at {url}"), None),
        None => check(
            "console",
            Status::Ok,
            "not running",
            Some("`toolsmith console` opens your page for approvals, held tools, secrets, the audit log and history (127.0.0.1 only, a one-time login link)".into()),
        ),
    };
    vec![approvals, console]
}

/// The direct references a person allowed here (and those refused, waiting).
fn references_check(personal: &Path, toolbox: &Path) -> Check {
    let store = crate::deps::Allowances::new(personal, toolbox);
    match store.list() {
        Ok((allowed, waiting)) if allowed.is_empty() && waiting.is_empty() => check(
            "references",
            Status::Ok,
            "no direct reference (local path, URL) is allowed: tools install registry packages only",
            Some("`toolsmith allow TOOL pip|npm SPEC` allows one tool one local package or archive URL, pinned to its content".into()),
        ),
        Ok((allowed, waiting)) => {
            let mut lines: Vec<String> = allowed
                .iter()
                .map(|a| {
                    format!(
                        "{}: {} {} ({}, {} via {})",
                        a.tool,
                        a.ecosystem,
                        a.spec,
                        a.digest.as_deref().unwrap_or("pinned at its first fetch"),
                        crate::personal::rfc3339(a.at),
                        a.via
                    )
                })
                .collect();
            if lines.is_empty() {
                lines.push("none allowed".into());
            }
            check(
                "references",
                Status::Ok,
                format!(
                    "direct references allowed here: {}{}",
                    lines.join("; "),
                    if waiting.is_empty() {
                        String::new()
                    } else {
                        format!("; {} refused, waiting (`toolsmith pending`)", waiting.len())
                    }
                ),
                Some("`toolsmith disallow TOOL pip|npm SPEC` takes one back".into()),
            )
        }
        Err(e) => check(
            "references",
            Status::Warn,
            format!("the allowances of direct references cannot be read: {e}"),
            Some(format!("fix or remove {}", store.path().display())),
        ),
    }
}

fn toolbox_checks(dir: &Path, out: &mut Vec<Check>) {
    if !dir.join(".git").exists() {
        out.push(check(
            "toolbox",
            Status::Warn,
            format!("none yet at {}", dir.display()),
            Some("`toolsmith serve` or `toolsmith init` creates it".into()),
        ));
        return;
    }
    let tb = match Toolbox::open(dir) {
        Ok(tb) => tb,
        Err(e) => {
            out.push(check(
                "toolbox",
                Status::Fail,
                format!("{} cannot be opened: {e}", dir.display()),
                e.hint(),
            ));
            return;
        }
    };
    let idx = crate::index::Index::build(tb.root());
    let (tools, broken) = (idx.tools().count(), idx.broken().count());
    out.push(check(
        "toolbox",
        if broken > 0 { Status::Warn } else { Status::Ok },
        format!(
            "{} ({tools} tools{})",
            dir.display(),
            if broken > 0 {
                format!(", {broken} broken")
            } else {
                String::new()
            }
        ),
        (broken > 0).then(|| "`toolsmith lint` points at each problem".into()),
    ));
    match crate::git::check_write_state(tb.root()) {
        Ok(()) => out.push(check("git state", Status::Ok, "writable", None)),
        Err(e) => out.push(check(
            "git state",
            Status::Fail,
            format!("writes are refused: {e}"),
            Some(
                "finish or abort what git is doing in the toolbox (`git status` says what)".into(),
            ),
        )),
    }
    let (sig, fallback) = tb.identity();
    out.push(if fallback {
        check(
            "git identity",
            Status::Warn,
            "none configured: commits are made as toolsmith <toolsmith@localhost>",
            Some("git config --global user.name \"Your Name\" && git config --global user.email you@example.com".into()),
        )
    } else {
        check(
            "git identity",
            Status::Ok,
            format!("{} <{}>", sig.name, sig.email),
            None,
        )
    });
}

/// What a server keeps ready for script calls, and within which bounds.
fn spares_check(config: &Config) -> Check {
    let mib = config.spare_memory_mb;
    let bounds = format!(
        "at most {} waiting processes and {mib} MiB in all (TOOLSMITH_MAX_SPARES, TOOLSMITH_SPARE_MEMORY)",
        config.max_spares
    );
    if config.spares == 0 {
        return check(
            "spares",
            Status::Ok,
            "off (TOOLSMITH_SPARES=0): every script call starts its process",
            None,
        );
    }
    #[cfg(target_os = "linux")]
    let forks = if !config.fork_servers {
        "off (TOOLSMITH_FORK_SERVERS=0)".to_string()
    } else {
        match sandbox::fork_servers(&config.sandbox) {
            Ok(m) => format!("a fork server per tool ({})", m.as_str()),
            Err(why) => format!("spares ({why})"),
        }
    };
    #[cfg(not(target_os = "linux"))]
    let forks = "spares (fork servers are Linux-only)".to_string();
    check(
        "spares",
        Status::Ok,
        format!(
            "in a server: {} per script tool (up to 4 while its calls come fast), Python tools: {forks}; {bounds}",
            config.spares
        ),
        Some(format!(
            "a laptop's share is the default ({} MiB); give more or less with TOOLSMITH_SPARE_MEMORY=MiB",
            crate::config::DEFAULT_SPARE_MEMORY_MB
        )),
    )
}

/// How much memory a server's loaded WASM tools may hold.
fn wasm_memory_check(config: &Config) -> Check {
    check(
        "wasm memory",
        Status::Ok,
        format!(
            "loaded WASM tools hold at most {} MiB in a server (TOOLSMITH_WASM_MEMORY); past it, the ones used least recently are unloaded and loaded again at their next call",
            config.wasm_memory_mb
        ),
        Some(format!(
            "a laptop's share is the default ({} MiB, about four Python components); give more or less with TOOLSMITH_WASM_MEMORY=MiB",
            crate::config::DEFAULT_WASM_MEMORY_MB
        )),
    )
}

fn sandbox_checks(config: &SandboxConfig) -> Vec<Check> {
    let mut out = Vec::new();
    let avail = sandbox::availability(config);
    let chosen = avail.iter().find(|(_, r)| r.is_ok()).map(|(m, _)| *m);
    for (m, r) in &avail {
        out.push(match r {
            Ok(()) => check(
                "sandbox",
                Status::Ok,
                format!(
                    "{}{}",
                    m.as_str(),
                    if Some(*m) == chosen {
                        " (used)"
                    } else {
                        " (available)"
                    }
                ),
                None,
            ),
            Err(why) => check(
                "sandbox",
                Status::Warn,
                format!("{} unavailable: {why}", m.as_str()),
                None,
            ),
        });
    }
    if chosen.is_none() {
        let platform = if cfg!(target_os = "linux") {
            "on this Linux machine"
        } else if cfg!(target_os = "macos") {
            "on this Mac"
        } else {
            "on this platform (bubblewrap, Landlock and Seatbelt do not exist here)"
        };
        let hint = if cfg!(target_os = "linux") {
            "apt-get install bubblewrap (and allow unprivileged user namespaces), or boot with Landlock enabled (lsm=landlock); or knowingly opt out with --allow-unsandboxed"
        } else {
            "script tools are refused; knowingly opt out with --allow-unsandboxed (WASM tools run sandboxed everywhere)"
        };
        out.push(check(
            "sandbox",
            if config.allow_unsandboxed {
                Status::Warn
            } else {
                Status::Fail
            },
            format!(
                "no sandbox mechanism {platform}: script tools {}",
                if config.allow_unsandboxed {
                    "run UNSANDBOXED (--allow-unsandboxed is set)"
                } else {
                    "are refused"
                }
            ),
            Some(hint.into()),
        ));
    }
    if cfg!(target_os = "linux") {
        out.push(if sandbox::pids_cgroup_available(config) {
            check("cgroup", Status::Ok, "pids cgroup: a script's processes are counted and killed as one", None)
        } else {
            check(
                "cgroup",
                Status::Warn,
                "no writable pids cgroup: process counts are limited by RLIMIT_NPROC only",
                Some("run toolsmith in a cgroup it may write (e.g. `systemd-run --user --scope -p Delegate=yes toolsmith serve`)".into()),
            )
        });
    }
    out
}

/// The search ranking and its source of embeddings (`TOOLSMITH_EMBEDDINGS`), loaded and tried
/// once (an endpoint gets one request).
fn search(config: &Config) -> Check {
    let semantic = crate::search::Semantic::new(config.embeddings.clone(), &config.data_dir, None);
    match (semantic.check(), &config.embeddings) {
        (Ok(detail), crate::config::Embeddings::None) => check(
            "search",
            Status::Warn,
            detail,
            Some("unset TOOLSMITH_EMBEDDINGS for the built-in embeddings: queries in other words than a tool's description then find it".into()),
        ),
        (Ok(detail), _) => check("search", Status::Ok, detail, None),
        (Err(e), _) => {
            let (message, hint) = match e.split_once("\nhint: ") {
                Some((m, h)) => (m.to_string(), Some(h.to_string())),
                None => (e, None),
            };
            check("search", Status::Warn, message, hint)
        }
    }
}

fn disk(cache: &Path) -> Check {
    // The cache may not exist yet: measure the nearest existing ancestor.
    let probe = cache
        .ancestors()
        .find(|p| p.exists())
        .unwrap_or(Path::new("."));
    match fs4::available_space(probe) {
        Ok(free) if free < LOW_DISK => check(
            "disk",
            Status::Warn,
            format!("{} free for the cache at {}", human(free), cache.display()),
            Some("free some space, or point TOOLSMITH_CACHE at a larger disk".into()),
        ),
        Ok(free) => check(
            "disk",
            Status::Ok,
            format!("{} free for the cache at {}", human(free), cache.display()),
            None,
        ),
        Err(e) => check(
            "disk",
            Status::Warn,
            format!("cannot tell the free space at {}: {e}", cache.display()),
            None,
        ),
    }
}

fn human(bytes: u64) -> String {
    let gib = bytes as f64 / f64::from(1u32 << 30);
    if gib >= 1.0 {
        format!("{gib:.1} GiB")
    } else {
        format!("{:.0} MiB", bytes as f64 / f64::from(1u32 << 20))
    }
}
