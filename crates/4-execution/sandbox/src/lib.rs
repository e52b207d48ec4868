//! Isolation of script processes, failing closed: every script runs inside the strongest
//! mechanism this machine offers, or does not run at all unless a person opted out at start.
//!
//! Mechanisms, strongest first:
//! - **bubblewrap** (`bwrap.rs`): own mount, pid, net, ipc and uts namespaces; only the system
//!   directories, the interpreter, the tool and its scratch are mounted; plus a seccomp filter.
//! - **in-process Linux sandbox** (`linux.rs`) when bwrap is missing or broken: user, mount,
//!   pid, net namespaces where the kernel allows them, Landlock, seccomp, no_new_privs.
//! - **Seatbelt** on macOS (`seatbelt.rs`): `sandbox-exec` with a generated profile.
//!
//! With none available, `choose` refuses and says what is missing and how to fix it; only
//! `--allow-unsandboxed` (or `TOOLSMITH_ALLOW_UNSANDBOXED=1`), set by a person when starting
//! the server or CLI, lets a script run unsandboxed. No manifest field can do that alone.
//! That choice and the other settings (`SandboxConfig`) come from the `Config` built at start,
//! passed to every function here that decides.

#![deny(missing_docs)]

// The crates below, under the names the code map gives them.
use toolsmith_config as config;
use toolsmith_error as error;
use toolsmith_manifest as manifest;
use toolsmith_platform as platform;

#[cfg(unix)]
pub mod bridge;
#[cfg(target_os = "linux")]
mod bwrap;
mod cgroup;
pub mod contained;
pub mod env;
#[cfg(target_os = "linux")]
mod fork;
mod grants;
pub mod interp;
mod limits;
#[cfg(target_os = "linux")]
mod linux;
pub mod net;
pub mod proxy;
pub mod seatbelt;

pub use cgroup::PidsCgroup;
pub use env::Environment;
#[cfg(target_os = "linux")]
pub use fork::fork_servers;
#[cfg(target_os = "linux")]
pub use fork::{ForkSetup, prepare_fork_server};
pub use grants::{Grants, SYSTEM_DIRS, interpreter_prefixes, which};
pub use limits::ChildLimits;
#[cfg(target_os = "linux")]
pub use limits::memfd;
#[cfg(unix)]
pub use limits::{CALL_STDOUT_FD, above_nine};
pub use net::{Endpoint, Net};

pub use crate::config::SandboxConfig;
use crate::error::Hint;
use crate::manifest::{Manifest, SandboxMode};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Check that a declared path lies inside one of the allowed roots (after resolving `..`
/// and symlinks as far as the path exists).
pub fn inside_roots(path: &Path, roots: &[PathBuf]) -> bool {
    let resolved = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    if resolved
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return false;
    }
    roots.iter().any(|r| {
        let r = r.canonicalize().unwrap_or_else(|_| r.clone());
        resolved.starts_with(&r)
    })
}

/// The most tasks (processes and threads) one call may have at once.
pub const MAX_TASKS: u64 = 128;
/// RLIMIT_NPROC for non-root users (it counts every process of the user, so it is generous).
pub const NPROC_LIMIT: u64 = 4096;
/// Size of a call's scratch directory (an in-memory filesystem where the mechanism can mount
/// one); writes past it fail with "No space left on device".
pub const SCRATCH_MB: u64 = 256;
/// Size of the private `/tmp` inside bubblewrap.
pub const TMP_MB: u64 = 64;
/// Size of a call's own `/dev/shm` (POSIX shared memory and semaphores), where the mechanism
/// gives it one: an in-memory filesystem that goes with the call.
pub const SHM_MB: u64 = 64;

