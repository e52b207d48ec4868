//! A sandboxed process's environment, and its launcher's: made here and handed over here,
//! nowhere else.
//!
//! Whatever starts a sandboxed process — `bwrap`, the in-process sandbox's child between fork
//! and exec, Seatbelt's `sandbox-exec` — runs before the sandbox holds. So its environment is
//! one toolsmith fixes, never the tool's: a variable a tool or an entry asked for
//! (`capabilities.env`, `[mcp] env`, a secret) could steer that launcher (`LD_PRELOAD` in
//! `bwrap`'s own environment runs a library's constructor with the host's rights, before any
//! namespace exists). `Environment::build` makes the program's environment — what the tool or
//! entry asked for (each name checked against `manifest::env`, refused with why), toolsmith's
//! own values, the proxy's, HOME and TMPDIR the call's scratch directory — and
//! `Prepared::command` hands it over so that it exists only inside the sandbox:
//!
//! - **bubblewrap**: `bwrap` starts with an empty environment; the program's comes as
//!   `--clearenv --setenv NAME VALUE …`, read from an in-memory file (`--args FD`), so no
//!   value is on a command line other processes can read;
//! - **the in-process sandbox**: the child applies the sandbox between fork and exec, running
//!   only toolsmith's code, and the program's environment is given to `execve` — it exists
//!   only once the sandbox holds;
//! - **Seatbelt**: `sandbox-exec` is a system binary the dynamic loader starts without
//!   `DYLD_*` variables (System Integrity Protection), and those are refused anyway; it
//!   passes the environment to the program it starts in the profile.
//!
//! A build's tool chain (`contained`) gets its environment the same way; its values are
//! toolsmith's and the person's own, never a build input's.

#[cfg(target_os = "linux")]
use crate::Mechanism;
use crate::{Net, Prepared, SandboxError};
use std::ffi::{OsStr, OsString};
use std::path::Path;

/// The environment a sandboxed program starts with (values never shown by `Debug`).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Environment {
    vars: Vec<(String, OsString)>,
}

impl std::fmt::Debug for Environment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.vars.iter().map(|(k, _)| k))
            .finish()
    }
}

impl Environment {
    /// The environment of a sandboxed process (the only function that makes one): what the
    /// tool or entry asked for (`asked`: passed-through variables, `[mcp] env` values,
    /// approved secrets), then toolsmith's own (`own`, which win), the proxy's for `network`,
    /// and HOME and TMPDIR, the process's scratch directory. A name `manifest::env` refuses
    /// in `asked` is an error, and so is a name or value no environment can hold (empty,
    /// with `=` or NUL).
    pub fn build<'a>(
        asked: impl IntoIterator<Item = (&'a str, &'a OsStr)>,
        own: impl IntoIterator<Item = (&'a str, &'a OsStr)>,
        scratch: &Path,
        network: &Net,
    ) -> Result<Environment, SandboxError> {
        let mut env = Environment::default();
        for (k, v) in asked {
            if let Some(why) = crate::manifest::env::refusal(k) {
                return Err(SandboxError::Refused { why });
            }
            env.set(k, v)?;
        }
        for (k, v) in own {
            env.set(k, v)?;
        }
        for (k, v) in network.proxy_env() {
            env.set(k, OsStr::new(&v))?;
        }
        env.set("HOME", scratch.as_os_str())?;
        env.set("TMPDIR", scratch.as_os_str())?;
        Ok(env)
    }

    /// Set `name` (a later value replaces an earlier one).
    fn set(&mut self, name: &str, value: &OsStr) -> Result<(), SandboxError> {
        let bad = |what: &str| SandboxError::Setup(format!("{what} cannot be in an environment"));
        if name.is_empty() || name.contains(['=', '\0']) {
            return Err(bad(&format!("the variable name {name:?}")));
        }
        if value.as_encoded_bytes().contains(&0) {
            return Err(bad(&format!("the value of {name}, holding a NUL byte,")));
        }
        self.vars.retain(|(k, _)| k != name);
        self.vars.push((name.to_string(), value.to_os_string()));
        Ok(())
    }

    /// The variables, in order.
    pub fn vars(&self) -> impl Iterator<Item = (&str, &OsStr)> {
        self.vars.iter().map(|(k, v)| (k.as_str(), v.as_os_str()))
    }

    /// The value of `name`, if set.
    pub fn get(&self, name: &str) -> Option<&OsStr> {
        self.vars
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_os_str())
    }

    /// bubblewrap's options setting exactly this environment in the sandbox, NUL-separated
    /// (`--args FD`).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    fn bwrap_args(&self) -> Vec<u8> {
        let mut out = b"--clearenv\0".to_vec();
        for (k, v) in &self.vars {
            out.extend_from_slice(b"--setenv\0");
            out.extend_from_slice(k.as_bytes());
            out.push(0);
            out.extend_from_slice(v.as_encoded_bytes());
            out.push(0);
        }
        out
    }
}

