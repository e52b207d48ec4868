//! How a sandboxed process reaches the network: not at all (its own empty network namespace),
//! every host directly, or only the domains its manifest lists — through toolsmith's
//! filtering proxy (`sandbox::proxy`), which the process reaches at `127.0.0.1:PORT` in its own
//! network namespace. On Linux a small bridge (`bridge.rs`, this same binary) listens there
//! inside the sandbox and forwards each connection to the proxy's unix socket, the only way
//! out of the namespace; on macOS (and unsandboxed) the proxy listens on a loopback port.

use std::path::PathBuf;

/// The port the proxy answers on inside a Linux sandbox's own network namespace.
pub const BRIDGE_PORT: u16 = 3128;

/// The network of one process.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Net {
    /// No network.
    #[default]
    None,
    /// Every host, directly.
    Any,
    /// Only through the filtering proxy at this endpoint.
    Proxy(Endpoint),
}

/// Where the filtering proxy of one process listens.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// A unix socket in a private directory (bound into the sandbox at the same path), reached
    /// through the bridge.
    Unix {
        /// The private directory.
        dir: PathBuf,
        /// The socket in it.
        socket: PathBuf,
    },
    /// A port on 127.0.0.1 of this machine.
    Tcp(u16),
}

impl Net {
    /// Whether the process may make inet sockets at all (the seccomp program's choice): with
    /// a proxy it must, to reach the bridge on its own loopback.
    pub fn inet(&self) -> bool {
        !matches!(self, Net::None)
    }

    /// The proxy address a process is told (HTTP_PROXY and friends), if any.
    pub fn proxy_url(&self) -> Option<String> {
        match self {
            Net::Proxy(Endpoint::Unix { .. }) => Some(format!("http://127.0.0.1:{BRIDGE_PORT}")),
            Net::Proxy(Endpoint::Tcp(port)) => Some(format!("http://127.0.0.1:{port}")),
            _ => None,
        }
    }

    /// The environment that sends a process's HTTP clients through the proxy: the upper- and
    /// lower-case variables curl, Python, Ruby, Go and most libraries read, and Node's opt-in.
    pub fn proxy_env(&self) -> Vec<(&'static str, String)> {
        let Some(url) = self.proxy_url() else {
            return Vec::new();
        };
        let mut env: Vec<(&'static str, String)> = [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "http_proxy",
            "https_proxy",
            "all_proxy",
        ]
        .into_iter()
        .map(|k| (k, url.clone()))
        .collect();
        env.extend([
            ("NO_PROXY", String::new()),
            ("no_proxy", String::new()),
            ("NODE_USE_ENV_PROXY", "1".into()),
        ]);
        env
    }
}

/// The program that bridges the proxy into a sandbox: this binary (`toolsmith __net-bridge`).
/// A process that is not the `toolsmith` binary (a test harness using the library) finds it
/// beside itself, as cargo lays out its targets.
pub fn bridge_program() -> Result<PathBuf, String> {
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find the toolsmith binary to bridge the proxy: {e}"))?;
    let name = format!("toolsmith{}", std::env::consts::EXE_SUFFIX);
    if exe.file_name().is_some_and(|f| f == name.as_str()) {
        return Ok(exe);
    }
    exe.parent()
        .and_then(|deps| deps.parent())
        .map(|dir| dir.join(&name))
        .filter(|p| p.is_file())
        .ok_or_else(|| {
            format!(
                "a tool limited to listed domains runs its network through the `toolsmith` binary, and {} is not it (nor is one beside it)",
                exe.display()
            )
        })
}