/// Why a sandboxed process could not be prepared.
#[derive(Debug, Error)]
pub enum SandboxError {
    /// No mechanism works here (and no person opted out).
    #[error("no sandbox can be applied on this machine, so the script does not run: {missing}")]
    Unavailable {
        /// What is missing.
        missing: String,
        /// The tool says `run.sandbox = "required"` (no opt-out applies).
        required: bool,
    },
    /// A tool.toml asked to run unsandboxed.
    #[error(
        "tool.toml asks to run without a sandbox (run.sandbox = \"none\"), which only the person running toolsmith can allow"
    )]
    NoneRefused,
    /// A declared path outside the allowed roots.
    #[error("declared path {path:?} ({what}) is not inside the allowed roots ({roots})")]
    OutsideRoots {
        /// The path as declared.
        path: String,
        /// Which capability (`read`, `write`).
        what: &'static str,
        /// The allowed roots.
        roots: String,
    },
    /// A tool or entry asked for a variable that steers a loader or an interpreter
    /// (`manifest::env`).
    #[error("{why}")]
    Refused {
        /// The refusal, naming the variable and why.
        why: String,
    },
    /// Setting the sandbox up failed.
    #[error("cannot prepare the sandbox: {0}")]
    Setup(String),
}

impl crate::error::Hint for SandboxError {
    /// What a person can do about it.
    fn hint(&self) -> Option<String> {
        Some({
            let opt_out = "to run scripts with your full rights anyway, knowingly, start toolsmith with `--allow-unsandboxed` (or TOOLSMITH_ALLOW_UNSANDBOXED=1)";
            match self {
                SandboxError::Unavailable { required: true, .. } => format!(
                    "{}; the tool sets run.sandbox = \"required\", so it never runs unsandboxed",
                    install_hint()
                ),
                SandboxError::Unavailable { .. } => format!("{}; a Python or JavaScript tool needs no OS sandbox as a WebAssembly component: register it with `component = true` (or build_tool with `language = \"python\"` or `\"javascript\"`, toolsmith://guide); or, {opt_out}", install_hint()),
                SandboxError::NoneRefused => format!(
                    "remove `sandbox = \"none\"` from the tool's [run] table to run it sandboxed; or, {opt_out}"
                ),
                SandboxError::OutsideRoots { .. } => "declare it under [capabilities] in tool.toml, inside the allowed roots (TOOLSMITH_ROOTS)".into(),
                SandboxError::Refused { .. } => crate::manifest::env::HINT.into(),
                SandboxError::Setup(_) => "this is a bug or an unusual kernel configuration; run with -v to see more".into(),
            }
        })
    }
}

fn install_hint() -> &'static str {
    if cfg!(target_os = "macos") {
        "Seatbelt (/usr/bin/sandbox-exec) ships with macOS; check that it exists and runs"
    } else if cfg!(target_os = "linux") {
        "install bubblewrap (`apt-get install bubblewrap`, `dnf install bubblewrap`, `pacman -S bubblewrap`), or use a kernel with Landlock (5.13+, `lsm=landlock` on the boot command line)"
    } else {
        "no sandbox is implemented for this operating system"
    }
}

/// Which mechanism isolates a script.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mechanism {
    /// bubblewrap (`bwrap`).
    Bubblewrap,
    /// The in-process Linux sandbox: namespaces + Landlock + seccomp.
    Landlock,
    /// macOS's `sandbox-exec`.
    Seatbelt,
    /// No isolation: a person allowed it with `--allow-unsandboxed`.
    Unsandboxed,
}

impl Mechanism {
    /// Its name, as results, logs and `doctor` say it.
    pub fn as_str(self) -> &'static str {
        match self {
            Mechanism::Bubblewrap => "bubblewrap",
            Mechanism::Landlock => "landlock",
            Mechanism::Seatbelt => "seatbelt",
            Mechanism::Unsandboxed => "none",
        }
    }
}

/// Whether each mechanism works here: Ok, or why not (for errors and reports).
pub fn availability(config: &SandboxConfig) -> Vec<(Mechanism, Result<(), String>)> {
    #[allow(unused_mut)]
    let mut out = Vec::new();
    #[cfg(target_os = "linux")]
    {
        out.push((
            Mechanism::Bubblewrap,
            bwrap::status(&config.bwrap).map(|_| ()),
        ));
        let fallback = if config.no_fallback {
            Err("disabled by TOOLSMITH_SANDBOX_NO_FALLBACK (tests only)".to_string())
        } else {
            linux::status().map(|_| ())
        };
        out.push((Mechanism::Landlock, fallback));
    }
    #[cfg(target_os = "macos")]
    out.push((Mechanism::Seatbelt, seatbelt::status()));
    #[cfg(not(target_os = "linux"))]
    let _ = config;
    out
}

