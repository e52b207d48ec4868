//! The process of an MCP server entry (`kind = "mcp"` with `[mcp] command`): its command
//! found in the entry's environment (the committed npm or pip lockfile, installed like a
//! script's dependencies) or on PATH, a script's interpreter taken from its `#!` line (so the
//! sandbox grants that interpreter), and the process started by the same `launch::spawn` as
//! a script tool: its scratch directory, pids cgroup, limits and sandbox, with the grants the
//! approval gate decided. Its stdin and stdout are the protocol's; what it writes to stderr
//! is kept (the last lines) to explain a crash.
//!
//! It knows nothing of the protocol spoken over those pipes (that is `mcp::upstream`).

use super::launch::{self, Launched, Recipe, Starts};
use super::{RunError, deps};
use crate::config::Config;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, BufReader};

/// Stderr lines kept per server.
const STDERR_LINES: usize = 200;

/// A started server process. Dropping it kills the process and everything it started.
pub struct ServerProcess {
    launched: Launched,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// The sandbox it runs in.
    pub mechanism: &'static str,
}

impl ServerProcess {
    /// The protocol's pipes (once).
    pub fn take_io(&mut self) -> Option<(tokio::process::ChildStdout, tokio::process::ChildStdin)> {
        let out = self.launched.child.stdout().take()?;
        let inp = self.launched.child.stdin().take()?;
        Some((out, inp))
    }

    /// The server's process id (None once it is gone).
    pub fn pid(&self) -> Option<u32> {
        self.launched.pid
    }

    /// How the process ended, if it did ("exit code 1", "killed by signal 9").
    pub fn exited(&mut self) -> Option<String> {
        match self.launched.child.try_wait() {
            Ok(Some(s)) => Some(describe_status(s)),
            _ => None,
        }
    }

    /// The last lines it wrote to stderr (at most `max` bytes, the end kept), as data: every
    /// invisible, control or bidirectional character written as `\u{…}`. Only the sandboxed
    /// program and the sandbox's own launcher (bubblewrap's messages) write there: nothing
    /// runs outside the sandbox with a variable of the entry's (`sandbox::env`).
    pub fn stderr_tail(&self, max: usize) -> String {
        let lines = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        let text = lines.iter().cloned().collect::<Vec<_>>().join("\n");
        let shown: String = text
            .trim()
            .chars()
            .map(|c| match c {
                '\n' | '\t' => c.to_string(),
                c if crate::names::is_invisible(c) => format!("\\u{{{:04x}}}", c as u32),
                c => c.to_string(),
            })
            .collect();
        deps::tail_text(&shown, max)
    }
}

fn describe_status(s: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = s.signal() {
            return format!("killed by signal {sig}");
        }
    }
    match s.code() {
        Some(c) => format!("exit code {c}"),
        None => "an unknown status".into(),
    }
}

/// What identifies the version of an entry a process was started for: its files and the
/// grants of the call that started it (another version, other grants: another process).
pub fn stamp(dir: &Path, tool: &super::Granted) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    super::worker::stamp(dir, tool).hash(&mut h);
    format!("{:?}", crate::platform::dir_id(dir)).hash(&mut h);
    h.finish()
}

/// The first line of `file` when it is a `#!` line: the interpreter and its argument.
fn shebang(file: &Path) -> Option<Vec<String>> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(file).ok()?.read(&mut head).ok()?;
    let text = std::str::from_utf8(&head[..n]).ok()?;
    let line = text.strip_prefix("#!")?.lines().next()?.trim();
    let mut words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    if words.first().is_some_and(|w| w.ends_with("/env")) {
        words.remove(0);
        if words.first().is_some_and(|w| w == "-S") {
            words.remove(0);
        }
    }
    (!words.is_empty()).then_some(words)
}

/// Where a command is found: a path inside the entry's directory, a command of its
/// environment (the venv's `bin`, `node_modules/.bin`), or one on PATH.
fn find(command: &str, dir: &Path, env: &deps::Env) -> Option<PathBuf> {
    if command.contains('/') {
        return in_entry(dir, command).filter(|p| p.is_file());
    }
    let mut bins: Vec<PathBuf> = Vec::new();
    if let Some(py) = &env.python
        && let Some(bin) = py.parent()
    {
        bins.push(bin.to_path_buf());
    }
    if let Some(nm) = &env.node_modules {
        bins.push(nm.join(".bin"));
    }
    bins.iter()
        .map(|b| b.join(command))
        .find(|p| p.is_file())
        .or_else(|| crate::sandbox::interp::resolve(command))
}

/// `rel` (`server.py`, `./bin/run`) as a path inside the entry's directory; None when it
/// would leave it (absolute, `..`).
fn in_entry(dir: &Path, rel: &str) -> Option<PathBuf> {
    let p = Path::new(rel);
    let mut parts = p.components().peekable();
    if parts.peek() == Some(&std::path::Component::CurDir) {
        parts.next();
    }
    let mut out = dir.to_path_buf();
    for c in parts {
        match c {
            std::path::Component::Normal(n) => out.push(n),
            _ => return None,
        }
    }
    (out != dir).then_some(out)
}