impl Prepared {
    /// The command starting this prepared command line in `cwd` with the program's
    /// environment `env` placed for the mechanism (see the module's notes): the only place a
    /// sandboxed process's environment is set. Its launcher's own environment is empty.
    pub fn command(
        &mut self,
        env: &Environment,
        cwd: &Path,
    ) -> Result<tokio::process::Command, SandboxError> {
        let mut cmd = tokio::process::Command::new(&self.argv[0]);
        cmd.env_clear().current_dir(cwd);
        match self.mechanism {
            #[cfg(target_os = "linux")]
            Mechanism::Bubblewrap => {
                use std::os::fd::AsRawFd;
                let fd = crate::limits::memfd("toolsmith-env", &env.bwrap_args()).map_err(|e| {
                    SandboxError::Setup(format!("handing the environment to bubblewrap: {e}"))
                })?;
                cmd.arg("--args").arg(fd.as_raw_fd().to_string());
                self.child.inherit_fds.push(fd);
            }
            _ => {
                cmd.envs(env.vars());
            }
        }
        cmd.args(&self.argv[1..]);
        Ok(cmd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asked_loader_variables_are_refused_and_toolsmith_has_the_last_word() {
        let scratch = Path::new("/tmp/scratch");
        let e = Environment::build(
            [("LD_PRELOAD", OsStr::new("/x.so"))],
            [],
            scratch,
            &Net::None,
        )
        .unwrap_err();
        assert!(e.to_string().contains("LD_PRELOAD"), "{e}");
        let env = Environment::build(
            [
                ("HOME", OsStr::new("/root")),
                ("LOG_LEVEL", OsStr::new("debug")),
            ],
            [
                ("NODE_OPTIONS", OsStr::new("--max-old-space-size=64")),
                ("LOG_LEVEL", OsStr::new("info")),
            ],
            scratch,
            &Net::None,
        )
        .unwrap();
        assert_eq!(env.get("HOME"), Some(scratch.as_os_str()));
        assert_eq!(env.get("LOG_LEVEL"), Some(OsStr::new("info")));
        assert_eq!(
            env.get("NODE_OPTIONS"),
            Some(OsStr::new("--max-old-space-size=64"))
        );
        assert!(!format!("{env:?}").contains("debug"));
    }

    #[test]
    fn a_value_cannot_smuggle_options_to_the_launcher() {
        let nul = Environment::build(
            [("X", OsStr::new("a\0--bind\0/\0/"))],
            [],
            Path::new("/s"),
            &Net::None,
        );
        assert!(nul.is_err());
        assert!(
            Environment::build([("A=B", OsStr::new("x"))], [], Path::new("/s"), &Net::None)
                .is_err()
        );
        let env = Environment::build([("A", OsStr::new("x y"))], [], Path::new("/s"), &Net::None)
            .unwrap();
        assert_eq!(
            env.bwrap_args(),
            b"--clearenv\0--setenv\0A\0x y\0--setenv\0HOME\0/s\0--setenv\0TMPDIR\0/s\0".to_vec()
        );
    }
}