/// Whether a pids cgroup can be made here (to contain fork bombs beyond `RLIMIT_NPROC`).
pub fn pids_cgroup_available(config: &SandboxConfig) -> bool {
    cfg!(target_os = "linux") && cgroup::PidsCgroup::new(1, config).is_some()
}

/// The mechanism for a tool with this sandbox mode, or why none may be used.
pub fn choose(mode: SandboxMode, config: &SandboxConfig) -> Result<Mechanism, SandboxError> {
    if mode == SandboxMode::None {
        return if config.allow_unsandboxed {
            Ok(Mechanism::Unsandboxed)
        } else {
            Err(SandboxError::NoneRefused)
        };
    }
    let avail = availability(config);
    if let Some((m, _)) = avail.iter().find(|(_, r)| r.is_ok()) {
        return Ok(*m);
    }
    let missing = if avail.is_empty() {
        format!("no sandbox is implemented for {}", std::env::consts::OS)
    } else {
        avail
            .iter()
            .filter_map(|(m, r)| r.as_ref().err().map(|why| format!("{}: {why}", m.as_str())))
            .collect::<Vec<_>>()
            .join("; ")
    };
    if mode == SandboxMode::Auto && config.allow_unsandboxed {
        static WARNED: std::sync::OnceLock<()> = std::sync::OnceLock::new();
        WARNED.get_or_init(|| {
            tracing::warn!(
                "scripts run WITHOUT a sandbox (allowed by the person at start): {missing}"
            );
        });
        return Ok(Mechanism::Unsandboxed);
    }
    Err(SandboxError::Unavailable {
        missing,
        required: mode == SandboxMode::Required,
    })
}

/// What one script process may touch.
pub struct Spec<'a> {
    /// What the tool's `run.sandbox` asks.
    pub mode: SandboxMode,
    /// Where it may connect.
    pub network: Net,
    /// The working directory, writable.
    pub scratch: &'a Path,
    /// Directories the script must be able to read (its tool directory, its dependency
    /// environment).
    pub visible: Vec<PathBuf>,
    /// Declared `capabilities.read` / `capabilities.write` (relative paths are taken from the
    /// first allowed root).
    pub read: &'a [String],
    /// Declared `capabilities.write`.
    pub write: &'a [String],
    /// The allowed roots (`TOOLSMITH_ROOTS`).
    pub roots: &'a [PathBuf],
    /// The sandbox settings of this process.
    pub config: &'a SandboxConfig,
}

/// A command line ready to spawn inside its sandbox: the program and arguments (possibly
/// wrapped), and what must be set up in the child between fork and exec.
pub struct Prepared {
    /// The mechanism applied.
    pub mechanism: Mechanism,
    /// The command line to spawn.
    pub argv: Vec<String>,
    /// Where the sandboxed program's own command line starts in `argv` (after a wrapper's).
    program_at: usize,
    /// What the process may touch.
    pub grants: Grants,
    /// In-child set-up (namespaces, Landlock, seccomp), built before the fork.
    #[cfg_attr(not(unix), allow(dead_code))]
    pub child: limits::InChild,
}

/// Prepare `argv` (interpreter, its arguments, the entry) for the spec.
pub fn prepare(mut argv: Vec<String>, spec: &Spec<'_>) -> Result<Prepared, SandboxError> {
    let mechanism = choose(spec.mode, spec.config)?;
    if let Some(real) = argv.first().and_then(|a| crate::interp::resolve(a)) {
        argv[0] = real.to_string_lossy().into_owned();
    }
    let argv0 = argv.first().cloned().unwrap_or_default();
    let grants = Grants::new(spec, &argv0)?;
    wrap(mechanism, argv, grants, spec.config, false)
}

