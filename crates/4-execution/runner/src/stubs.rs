//! The programs a spare runs while it waits for its call (`stubs/*`), one per interpreter
//! family, passed inline (`-c`, `-e`, `-r`) so nothing extra has to be visible in the sandbox.
//!
//! A spare starts as a shell (`stubs/moves.sh`) that moves its descriptors, then becomes the
//! stub: the call's stdout is a pipe of its own, handed in at a descriptor named on the command
//! line and moved to 1, so only the tool's processes hold it (a sandbox's outer processes, which
//! outlive the tool by a few context switches, hold only the process's first stdout). That first
//! stdout becomes descriptor 9: the stub's channel to the host.
//!
//! Every stub speaks the same tiny protocol on its stdin and its channel before the tool gets
//! stdin: it writes `r` once the interpreter is up, reads one line — the absolute path of the
//! tool's entry file — writes `g` and runs the entry as the main script in a fresh namespace
//! (or `exec`s the interpreter on it). Where nothing of the tool's can run after the stub sees
//! the status the process exits with (Bash's `EXIT` trap, Python's exit, Node's `exit` event),
//! it ends the call's stdout and writes `x<status>\n` on the channel: the call's result is
//! known then, without waiting for the interpreter's teardown and the sandbox to come down.
//! Ruby's finalizers and Perl's global destruction run after the last hook a stub could use,
//! so theirs leave the status to the process. The stub reads the entry line byte by byte,
//! so the host may write the call's input right behind it (`pipelined`); PHP, which reads stdin
//! in blocks, gets its input only after the `g`. It loads nothing of the tool's before that
//! line arrives, so no tool code runs before the call, and it serves exactly one call: every
//! call is a fresh process. (A Python process forked by a fork server, which knows the tool's
//! entry, compiles it while waiting — compiling runs none of it — and uses that code only if
//! the file holds the same bytes when the call comes.)
//!
//! On Windows there are no spares (no descriptors to move): nothing here is used there.
#![cfg_attr(not(unix), allow(dead_code))]

const PYTHON: &str = include_str!("stubs/python.py");
const NODE: &str = include_str!("stubs/node.js");
const RUBY: &str = include_str!("stubs/ruby.rb");
const PERL: &str = include_str!("stubs/perl.pl");
const PHP: &str = include_str!("stubs/php.php");
const EXEC: &str = include_str!("stubs/exec.sh");
const BASH: &str = include_str!("stubs/bash.sh");
const MOVES: &str = include_str!("stubs/moves.sh");
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const FORK: &str = include_str!("stubs/fork.py");

/// How a spare waits for its call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stub {
    /// The interpreter itself is started; the entry runs inside it.
    Python,
    Node,
    Ruby,
    Perl,
    Php,
    /// Bash waits and runs the entry itself (its start is most of a Bash call).
    Bash,
    /// A shell waits, then `exec`s the interpreter on the entry (any other interpreter).
    Exec,
}

impl Stub {
    /// The stub for a language's default interpreter (`/path/python3` → Python); `Exec` for
    /// anything else.
    pub fn for_interpreter(program: &str, language_default: bool) -> Stub {
        let name = std::path::Path::new(program)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !language_default {
            return Stub::Exec;
        }
        match () {
            _ if name.starts_with("python") => Stub::Python,
            _ if name.starts_with("node") => Stub::Node,
            _ if name.starts_with("ruby") => Stub::Ruby,
            _ if name.starts_with("perl") => Stub::Perl,
            _ if name.starts_with("php") => Stub::Php,
            _ if name == "bash" => Stub::Bash,
            _ => Stub::Exec,
        }
    }

    /// Whether a fork server can serve this stub's calls (`runner::fork`): Python only (Node
    /// cannot fork; Ruby, Perl and Bash start fast enough).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub fn forks(self) -> bool {
        self == Stub::Python
    }

    /// The command line of a fork server (`stubs/fork.py`, then this stub for each call's
    /// process) for the interpreter command `interp`: started with `-S` (no package's site
    /// code runs in the server), its control socket at descriptor `ctl`, its configuration
    /// (JSON) readable at `config`. None for a stub that does not fork.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub fn fork_server_argv(self, interp: &[String], ctl: i32, config: i32) -> Option<Vec<String>> {
        if !self.forks() {
            return None;
        }
        let mut a: Vec<String> = interp.to_vec();
        a.extend([
            "-S".to_string(),
            "-c".into(),
            format!("{FORK}\n{PYTHON}"),
            ctl.to_string(),
            config.to_string(),
        ]);
        Some(a)
    }

    /// Whether the call's input may be written right behind the entry line.
    pub fn pipelined(self) -> bool {
        self != Stub::Php
    }

    /// The spare's command line for the interpreter command `interp` (program and flags),
    /// with the call's stdout at descriptor `out` (a single digit other than 0–2 and 9). None
    /// when no shell is there to move the descriptors.
    pub fn argv(self, interp: &[String], out: i32) -> Option<Vec<String>> {
        let sh = ["/bin/sh", "/usr/bin/sh"]
            .into_iter()
            .find(|p| std::path::Path::new(p).is_file())?;
        let mut a = vec![
            sh.to_string(),
            "-c".into(),
            MOVES.into(),
            "toolsmith-spare".into(),
            out.to_string(),
        ];
        let inline = |a: &mut Vec<String>, flag: &str, code: &str| {
            a.extend(interp.iter().cloned());
            a.extend([flag.to_string(), code.to_string()]);
        };
        match self {
            Stub::Python => inline(&mut a, "-c", PYTHON),
            Stub::Node => inline(&mut a, "-e", NODE),
            Stub::Ruby => inline(&mut a, "-e", RUBY),
            Stub::Perl => inline(&mut a, "-e", PERL),
            Stub::Php => inline(&mut a, "-r", PHP),
            Stub::Bash => {
                inline(&mut a, "-c", BASH);
                // `bash -c CODE NAME`: NAME is $0 until the stub sets it to the entry.
                a.push("toolsmith-spare".into());
            }
            Stub::Exec => {
                a.extend([
                    sh.to_string(),
                    "-c".into(),
                    EXEC.into(),
                    "toolsmith-spare".into(),
                ]);
                a.extend(interp.iter().cloned());
            }
        }
        Some(a)
    }
}
