//! The programs a spare runs while it waits for its call (`stubs/*`), one per interpreter
//! family, passed inline (`-c`, `-e`, `-r`) so nothing extra has to be visible in the sandbox.
//!
//! Every stub speaks the same tiny protocol on its own stdin and stdout before the tool gets
//! them: it writes `r` once the interpreter is up, reads one line — the absolute path of the
//! tool's entry file — writes `g` and runs the entry as the main script in a fresh namespace
//! (or `exec`s the interpreter on it). It reads that line byte by byte, so the host may write
//! the call's input right behind it (`pipelined`); PHP, which reads stdin in blocks, gets its
//! input only after the `g`. It loads nothing of the tool's before that line arrives,
//! so no tool code runs before the call, and it serves exactly one call: every call is a
//! fresh process.

const PYTHON: &str = include_str!("stubs/python.py");
const NODE: &str = include_str!("stubs/node.js");
const RUBY: &str = include_str!("stubs/ruby.rb");
const PERL: &str = include_str!("stubs/perl.pl");
const PHP: &str = include_str!("stubs/php.php");
const EXEC: &str = include_str!("stubs/exec.sh");
const BASH: &str = include_str!("stubs/bash.sh");

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

    /// Whether the call's input may be written right behind the entry line.
    pub fn pipelined(self) -> bool {
        self != Stub::Php
    }

    /// The spare's command line for the interpreter command `interp` (program and flags).
    /// None when no shell is there to run the exec stub.
    pub fn argv(self, interp: &[String]) -> Option<Vec<String>> {
        let inline = |flag: &str, code: &str| {
            let mut a = interp.to_vec();
            a.extend([flag.to_string(), code.to_string()]);
            a
        };
        Some(match self {
            Stub::Python => inline("-c", PYTHON),
            Stub::Node => inline("-e", NODE),
            Stub::Ruby => inline("-e", RUBY),
            Stub::Perl => inline("-e", PERL),
            Stub::Php => inline("-r", PHP),
            Stub::Bash => {
                let mut a = inline("-c", BASH);
                // `bash -c CODE NAME`: NAME is $0 until the stub sets it to the entry.
                a.push("toolsmith-spare".into());
                a
            }
            Stub::Exec => {
                let sh = ["/bin/sh", "/usr/bin/sh"]
                    .into_iter()
                    .find(|p| std::path::Path::new(p).is_file())?;
                let mut a = vec![
                    sh.to_string(),
                    "-c".into(),
                    EXEC.into(),
                    "toolsmith-spare".into(),
                ];
                a.extend(interp.iter().cloned());
                a
            }
        })
    }
}
