//! Starting a script process: the `Recipe` of a tool (interpreter resolved once, cleared
//! environment, sandbox spec, limits — everything that decides how its process is set up) and
//! `spawn`, which makes a process from it: scratch directory, pids cgroup, sandbox, limits.
//!
//! A recipe's `key` names its process set-up: two calls with the same key may use each other's
//! spares (see `spare.rs`); anything that could make the process differ is part of it.

use super::stubs::Stub;
use super::{RunError, sandbox};
use crate::config::{Config, SandboxConfig};
use crate::deps;
use crate::error::Hint;
use crate::manifest::SandboxMode;
use crate::platform::ProcessTree;
use std::ffi::OsString;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// Environment variables every script gets (besides declared ones).
const BASE_ENV: &[&str] = &["PATH", "LANG", "LC_ALL", "TZ"];

/// What starts a recipe's process, for its variables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Starts {
    /// A script's call.
    Script,
    /// A warm worker (`worker = true`).
    Worker,
    /// An MCP entry's server.
    Server,
}

/// A recipe's variables: what the tool or entry asked for (checked again as the process
/// starts, `sandbox::Environment::build`) and toolsmith's own values.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct Vars {
    /// The base set and `capabilities.env` passed through from toolsmith's environment, then
    /// `[mcp] env` (a later value replaces an earlier one).
    pub asked: Vec<(String, OsString)>,
    /// toolsmith's own, which win: the tool's name and directory, the interpreters' settings.
    pub own: Vec<(String, OsString)>,
}

impl Vars {
    /// The variables of a tool or entry `m` living in `dir` with its dependency environment
    /// `deps` — for scripts, workers and servers alike. Err: it asks for a variable
    /// `manifest::env` refuses (said with why and the hint), so nothing starts.
    pub fn of(
        m: &crate::manifest::Manifest,
        dir: &Path,
        deps: &deps::Env,
        is_node: bool,
        kind: Starts,
    ) -> Result<Vars, RunError> {
        let passed = |var: &str| std::env::var_os(var).map(|v| (var.to_string(), v));
        let mut asked: Vec<(String, OsString)> = (BASE_ENV.iter().copied())
            .chain(m.capabilities.env.iter().map(String::as_str))
            .filter_map(passed)
            .collect();
        if let Some(server) = m.mcp.as_ref().filter(|_| kind == Starts::Server) {
            asked.extend(server.env.iter().map(|(k, v)| (k.clone(), v.into())));
        }
        let refused = m
            .capabilities
            .env
            .iter()
            .chain(m.secrets.keys())
            .chain(asked.iter().map(|(k, _)| k))
            .find_map(|k| crate::manifest::env::refusal(k));
        if let Some(why) = refused {
            return Err(RunError::Sandbox {
                tool: m.name.clone(),
                message: why,
                hint: crate::manifest::env::HINT.into(),
            });
        }
        let mut own: Vec<(String, OsString)> =
            vec![("TOOLSMITH_TOOL".into(), m.name.clone().into())];
        own.push(("TOOLSMITH_TOOL_DIR".into(), dir.into()));
        own.push(("PYTHONDONTWRITEBYTECODE".into(), "1".into()));
        if kind == Starts::Server {
            own.push(("PYTHONUNBUFFERED".into(), "1".into()));
        }
        if let Some(nm) = &deps.node_modules {
            own.push(("NODE_PATH".into(), nm.into()));
        }
        if is_node {
            own.push((
                "NODE_OPTIONS".into(),
                format!("--max-old-space-size={}", m.limits.memory_mb()).into(),
            ));
        }
        if kind == Starts::Worker {
            own.push(("TOOLSMITH_WORKER".into(), "1".into()));
        }
        Ok(Vars { asked, own })
    }
}

/// The toolbox root of a tool directory `<root>/tools/<name>` (also for a hidden staging
/// directory beside it); None for a directory outside a toolbox (e.g. execute_code's scratch).
pub fn toolbox_root(dir: &Path) -> Option<PathBuf> {
    let tools = dir.parent()?;
    (tools.file_name()? == crate::index::TOOLS_DIR)
        .then(|| tools.parent().map(Path::to_path_buf))?
}

/// Where dependency environments and memory live for a tool directory (outside a toolbox:
/// the cache directory).
pub(crate) fn state_root(dir: &Path, config: &Config) -> PathBuf {
    toolbox_root(dir).unwrap_or_else(|| config.cache_dir.clone())
}