/// The server's arguments: one written `./PATH` names a file of the entry's directory and is
/// passed as its absolute path (the server runs in a scratch directory); the rest as written.
fn entry_args(dir: &Path, args: &[String]) -> Vec<String> {
    args.iter()
        .map(|a| match a.strip_prefix("./") {
            Some(_) => in_entry(dir, a)
                .filter(|p| p.exists())
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_else(|| a.clone()),
            None => a.clone(),
        })
        .collect()
}

/// The interpreter words and the script of a found command. A script runs under the
/// interpreter its `#!` names (so the sandbox grants it); the file itself is what a
/// `node_modules/.bin` or venv link points to. The venv's own `python` stays as it is:
/// resolved to the base interpreter it links to, it would run without the entry's packages.
fn command_line(found: PathBuf, env: &deps::Env) -> (Vec<String>, PathBuf) {
    if let Some(py) = &env.python
        && py.parent() == found.parent()
        && found
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("python"))
    {
        return (vec![found.to_string_lossy().into_owned()], PathBuf::new());
    }
    let file = found.canonicalize().unwrap_or(found);
    match shebang(&file) {
        Some(mut words) => {
            if let Some(real) = crate::sandbox::interp::resolve(&words[0]) {
                words[0] = real.to_string_lossy().into_owned();
            }
            (words, file)
        }
        None => (vec![file.to_string_lossy().into_owned()], PathBuf::new()),
    }
}

/// The recipe of an entry's server: its command line, environment, grants and limits.
async fn recipe(dir: &Path, tool: &super::Granted, config: &Config) -> Result<Recipe, RunError> {
    let m = &tool.manifest;
    let name = m.name.clone();
    let start_err = |message: String| RunError::Start {
        tool: name.clone(),
        message,
    };
    let server = m
        .mcp
        .as_ref()
        .ok_or_else(|| start_err("tool.toml has no [mcp] table".into()))?;
    let command = server
        .command
        .as_deref()
        .ok_or_else(|| start_err("[mcp] has no `command`: this entry is reached by URL".into()))?;
    let env = launch::dependencies(dir, m, config, "packages")
        .await
        .map_err(start_err)?;
    let found = find(command, dir, &env).ok_or_else(|| {
        start_err(format!(
            "the command {command:?} is neither a command of its packages ([dependencies]) nor on PATH"
        ))
    })?;
    let (interp, entry) = command_line(found, &env);
    let args = entry_args(dir, &server.args);
    Recipe::assemble(
        dir,
        tool,
        config,
        &env,
        (interp, entry, args),
        Starts::Server,
        None,
    )
}

/// Start the server of the entry `tool` (admitted: its grants decided) living in `dir`.
pub async fn start(
    dir: &Path,
    tool: &super::Granted,
    config: &Config,
) -> Result<ServerProcess, RunError> {
    let r = recipe(dir, tool, config).await?;
    if !r.still_admitted() {
        return Err(RunError::Replaced {
            tool: r.name.clone(),
        });
    }
    let mechanism = super::sandbox::choose(r.mode, &r.sandbox)
        .map(|m| m.as_str())
        .unwrap_or("refused");
    let mut launched = launch::spawn(&r, false)?;
    let stderr = Arc::new(Mutex::new(VecDeque::new()));
    if let Some(err) = launched.child.stderr().take() {
        let (keep, name) = (Arc::clone(&stderr), r.name.clone());
        tokio::spawn(async move {
            let mut lines = BufReader::new(err).lines();
            while let Ok(Some(l)) = lines.next_line().await {
                tracing::debug!(server = %name, "stderr: {l}");
                let mut k = keep.lock().unwrap_or_else(|p| p.into_inner());
                if k.len() >= STDERR_LINES {
                    k.pop_front();
                }
                k.push_back(l);
            }
        });
    }
    tracing::info!(entry = %r.name, pid = ?launched.pid, sandbox = mechanism, "started an MCP server");
    Ok(ServerProcess {
        launched,
        stderr,
        mechanism,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dot_slash_argument_names_a_file_of_the_entry_and_nothing_outside() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("server.py"), "").unwrap();
        let args: Vec<String> = ["./server.py", "--port", "./missing.txt", "../x", "plain"]
            .map(String::from)
            .to_vec();
        let got = entry_args(tmp.path(), &args);
        assert_eq!(got[0], tmp.path().join("server.py").to_string_lossy());
        assert_eq!(&got[1..], &args[1..]);
        assert_eq!(in_entry(tmp.path(), "./../etc/passwd"), None);
        assert_eq!(in_entry(tmp.path(), "/etc/passwd"), None);
        assert_eq!(in_entry(tmp.path(), "./"), None);
        assert_eq!(
            in_entry(tmp.path(), "./bin/run"),
            Some(tmp.path().join("bin/run"))
        );
    }

    #[test]
    fn a_scripts_interpreter_comes_from_its_first_line() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("s");
        std::fs::write(&f, "#!/usr/bin/env node\nconsole.log(1)\n").unwrap();
        assert_eq!(shebang(&f), Some(vec!["node".to_string()]));
        std::fs::write(&f, "#!/opt/venv/bin/python3 -u\n").unwrap();
        assert_eq!(
            shebang(&f),
            Some(vec!["/opt/venv/bin/python3".to_string(), "-u".to_string()])
        );
        std::fs::write(&f, "\x7fELF").unwrap();
        assert_eq!(shebang(&f), None);
        assert!(find("../x", tmp.path(), &deps::Env::default()).is_none());
    }
}