/// What one build or install process may touch (`build.rs`, and the dependency installs):
/// the system directories, the tool chain and package caches (read-only), the build's own
/// work and output directories (writable), its scratch (HOME, TMPDIR), and the network as
/// given (none, or the registries through the filtering proxy).
pub struct BuildSpec<'a> {
    /// Where it may connect.
    pub network: Net,
    /// HOME and TMPDIR: an in-memory filesystem where the mechanism can mount one.
    pub scratch: &'a Path,
    /// The working directory (one of `read` or `write`).
    pub cwd: &'a Path,
    /// The tool chain and caches, read-only.
    pub read: Vec<PathBuf>,
    /// The build's own directories, writable.
    pub write: Vec<PathBuf>,
    /// The sandbox settings.
    pub config: &'a SandboxConfig,
}

/// Prepare a tool chain's command line (cargo, pip, npm) for a build spec. The mechanism is
/// chosen as for a script whose tool.toml says nothing (`auto`): refused without one unless
/// the person passed `--allow-unsandboxed`.
pub fn prepare_build(argv: Vec<String>, spec: &BuildSpec<'_>) -> Result<Prepared, SandboxError> {
    let mechanism = choose(SandboxMode::Auto, spec.config)?;
    let grants = Grants::for_build(spec)?;
    wrap(mechanism, argv, grants, spec.config, false)
}

/// Wrap `argv` for a mechanism and its grants (`fork_server`: the set-up of a fork server,
/// see `fork.rs`).
fn wrap(
    mechanism: Mechanism,
    argv: Vec<String>,
    grants: Grants,
    config: &SandboxConfig,
    fork_server: bool,
) -> Result<Prepared, SandboxError> {
    #[allow(unused_mut)] // set only by the Linux mechanisms
    let mut child = limits::InChild::default();
    let program_len = argv.len();
    // In its own network namespace, a process reaches the proxy through the bridge, which
    // starts the program and stays in front of it (kept by `with_program`).
    let argv = match &grants.network {
        Net::Proxy(Endpoint::Unix { socket, .. }) if mechanism != Mechanism::Unsandboxed => {
            let exe = net::bridge_program().map_err(SandboxError::Setup)?;
            let mut a = vec![
                exe.to_string_lossy().into_owned(),
                "__net-bridge".into(),
                socket.to_string_lossy().into_owned(),
            ];
            if mechanism == Mechanism::Landlock {
                a.push("--no-unix".into());
            }
            a.push("--".into());
            a.extend(argv);
            a
        }
        _ => argv,
    };
    let argv = match mechanism {
        Mechanism::Unsandboxed => argv,
        #[cfg(target_os = "linux")]
        Mechanism::Bubblewrap => {
            let (wrapped, seccomp_fds) = bwrap::wrap(argv, &grants, &config.bwrap, fork_server)?;
            child.inherit_fds.extend(seccomp_fds);
            wrapped
        }
        #[cfg(target_os = "linux")]
        Mechanism::Landlock => {
            child.linux = Some(if fork_server {
                linux::InChild::fork_server(&grants)?
            } else {
                linux::InChild::new(&grants)?
            });
            argv
        }
        #[cfg(target_os = "macos")]
        Mechanism::Seatbelt => {
            let profile = seatbelt::profile(&seatbelt::resolved(&grants));
            let mut a = vec![
                seatbelt::SANDBOX_EXEC.to_string(),
                "-p".into(),
                profile,
                "--".into(),
            ];
            a.extend(argv);
            a
        }
        #[allow(unreachable_patterns)]
        other => {
            return Err(SandboxError::Setup(format!(
                "{} is not built for this operating system",
                other.as_str()
            )));
        }
    };
    let _ = (config, fork_server);
    Ok(Prepared {
        mechanism,
        program_at: argv.len() - program_len,
        argv,
        grants,
        child,
    })
}