/// The dependency environment of the tool at `dir` for a call (installed from its lockfiles
/// when missing, through the reference allowances of its toolbox), or why not, said for the
/// person: "its `what` could not be installed: …" with the hint.
pub(crate) async fn dependencies(
    dir: &Path,
    m: &crate::manifest::Manifest,
    config: &Config,
    what: &str,
) -> Result<deps::Env, String> {
    let root = state_root(dir, config);
    let allowed = deps::Allowances::new(&config.data_dir, &root);
    let ctx = deps::Ctx {
        sandbox: &config.sandbox,
        cache: &config.cache_dir,
        allowed: &allowed,
    };
    deps::ensure(ctx, &root, m, dir).await.map_err(|e| {
        format!(
            "its {what} could not be installed: {e}{}",
            e.hint().map(|h| format!("\nhint: {h}")).unwrap_or_default()
        )
    })
}

/// A started script process with what must outlive it: its scratch directory and cgroup.
/// Dropping it kills the whole process tree (group or job; and the cgroup's processes).
pub(crate) struct Launched {
    /// The process and everything it starts (`platform::ProcessTree`).
    pub child: ProcessTree,
    pub pid: Option<u32>,
    #[allow(dead_code)] // kept alive (and removed on drop) as long as the process runs
    pub scratch: tempfile::TempDir,
    pub cgroup: Option<sandbox::PidsCgroup>,
    /// The filtering proxy of a tool limited to listed domains (stopped on drop).
    #[allow(dead_code)] // kept alive as long as the process runs
    pub proxy: Option<crate::sandbox::proxy::Proxy>,
    /// A spare's stdout for the call (its own pipe, see `stubs.rs`); the process's stdout is
    /// then the stub's channel. None: the process's stdout is the tool's.
    pub out: Option<CallStdout>,
}

impl Drop for Launched {
    fn drop(&mut self) {
        // Also when the leader was waited for: what it left in its group or job goes too.
        self.child.kill();
    }
}

/// The reading end of a spare's stdout for its call.
pub(crate) type CallStdout = Box<dyn tokio::io::AsyncRead + Send + Unpin>;

/// A pipe for a spare's stdout: the reading end (registered with the IO reactor) and the
/// writing end for the child (placed at `CALL_STDOUT_FD` there).
#[cfg(unix)]
fn call_stdout() -> std::io::Result<(CallStdout, std::os::fd::OwnedFd)> {
    use std::os::fd::OwnedFd;
    let (reader, writer) = std::io::pipe()?;
    let writer = sandbox::above_nine(OwnedFd::from(writer))?;
    let reader = tokio::net::unix::pipe::Receiver::from_owned_fd(OwnedFd::from(reader))?;
    Ok((Box::new(reader), writer))
}

/// How a tool's process is set up: everything but the per-process scratch directory.
#[derive(Debug, Clone)]
pub(crate) struct Recipe {
    pub name: String,
    /// The interpreter (program resolved through shims) and its flags.
    pub interp: Vec<String>,
    pub entry: PathBuf,
    /// Arguments after the entry (an MCP server's `[mcp] args`; none for a script).
    pub args: Vec<String>,
    /// The program's variables (HOME and TMPDIR are added: the scratch directory).
    pub env: Vars,
    /// Secrets a person approved for this tool (decided by `approval::admit`); kept apart from
    /// `env` so that no `Debug` of a recipe shows a value.
    pub secrets: crate::secrets::SecretEnv,
    pub mode: SandboxMode,
    pub network: crate::manifest::Network,
    pub visible: Vec<PathBuf>,
    pub read: Vec<String>,
    pub write: Vec<String>,
    pub roots: Vec<PathBuf>,
    /// The sandbox settings of this process (not part of the key: they do not change).
    pub sandbox: SandboxConfig,
    pub memory_mb: u64,
    pub is_node: bool,
    /// How a spare of this recipe waits for its call; None: only direct starts.
    pub stub: Option<Stub>,
    /// The tool directory and the identity a person's approval was checked against
    /// (`Tool::admitted`): the process must see that very directory (`Pool::acquire`).
    pub admitted: Option<(PathBuf, crate::platform::DirId)>,
}

impl Recipe {
    /// Whether the tool's directory is still the one the approval was checked against (true
    /// for a call without grants beyond the defaults).
    pub fn still_admitted(&self) -> bool {
        self.admitted
            .as_ref()
            .is_none_or(|(dir, id)| crate::platform::dir_id(dir).as_ref() == Some(id))
    }
}

