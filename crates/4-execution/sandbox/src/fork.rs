//! The sandbox's side of a fork server (`runner::fork`): one process per tool that sets the
//! tool's sandbox up once and forks a process per call from an interpreter that never ran the
//! tool's code.
//!
//! A fork server is prepared like a script process of the same tool (the same grants, the same
//! mechanism), with two differences that only toolsmith's stub ever uses: it keeps
//! CAP_SYS_ADMIN of its own user namespace and may call `mount`, `umount2` and `setns` (its
//! seccomp program allows them), and under the in-process sandbox it enters no Landlock domain
//! (a Landlocked process cannot mount). Each call's process — the init of a pid namespace of its
//! own — then mounts a fresh scratch directory, `/dev/shm` (and, under bubblewrap, a fresh
//! `/tmp`) and its own `/proc` in a mount namespace of its own, unshares the IPC namespace
//! (and the network namespace of a tool without network), drops every capability, sets
//! `no_new_privs`, enters the call's Landlock ruleset (the in-process sandbox; made here, per
//! call) and loads the full seccomp programs — those a script process of this tool gets —
//! before the tool's code runs. Under bubblewrap the rest of the server's view (its root and
//! `/dev`) is read-only, so nothing else a call could write is there for the next.

use super::{
    Grants, Mechanism, Net, Prepared, SCRATCH_MB, SHM_MB, SandboxError, Spec, TMP_MB, choose, wrap,
};
use serde_json::{Value, json};
use std::os::fd::OwnedFd;
use std::path::PathBuf;

/// Whether Python tools get fork servers here, and under which mechanism (for `toolsmith
/// doctor`): bubblewrap, or the in-process sandbox where the kernel makes user and pid
/// namespaces; else why not.
pub fn fork_servers(config: &super::SandboxConfig) -> Result<Mechanism, String> {
    match choose(crate::manifest::SandboxMode::Auto, config) {
        Ok(m @ Mechanism::Bubblewrap) => Ok(m),
        Ok(m @ Mechanism::Landlock) => {
            let s = super::linux::status()?;
            if s.ns_flags & libc::CLONE_NEWUSER != 0 && s.pidns {
                Ok(m)
            } else {
                Err("the kernel refuses user or pid namespaces to the in-process sandbox".into())
            }
        }
        Ok(m) => Err(format!("not under {}", m.as_str())),
        Err(e) => Err(e.to_string()),
    }
}

/// What every call of one fork server sets up in its own process.
pub struct ForkSetup {
    /// The mechanism the server runs under.
    pub mechanism: Mechanism,
    /// The seccomp programs each call's process loads, in order, as bwrap reads them.
    seccomp: Vec<Vec<u8>>,
    /// Under the in-process sandbox: the grants each call's Landlock ruleset is made from.
    landlock: Option<Grants>,
    scratch: PathBuf,
    /// Where each call mounts a `/dev/shm` of its own (None: the host's stays denied).
    shm: Option<PathBuf>,
    network: Net,
}