impl Prepared {
    /// Run another program in the same sandbox (a spare's stub instead of the interpreter on
    /// the entry): the grants stay those prepared for the original command line.
    pub fn with_program(mut self, program: Vec<String>) -> Prepared {
        self.argv.truncate(self.program_at);
        self.argv.extend(program);
        self
    }
}

/// The sandbox a script tool gets here, for `register_script`, `get_tool` and the guide:
/// the mechanism and what it grants, or why the tool would be refused.
pub fn describe(m: &Manifest, config: &SandboxConfig) -> Value {
    let c = &m.capabilities;
    match choose(m.sandbox(), config) {
        Ok(mech) => {
            let mut v = json!({
                "mechanism": mech.as_str(),
                "network": c.network,
                "reads": ["system directories", "the interpreter", "the tool's own directory and dependencies (read-only)"],
                "writes": [format!("a scratch directory, removed after the call (at most {SCRATCH_MB} MiB)")],
                "declared_read": c.read,
                "declared_write": c.write,
                "env": c.env,
                "denied": denied(mech, &c.network),
                "max_tasks": MAX_TASKS,
                "layers": layers(mech),
            });
            if mech == Mechanism::Unsandboxed {
                v["warning"] = json!(
                    "runs with the full rights of the user running toolsmith (allowed by --allow-unsandboxed)"
                );
            }
            v
        }
        Err(e) => json!({"mechanism": "refused", "error": e.to_string(), "hint": e.hint()}),
    }
}

/// How making a tool is contained here (`toolsmith doctor`, `get_tool`, `build_tool`): the
/// mechanism cargo, pip and npm run under, what they see and reach, or why builds and
/// installs are refused.
pub fn describe_builds(config: &SandboxConfig) -> Value {
    match choose(SandboxMode::Auto, config) {
        Ok(Mechanism::Unsandboxed) => json!({
            "mechanism": "none",
            "warning": "cargo (build scripts, proc macros, linkers), pip and npm run with the full rights of the user running toolsmith (allowed by --allow-unsandboxed)",
        }),
        Ok(mech) => json!({
            "mechanism": mech.as_str(),
            "runs_contained": ["cargo (build scripts, proc macros, linkers)", "pip (wheels only: no package code runs at install)", "npm (install scripts offline, after a fetch without them)", "the examples"],
            "reads": ["system directories", "the tool chain (the Rust toolchain's sysroot, the interpreter)", "package caches (the cargo registry, the wheel directory, npm's cache)"],
            "writes": ["the build's own work and output directories", "a scratch HOME, removed after each step"],
            "network": "fetch steps only, only to the package registries (crates.io, PyPI, the npm registry, or registries the person configured), through toolsmith's filtering proxy; compiling and install scripts run offline",
            "denied": ["the home directory", "the toolbox and its .git", "other tools' builds", "the personal directory", "the server's environment"],
            "layers": layers(mech),
        }),
        Err(e) => {
            json!({"mechanism": "refused", "error": e.to_string().replace("the script does not run", "builds and dependency installs do not run"), "hint": e.hint()})
        }
    }
}

/// The layers a mechanism applies on this machine, for reports.
fn layers(mech: Mechanism) -> Vec<String> {
    match mech {
        Mechanism::Bubblewrap => vec![
            "namespaces: user, mount, pid, net (unless granted), ipc, uts, cgroup".into(),
            "minimal read-only root".into(),
            "seccomp".into(),
            "no capabilities".into(),
        ],
        #[cfg(target_os = "linux")]
        Mechanism::Landlock => match linux::status() {
            Ok(s) => {
                let mut l = Vec::new();
                if s.ns_flags != 0 {
                    l.push("namespaces: user, mount, net (unless granted), ipc, uts".to_string());
                } else {
                    l.push("no namespaces (the kernel refuses them): scratch is on disk, each file capped".into());
                }
                if s.pidns {
                    l.push("pid namespace (everything the call started dies with it)".into());
                }
                l.push(format!("landlock ABI {}", s.landlock_abi));
                l.extend(["seccomp", "no_new_privs", "no capabilities"].map(String::from));
                l
            }
            Err(e) => vec![e],
        },
        Mechanism::Seatbelt => vec!["seatbelt profile (deny by default)".into()],
        _ => Vec::new(),
    }
}