impl Recipe {
    /// The recipe of `tool` living in `dir`: interpreter (the tool's venv python when it has
    /// pip dependencies), its dependencies installed, environment, sandbox spec, limits.
    pub async fn new(
        dir: &Path,
        tool: &super::Granted,
        worker: bool,
        config: &Config,
    ) -> Result<Recipe, RunError> {
        let m = &tool.manifest;
        let name = m.name.clone();
        let start_err = |message: String| RunError::Start {
            tool: name.clone(),
            message,
        };
        let mut interp = m.interpreter().ok_or_else(|| {
            start_err("no interpreter: set run.language or run.interpreter".into())
        })?;
        let env = dependencies(dir, m, config, "dependencies")
            .await
            .map_err(start_err)?;
        if let Some(py) = &env.python
            && m.run.language.as_deref() == Some("python")
            && m.run.interpreter.is_none()
        {
            interp[0] = py.to_string_lossy().into_owned();
        }
        if let Some(real) = crate::sandbox::interp::resolve(&interp[0]) {
            interp[0] = real.to_string_lossy().into_owned();
        }
        let entry = dir.join(m.run.entry.as_deref().unwrap_or("main"));
        let starts = if worker {
            Starts::Worker
        } else {
            Starts::Script
        };
        // A spare learns its entry from one line: a path with a newline starts directly.
        // (Unix: a spare moves its descriptors, see `stubs.rs`.)
        let stub = (cfg!(unix) && !worker && !entry.to_string_lossy().contains('\n'))
            .then(|| Stub::for_interpreter(&interp[0], m.run.interpreter.is_none()));
        Recipe::assemble(
            dir,
            tool,
            config,
            &env,
            (interp, entry, Vec::new()),
            starts,
            stub,
        )
    }

    /// The recipe of `tool` living in `dir` that runs `command` (interpreter and flags, entry,
    /// arguments) with the dependency environment `env`: the one place a process's
    /// environment, grants, sandbox and limits are decided, for scripts, workers and MCP
    /// entries' servers alike.
    pub fn assemble(
        dir: &Path,
        tool: &super::Granted,
        config: &Config,
        env: &deps::Env,
        command: (Vec<String>, PathBuf, Vec<String>),
        starts: Starts,
        stub: Option<Stub>,
    ) -> Result<Recipe, RunError> {
        let m = &tool.manifest;
        let (interp, entry, args) = command;
        let is_node = m.run.language.as_deref() == Some("node")
            || interp.first().is_some_and(|i| {
                Path::new(i)
                    .file_name()
                    .is_some_and(|f| f.to_string_lossy().starts_with("node"))
            });
        let vars = Vars::of(m, dir, env, is_node, starts)?;
        let mut visible = vec![dir.to_path_buf()];
        visible.extend(env.dirs.iter().cloned());
        Ok(Recipe {
            name: m.name.clone(),
            interp,
            entry,
            args,
            env: vars,
            secrets: tool.secrets.clone(),
            mode: m.sandbox(),
            network: m.capabilities.network.clone(),
            visible,
            read: m.capabilities.read.clone(),
            write: m.capabilities.write.clone(),
            roots: config.roots.clone(),
            sandbox: config.sandbox.clone(),
            memory_mb: m.limits.memory_mb(),
            is_node,
            stub,
            admitted: tool.admitted.map(|id| (dir.to_path_buf(), id)),
        })
    }

    /// What names this process set-up (with the sandbox mechanism that applies now).
    pub fn key(&self) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (
            &self.interp,
            &self.args,
            &self.env,
            self.secrets.fingerprint(),
            &self.visible,
            &self.read,
            &self.write,
            &self.roots,
            &self.network,
            self.memory_mb,
            self.stub,
        )
            .hash(&mut h);
        format!("{:?}", self.mode).hash(&mut h);
        // Binds and Landlock rules hold directories, not paths: a tool directory replaced by
        // a commit (or a rebuilt environment) needs a new process.
        let declared = self.read.iter().chain(&self.write).map(|p| {
            let p = Path::new(p);
            match self.roots.first() {
                Some(root) if p.is_relative() => root.join(p),
                _ => p.to_path_buf(),
            }
        });
        for p in self.visible.iter().cloned().chain(declared) {
            #[cfg(unix)]
            {
                use std::os::unix::fs::MetadataExt;
                std::fs::metadata(&p)
                    .map(|md| (md.dev(), md.ino()))
                    .ok()
                    .hash(&mut h);
            }
            #[cfg(not(unix))]
            std::fs::metadata(&p)
                .and_then(|md| md.created())
                .ok()
                .hash(&mut h);
        }
        sandbox::choose(self.mode, &self.sandbox)
            .map(|m| m.as_str())
            .unwrap_or("refused")
            .hash(&mut h);
        h.finish()
    }
}