/// Prepare `argv` (the fork server's stub) for the spec. Only bubblewrap and the in-process
/// Linux sandbox can have one (they make namespaces), and never a tool limited to listed
/// domains (its proxy and bridge belong to one process); other cases are an error, and the
/// caller starts one process per call instead.
pub fn prepare_fork_server(
    mut argv: Vec<String>,
    spec: &Spec<'_>,
) -> Result<(Prepared, ForkSetup), SandboxError> {
    let mechanism = choose(spec.mode, spec.config)?;
    if !matches!(mechanism, Mechanism::Bubblewrap | Mechanism::Landlock) {
        return Err(SandboxError::Setup(format!(
            "no fork server under {}",
            mechanism.as_str()
        )));
    }
    if matches!(spec.network, Net::Proxy(_)) {
        return Err(SandboxError::Setup(
            "no fork server for a tool limited to listed domains (its proxy serves one process)"
                .into(),
        ));
    }
    if let Some(real) = argv.first().and_then(|a| crate::interp::resolve(a)) {
        argv[0] = real.to_string_lossy().into_owned();
    }
    let argv0 = argv.first().cloned().unwrap_or_default();
    let grants = Grants::new(spec, &argv0)?;
    let inet = grants.network.inet();
    // The in-process sandbox refuses unix sockets (its processes see the host's files).
    // Under bubblewrap they are refused too when the sandbox shares the host's network
    // namespace (every host), whose abstract sockets it would reach.
    let unix = mechanism == Mechanism::Bubblewrap && !matches!(grants.network, super::Net::Any);
    let programs = [
        super::linux::seccomp_cached(inet, unix),
        super::linux::clone3_cached(),
    ];
    let mut seccomp = Vec::new();
    for p in programs {
        let p = p.map_err(|e| SandboxError::Setup(format!("seccomp: {e}")))?;
        seccomp.push(super::linux::seccomp_bytes(&p));
    }
    let setup = ForkSetup {
        mechanism,
        seccomp,
        landlock: (mechanism == Mechanism::Landlock).then(|| grants.clone()),
        scratch: grants.scratch.clone(),
        // Under bubblewrap the server's own /dev/shm (a tmpfs it mounted) is covered by each
        // call's; the in-process sandbox covers the host's where it can.
        shm: match mechanism {
            Mechanism::Bubblewrap => Some(PathBuf::from("/dev/shm")),
            _ => super::linux::own_shm(&grants),
        },
        network: grants.network.clone(),
    };
    let prepared = wrap(mechanism, argv, grants, spec.config, true)?;
    Ok((prepared, setup))
}

impl ForkSetup {
    /// What the fork server's stub reads when it starts (`stubs/fork.py`): the scratch
    /// directory and its mount options, the fresh `/tmp` (bubblewrap) and `/dev/shm`, the
    /// namespaces each call unshares besides its pid namespace, the seccomp programs (hex),
    /// and under the in-process sandbox the Landlock rights the call adds for its fresh
    /// scratch, `/dev/shm` and `/proc`.
    pub fn config(&self) -> Result<Value, SandboxError> {
        let mut unshare = libc::CLONE_NEWNS | libc::CLONE_NEWIPC;
        if self.network == Net::None {
            unshare |= libc::CLONE_NEWNET;
        }
        let landlock = match &self.landlock {
            Some(_) => {
                let (scratch, proc) = super::linux::call_rights()
                    .map_err(|e| SandboxError::Setup(format!("Landlock: {e}")))?;
                json!({"scratch": scratch, "proc": proc})
            }
            None => Value::Null,
        };
        Ok(json!({
            "scratch": self.scratch,
            "scratch_opts": format!("size={SCRATCH_MB}m,mode=0700"),
            "tmp_opts": (self.mechanism == Mechanism::Bubblewrap)
                .then(|| format!("size={},mode=0755", TMP_MB << 20)),
            "shm": self.shm,
            "shm_opts": format!("size={SHM_MB}m,mode=1777"),
            "unshare": unshare,
            "seccomp": self.seccomp.iter().map(hex::encode).collect::<Vec<_>>(),
            // Bubblewrap's init runs the tool as pid 2; the in-process sandbox's tool is the
            // namespace's init: a call's process tree is the same as a spare's.
            "init": self.mechanism == Mechanism::Bubblewrap,
            "landlock": landlock,
        }))
    }

    /// For one call: its Landlock ruleset under the in-process sandbox (None under
    /// bubblewrap, whose mount view holds only the grants).
    pub fn call_ruleset(&self) -> Result<Option<OwnedFd>, SandboxError> {
        match &self.landlock {
            None => Ok(None),
            Some(g) => super::linux::call_ruleset(g)
                .map(Some)
                .map_err(|e| SandboxError::Setup(format!("Landlock: {e}"))),
        }
    }
}