/// What a mechanism keeps from a script, for reports.
fn denied(mech: Mechanism, network: &crate::manifest::Network) -> Value {
    if mech == Mechanism::Unsandboxed {
        return json!([]);
    }
    let mut d: Vec<String> = [
        "the home directory",
        "other tools, the toolbox's .git and .toolsmith",
        "writes to its own files",
        "the compiled-code cache",
        "other processes",
    ]
    .map(String::from)
    .to_vec();
    if let Some(domains) = network.domains() {
        d.push(format!(
            "every host but {} (reached through toolsmith's filtering proxy, HTTP_PROXY)",
            domains.join(", ")
        ));
    } else if !network.is_any() {
        d.push("the network".into());
    }
    json!(d)
}

/// Say on stderr, when a server starts, how its scripts will be isolated (a warning when they
/// will be refused or run unsandboxed, so the person sees it where they started toolsmith).
pub fn log_status(config: &SandboxConfig) {
    match choose(SandboxMode::Auto, config) {
        Ok(Mechanism::Unsandboxed) => tracing::warn!(
            "script tools run WITHOUT a sandbox, with your full rights (--allow-unsandboxed)"
        ),
        Ok(m) => tracing::info!("script tools run under {}", m.as_str()),
        Err(e) => tracing::warn!(
            "script tools will be refused: {e}\nhint: {}",
            e.hint().unwrap_or_default()
        ),
    }
}

/// One line for the guide: which mechanism applies to script tools on this machine.
pub fn guide_line(config: &SandboxConfig) -> String {
    match choose(SandboxMode::Auto, config) {
        Ok(Mechanism::Unsandboxed) => "- **Sandbox here**: NONE. A person started toolsmith with `--allow-unsandboxed`: scripts run with their full rights.".into(),
        Ok(m) => format!(
            "- **Sandbox here**: script tools and `execute_code` run under {} (no network unless `capabilities.network`, writes only to a scratch directory and declared paths, no home directory, no other tools); WASM tools see nothing undeclared.",
            m.as_str()
        ),
        Err(e) => format!(
            "- **Sandbox here**: none available, so script tools and `execute_code` are refused: {e} (hint: {})",
            e.hint().unwrap_or_default()
        ),
    }
}

/// The isolation of any stored tool, for `get_tool`: scripts as in `describe`, WASM tools by
/// what WASI grants them, pipelines by their steps.
pub fn describe_tool(m: &Manifest, config: &SandboxConfig) -> Value {
    use crate::manifest::Kind;
    match m.kind {
        Kind::Script => describe(m, config),
        Kind::Mcp if m.mcp.as_ref().is_none_or(|s| s.url.is_none()) => describe(m, config),
        Kind::Mcp => json!({
            "mechanism": "remote",
            "network": m.mcp.as_ref().and_then(|s| s.url_host()),
            "note": "a remote MCP server, reached over HTTPS by toolsmith itself; only its host",
        }),
        Kind::Wasm => json!({
            "mechanism": "wasm",
            "network": m.capabilities.network,
            "declared_read": m.capabilities.read,
            "declared_write": m.capabilities.write,
            "env": m.capabilities.env,
            "denied": ["every file, variable and socket not declared above"],
        }),
        Kind::Pipeline => {
            json!({"mechanism": "steps", "note": "each step runs in its own tool's sandbox"})
        }
    }
}

/// A note for a failed script's stderr when the sandbox's limits explain it ("" otherwise).
pub fn explain(stderr: &str) -> String {
    if stderr.contains("No space left on device") {
        format!(
            "\n(the sandbox limits a call's scratch directory to {SCRATCH_MB} MiB and /tmp to {TMP_MB} MiB; write less, or stream the data to stdout)"
        )
    } else {
        String::new()
    }
}