/// Start a process for the recipe: as a spare waiting for its call (`spare`, when the recipe
/// has a stub) or directly on the entry.
pub(crate) fn spawn(r: &Recipe, spare: bool) -> Result<Launched, RunError> {
    let start_err = |message: String| RunError::Start {
        tool: r.name.clone(),
        message,
    };
    let scratch = tempfile::Builder::new()
        .prefix("toolsmith-run-")
        .tempdir()
        .map_err(|e| start_err(format!("cannot create a scratch directory: {e}")))?;
    // A tool limited to listed domains gets its own proxy: on a unix socket bridged into a
    // Linux sandbox's network namespace, else on a loopback port.
    let proxy = match r.network.domains() {
        None => None,
        Some(domains) => {
            let unix = matches!(
                sandbox::choose(r.mode, &r.sandbox),
                Ok(sandbox::Mechanism::Bubblewrap) | Ok(sandbox::Mechanism::Landlock)
            );
            Some(
                crate::sandbox::proxy::Proxy::start(&r.name, domains, unix)
                    .map_err(|e| start_err(format!("cannot start its network proxy: {e}")))?,
            )
        }
    };
    let net = match &proxy {
        Some(p) => sandbox::Net::Proxy(p.endpoint().clone()),
        None if r.network.is_any() => sandbox::Net::Any,
        None => sandbox::Net::None,
    };
    let spec = sandbox::Spec {
        mode: r.mode,
        network: net.clone(),
        scratch: scratch.path(),
        visible: r.visible.clone(),
        read: &r.read,
        write: &r.write,
        roots: &r.roots,
        config: &r.sandbox,
    };
    // The interpreter's prefix is granted from the interpreter itself, whatever runs first.
    let direct = || {
        let mut a = r.interp.clone();
        // (An MCP server's binary is the interpreter itself, with no entry after it.)
        if !r.entry.as_os_str().is_empty() {
            a.push(r.entry.to_string_lossy().into_owned());
        }
        a.extend(r.args.iter().cloned());
        a
    };
    let prepared = sandbox::prepare(direct(), &spec).map_err(|e| match e {
        sandbox::SandboxError::OutsideRoots { path, what, roots } => RunError::Denied {
            tool: r.name.clone(),
            what: format!("{what} access to {path}"),
            why: format!("it is outside the allowed roots ({roots})"),
        },
        other => RunError::Sandbox {
            tool: r.name.clone(),
            message: other.to_string(),
            hint: other.hint().unwrap_or_default(),
        },
    })?;
    let stub = r.stub.filter(|_| spare);
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut out = None;
    let prepared = match stub {
        None => prepared,
        #[cfg(not(unix))]
        Some(_) => prepared,
        #[cfg(unix)]
        Some(stub) => {
            let (reader, writer) = call_stdout()
                .map_err(|e| start_err(format!("cannot make a pipe for its stdout: {e}")))?;
            let argv = stub
                .argv(&r.interp, sandbox::CALL_STDOUT_FD)
                .ok_or_else(|| {
                    start_err("no /bin/sh to wait in for the call (set TOOLSMITH_SPARES=0)".into())
                })?;
            let mut p = prepared.with_program(argv);
            p.child.call_stdout = Some(writer);
            out = Some(reader);
            p
        }
    };
    start(r, prepared, scratch, &net, proxy, out)
}

