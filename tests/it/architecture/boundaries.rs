//! What each layer may know and touch: rmcp, IO, git, the environment, configuration.

use super::*;

#[test]
fn only_mcp_knows_rmcp() {
    let bad = offenders(&["crates/8-surfaces/mcp/src/"], &["rmcp::", "use rmcp"]);
    assert!(
        bad.is_empty(),
        "ARCHITECTURE: only `mcp/` knows JSON-RPC and rmcp types; found in: {bad:?}"
    );
}

/// The same as an edge: no crate of the workspace but `toolsmith-mcp` depends on rmcp (the
/// `toolsmith` package only for its tests, as a dev-dependency).
#[test]
fn only_the_mcp_crate_depends_on_rmcp() {
    let mut bad = Vec::new();
    for name in crates() {
        let dir = crate_dir(&name);
        let toml = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_default();
        if name != "mcp" && toml.lines().any(|l| l.trim_start().starts_with("rmcp")) {
            bad.push(dir.display().to_string());
        }
    }
    let root_toml = std::fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    let deps = root_toml
        .split("\n[dependencies]\n")
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .expect("the toolsmith package's [dependencies]");
    if deps.lines().any(|l| l.starts_with("rmcp")) {
        bad.push("the toolsmith package".into());
    }
    assert!(
        bad.is_empty(),
        "ARCHITECTURE: only toolsmith-mcp depends on rmcp; found in: {bad:?}"
    );
    assert!(
        std::fs::read_to_string(root().join("crates/8-surfaces/mcp/Cargo.toml"))
            .is_ok_and(|t| t.contains("rmcp.workspace")),
        "crates/8-surfaces/mcp/Cargo.toml should depend on rmcp"
    );
}

#[test]
fn manifest_does_no_io() {
    let in_manifest = |p: &str| p.starts_with("crates/2-model/manifest/src/");
    assert!(
        sources().iter().any(|(p, _)| in_manifest(p)),
        "crates/2-model/manifest/src/ has no sources"
    );
    let bad = scan(
        in_manifest,
        &[
            "std::fs",
            "fs::",
            "File::",
            "OpenOptions",
            "read_dir",
            "std::process",
        ],
    );
    assert!(
        bad.is_empty(),
        "ARCHITECTURE: `manifest` does no IO; found in: {bad:?}"
    );
}

#[test]
fn only_toolbox_and_git_write_the_repository() {
    // gix's writing APIs (objects, references, the index file) and the journal/lock names.
    let bad = offenders(
        &["crates/3-storage/toolbox/", "crates/3-storage/git/"],
        &[
            "write_object",
            "write_blob",
            "edit_reference",
            "edit_references",
            "commit_as(",
            "toolsmith-journal",
            "toolsmith.lock",
            "write_to_disk",
        ],
    );
    assert!(
        bad.is_empty(),
        "ARCHITECTURE: `toolbox` is the only writer of a toolbox (through `git`); found in: {bad:?}"
    );
}

#[test]
fn runners_know_nothing_of_git_or_mcp() {
    let bad = scan(
        |p| {
            p.starts_with("crates/4-execution/runner/")
                || p.starts_with("crates/4-execution/wasm/")
                || p.starts_with("crates/4-execution/call/")
                || p.starts_with("crates/4-execution/deps/")
                || p.starts_with("crates/4-execution/sandbox/")
        },
        &[
            "gix::",
            "crate::git",
            "toolsmith_git",
            "crate::mcp",
            "crate::toolbox",
        ],
    );
    assert!(
        bad.is_empty(),
        "ARCHITECTURE: runners know nothing of git or MCP; found in: {bad:?}"
    );
}

/// One function builds a sandboxed process's environment and one place sets it on a command
/// (`sandbox::env`): no other code of the runners or the sandbox sets a command's environment
/// (a WASM tool's WASI environment is no process's).
#[test]
fn only_sandbox_env_sets_a_sandboxed_process_environment() {
    let bad = scan(
        |p| {
            (p.starts_with("crates/4-execution/runner/")
                || p.starts_with("crates/4-execution/deps/")
                || p.starts_with("crates/4-execution/sandbox/"))
                && p != "crates/4-execution/sandbox/src/env.rs"
        },
        &[".env(", ".envs(", ".env_clear(", ".env_remove("],
    );
    assert!(
        bad.is_empty(),
        "ARCHITECTURE: a sandboxed process's environment is made by `sandbox::Environment::build` and set by `Prepared::command` only; found in: {bad:?}"
    );
}

/// Where `code` reads the environment and what it asks for: each `env::var*(…)` call's
/// argument, `try_from_env("…")` (a tracing filter) and clap's `env = "…"`.
fn env_reads(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices("env::var") {
        let rest = &code[i..];
        let Some(open) = rest.find('(') else { continue };
        let Some(close) = rest[open..].find(')') else {
            continue;
        };
        out.push(rest[open + 1..open + close].trim().to_string());
    }
    for needle in ["from_env(", "env = "] {
        for (i, _) in code.match_indices(needle) {
            let rest = code[i + needle.len()..].trim_start();
            if let Some(lit) = rest.strip_prefix('"') {
                out.push(format!("\"{}\"", lit.split('"').next().unwrap_or_default()));
            }
        }
    }
    out
}

/// Whether a read of the environment may stand outside `config.rs`: a variable that is not
/// toolsmith's (PATH, DOCKER_CONFIG), every variable at once (`vars_os()`), or one named at
/// run time (a tool's declared `capabilities.env`). A constant could hide a `TOOLSMITH_` name.
fn foreign_read(arg: &str) -> bool {
    match arg.strip_prefix('"') {
        Some(lit) => !lit.starts_with("TOOLSMITH_"),
        None => arg.is_empty() || arg.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
    }
}

#[test]
fn configuration_is_read_once_in_config() {
    let config = sources()
        .into_iter()
        .find(|(p, _)| p == "crates/1-foundation/config/src/lib.rs")
        .expect("crates/1-foundation/config/src/lib.rs");
    assert!(
        config.1.contains("\"TOOLSMITH_SPARES\""),
        "config.rs reads the TOOLSMITH_* variables"
    );
    // `serve --expose`'s environment form is parsed by clap with the flag (config.rs says so).
    let allowed = ["\"TOOLSMITH_EXPOSE\""];
    let mut bad = Vec::new();
    for (p, t) in sources() {
        if p == "crates/1-foundation/config/src/lib.rs" {
            continue;
        }
        for arg in env_reads(&code_only(&t)) {
            if !foreign_read(&arg) && !allowed.contains(&arg.as_str()) {
                bad.push(format!("{p} reads {arg}"));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "ARCHITECTURE: every TOOLSMITH_* variable is read once, by `Config::from_env` in \
         crates/1-foundation/config/src/lib.rs, and passed down from `App`; found: {bad:?}"
    );
    // The check itself sees what it must.
    assert!(!foreign_read("\"TOOLSMITH_SPARES\"") && !foreign_read("ALLOW_ENV"));
    assert_eq!(
        env_reads("std::env::var_os(\"TOOLSMITH_X\").is_some() && clap(env = \"TOOLSMITH_Y\")"),
        ["\"TOOLSMITH_X\"", "\"TOOLSMITH_Y\""]
    );
}
