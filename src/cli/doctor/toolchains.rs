//! The tool chains `toolsmith doctor` checks: the interpreters on PATH (and the executables
//! behind their shims), the Rust targets, the component tool chains, and whether builds can
//! be contained.

use super::{Check, Status, check};
use crate::build::componentize::{self, Language};
use crate::config::SandboxConfig;
use crate::sandbox;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Each interpreter on PATH, and the real executable behind it (shims followed by asking the
/// interpreter itself).
pub(super) fn interpreters() -> Vec<Check> {
    const LANGS: &[(&str, &str, &[&str], &str)] = &[
        (
            "python",
            "python3",
            &[
                "-c",
                "import sys; print(sys.executable, sys.version.split()[0])",
            ],
            "apt-get install python3 (or brew install python)",
        ),
        (
            "node",
            "node",
            &["-e", "console.log(process.execPath, process.version)"],
            "apt-get install nodejs (or brew install node)",
        ),
        (
            "ruby",
            "ruby",
            &[
                "-e",
                "require 'rbconfig'; puts [RbConfig.ruby, RUBY_VERSION].join(' ')",
            ],
            "apt-get install ruby (or brew install ruby)",
        ),
        (
            "bash",
            "bash",
            &["-c", "echo \"$BASH $BASH_VERSION\""],
            "apt-get install bash",
        ),
        (
            "perl",
            "perl",
            &["-e", "print \"$^X $^V\\n\""],
            "apt-get install perl",
        ),
        (
            "php",
            "php",
            &["-r", "echo PHP_BINARY, ' ', PHP_VERSION, \"\\n\";"],
            "apt-get install php-cli (or brew install php)",
        ),
    ];
    let handles: Vec<_> = LANGS
        .iter()
        .map(|&(label, bin, args, install)| {
            std::thread::spawn(move || match which::which(bin) {
                Err(_) => check(
                    label,
                    Status::Warn,
                    format!("`{bin}` is not on PATH: {label} tools cannot run"),
                    Some(install.into()),
                ),
                Ok(path) => match ask(&path, args) {
                    Some(real) => {
                        let (exe, version) = real.split_once(' ').unwrap_or((&real, ""));
                        let via = if Path::new(exe) == path {
                            String::new()
                        } else {
                            format!(" (via {})", path.display())
                        };
                        check(label, Status::Ok, format!("{exe} {version}{via}"), None)
                    }
                    None => check(
                        label,
                        Status::Warn,
                        format!("{} is on PATH but did not answer", path.display()),
                        Some(format!(
                            "run `{} --version` to see what is wrong",
                            path.display()
                        )),
                    ),
                },
            })
        })
        .collect();
    handles.into_iter().filter_map(|h| h.join().ok()).collect()
}

/// Run `exe args` (5 s at most) and return its first line of output.
fn ask(exe: &Path, args: &[&str]) -> Option<String> {
    let mut child = Command::new(exe)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let out = child.wait_with_output().ok()?;
    let line = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()?
        .trim()
        .to_string();
    (!line.is_empty()).then_some(line)
}

/// Whether component tools in `language` can be built (its tool chain found and running).
pub(super) fn componentize(language: Language, exe: &Path, sandbox: &SandboxConfig) -> Check {
    let id = format!("{language}/component");
    match componentize::resolve(language, exe, sandbox) {
        Ok(c) => check(
            &id,
            Status::Ok,
            format!("{} ({})", c.version, c.exe.display()),
            None,
        ),
        Err(e) => check(
            &id,
            Status::Warn,
            format!(
                "{e}: {} component tools cannot be built ({} scripts still work)",
                language.title(),
                language.title()
            ),
            crate::error::Hint::hint(&e),
        ),
    }
}

/// Whether `target` can be built for (`what`: the tools it makes), as check `id`.
pub(super) fn rust_target(cargo: &Path, id: &str, target: &str, what: &str) -> Check {
    let rustc_out = Command::new(cargo)
        .args(["--version"])
        .stderr(Stdio::null())
        .output();
    if !rustc_out.is_ok_and(|o| o.status.success()) {
        return check(
            id,
            Status::Warn,
            format!(
                "no cargo ({}): {what} cannot be built (scripts still work)",
                cargo.display()
            ),
            Some(format!(
                "install Rust with rustup (https://rustup.rs), then `rustup target add {target}`"
            )),
        );
    }
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .stderr(Stdio::null())
        .output()
        .ok()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .any(|l| l.trim() == target)
        });
    match installed {
        Some(true) => check(
            id,
            Status::Ok,
            format!("cargo and the {target} target"),
            None,
        ),
        Some(false) => check(
            id,
            Status::Warn,
            format!("the {target} target is missing: {what} cannot be built"),
            Some(format!("rustup target add {target}")),
        ),
        None => check(
            id,
            Status::Warn,
            format!("cargo found, but no rustup to check for the {target} target"),
            Some(format!(
                "make sure the Rust standard library for {target} is installed"
            )),
        ),
    }
}

/// How builds and dependency installs are contained here.
pub(super) fn builds_check(config: &SandboxConfig) -> Check {
    let d = sandbox::describe_builds(config);
    match d["mechanism"].as_str().unwrap_or_default() {
        "refused" => check(
            "builds",
            if config.allow_unsandboxed {
                Status::Warn
            } else {
                Status::Fail
            },
            format!(
                "builds and installs are refused: {}",
                d["error"].as_str().unwrap_or_default()
            ),
            d["hint"].as_str().map(String::from),
        ),
        "none" => check(
            "builds",
            Status::Warn,
            "builds and installs run UNSANDBOXED (--allow-unsandboxed): build scripts, proc macros and install hooks have your full rights",
            None,
        ),
        m => check(
            "builds",
            Status::Ok,
            format!(
                "builds and installs run under {m}: the tool chain and package caches read-only, the build's own directories writable, no HOME, toolbox or personal directory; fetching only from the package registries through the filtering proxy, compiling and install scripts offline"
            ),
            None,
        ),
    }
}