/// Start the prepared command line of a recipe in its scratch directory: the recipe's
/// variables, its secrets and HOME and TMPDIR set inside the sandbox (`sandbox::env`), piped
/// stdio, its pids cgroup and limits, its own process tree.
fn start(
    r: &Recipe,
    prepared: sandbox::Prepared,
    scratch: tempfile::TempDir,
    net: &sandbox::Net,
    proxy: Option<crate::sandbox::proxy::Proxy>,
    out: Option<CallStdout>,
) -> Result<Launched, RunError> {
    let start_err = |message: String| RunError::Start {
        tool: r.name.clone(),
        message,
    };
    let mut prepared = prepared;
    let asked = (r.env.asked.iter())
        .map(|(k, v)| (k.as_str(), v.as_os_str()))
        .chain(r.secrets.vars().map(|(k, v)| (k, std::ffi::OsStr::new(v))));
    let own = (r.env.own.iter()).map(|(k, v)| (k.as_str(), v.as_os_str()));
    let sandbox_err = |e: sandbox::SandboxError| RunError::Sandbox {
        tool: r.name.clone(),
        message: e.to_string(),
        hint: e.hint().unwrap_or_default(),
    };
    let env = sandbox::Environment::build(asked, own, scratch.path(), net).map_err(sandbox_err)?;
    let mut cmd = prepared
        .command(&env, scratch.path())
        .map_err(sandbox_err)?;
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let cgroup = sandbox::PidsCgroup::new(sandbox::MAX_TASKS, &r.sandbox);
    let mechanism = prepared.mechanism;
    let program = prepared.argv[0].clone();
    sandbox::ChildLimits::new(r.memory_mb, r.is_node, cgroup.as_ref()).apply(&mut cmd, prepared);
    // Its own process group (Unix) or job object (Windows), killed on drop; spawning drops
    // `cmd`, which closes the descriptors prepared for the child.
    let child = ProcessTree::spawn(cmd).map_err(|e| {
        start_err(format!(
            "cannot run {program:?} (sandbox: {}): {e}",
            mechanism.as_str()
        ))
    })?;
    let pid = child.id();
    Ok(Launched {
        child,
        pid,
        scratch,
        cgroup,
        proxy,
        out,
    })
}

/// A fork server of the recipe (`runner::fork`), started like a spare of it — its own
/// scratch directory, pids cgroup, limits, the tool's grants and sandbox — with what differs
/// for one: the sandbox set-up of `sandbox::prepare_fork_server`, the stub of
/// `Stub::fork_server_argv`, and `ctl` (the server's end of its control socket) and its
/// configuration inherited. None when the recipe cannot have one (its stub does not fork, or
/// its sandbox cannot: the error says why).
#[cfg(target_os = "linux")]
pub(crate) fn spawn_fork_server(
    r: &Recipe,
    ctl: std::os::fd::OwnedFd,
) -> Result<(Launched, sandbox::ForkSetup), RunError> {
    let start_err = |message: String| RunError::Start {
        tool: r.name.clone(),
        message,
    };
    let stub = r
        .stub
        .filter(|s| s.forks() && r.network.domains().is_none())
        .ok_or_else(|| start_err("this tool's processes are not forked".into()))?;
    let scratch = tempfile::Builder::new()
        .prefix("toolsmith-run-")
        .tempdir()
        .map_err(|e| start_err(format!("cannot create a scratch directory: {e}")))?;
    let net = if r.network.is_any() {
        sandbox::Net::Any
    } else {
        sandbox::Net::None
    };
    let spec = sandbox::Spec {
        mode: r.mode,
        network: net.clone(),
        scratch: scratch.path(),
        visible: r.visible.clone(),
        read: &r.read,
        write: &r.write,
        roots: &r.roots,
        config: &r.sandbox,
    };
    let mut direct = r.interp.clone();
    direct.push(r.entry.to_string_lossy().into_owned());
    let (prepared, setup) =
        sandbox::prepare_fork_server(direct, &spec).map_err(|e| RunError::Sandbox {
            tool: r.name.clone(),
            message: e.to_string(),
            hint: e.hint().unwrap_or_default(),
        })?;
    let config = setup
        .config()
        .map_err(|e| start_err(e.to_string()))
        .and_then(|mut c| {
            // The tool's entry, which each call's process compiles while it waits for its
            // call (`stubs/python.py`).
            c["entry"] = r.entry.to_string_lossy().into_owned().into();
            sandbox::memfd("toolsmith-fork-server", c.to_string().as_bytes())
                .map_err(|e| start_err(format!("cannot hand over its configuration: {e}")))
        })?;
    let ctl = sandbox::above_nine(ctl)
        .map_err(|e| start_err(format!("cannot place its control socket: {e}")))?;
    let argv = stub
        .fork_server_argv(&r.interp, ctl_fd(&ctl), ctl_fd(&config))
        .ok_or_else(|| start_err("this tool's processes are not forked".into()))?;
    let mut prepared = prepared.with_program(argv);
    prepared.child.inherit_fds.extend([ctl, config]);
    let launched = start(r, prepared, scratch, &net, None, None)?;
    Ok((launched, setup))
}

#[cfg(target_os = "linux")]
fn ctl_fd(fd: &std::os::fd::OwnedFd) -> i32 {
    use std::os::fd::AsRawFd;
    fd.as_raw_fd()
}
