//! ARCHITECTURE.md kept honest: the invariants that can be checked by reading the source.
//! (The way rust-analyzer keeps its own: a rule broken in a new file fails here, naming it.)

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The workspace's crates, as (tier, crate directory name): `crates/<tier>/<name>/Cargo.toml`.
fn tiered() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for tier in std::fs::read_dir(root().join("crates")).expect("crates/") {
        let tier = tier.expect("a tier").path();
        for e in std::fs::read_dir(&tier).expect("a tier's crates") {
            let e = e.expect("a crate");
            if e.path().join("Cargo.toml").is_file() {
                out.push((
                    tier.file_name().unwrap().to_string_lossy().into_owned(),
                    e.file_name().to_string_lossy().into_owned(),
                ));
            }
        }
    }
    out.sort();
    out
}

/// The workspace's crates (their directory names).
fn crates() -> Vec<String> {
    let mut names: Vec<String> = tiered().into_iter().map(|(_, c)| c).collect();
    names.sort();
    names
}

/// A crate's directory relative to the workspace: `crates/<tier>/<name>`.
fn crate_rel(name: &str) -> String {
    let (tier, _) = tiered()
        .into_iter()
        .find(|(_, c)| c == name)
        .unwrap_or_else(|| panic!("no crate {name}"));
    format!("crates/{tier}/{name}")
}

/// A crate's directory.
fn crate_dir(name: &str) -> PathBuf {
    root().join(crate_rel(name))
}

/// Every `.rs` file under `src/` and `crates/*/*/src/`, as (path relative to the workspace, text).
fn sources() -> Vec<(String, String)> {
    let dirs = std::iter::once(root().join("src"))
        .chain(crates().into_iter().map(|c| crate_dir(&c).join("src")));
    dirs.flat_map(walkdir::WalkDir::new)
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(root())
                .expect("under the crate")
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(e.path()).expect("readable source");
            (rel, text)
        })
        .collect()
}

/// The source without `//` comments (doc comments may name what the code must not use).
fn code_only(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Files whose path `applies` and whose code contains any of `needles`, each with the first
/// needle found.
fn scan(applies: impl Fn(&str) -> bool, needles: &[&str]) -> Vec<String> {
    sources()
        .into_iter()
        .filter(|(p, _)| applies(p))
        .filter_map(|(p, t)| {
            let code = code_only(&t);
            needles
                .iter()
                .find(|n| code.contains(**n))
                .map(|n| format!("{p} (uses `{n}`)"))
        })
        .collect()
}

/// Files outside `allowed` (path prefixes) whose code contains any of `needles`.
fn offenders(allowed: &[&str], needles: &[&str]) -> Vec<String> {
    scan(|p| !allowed.iter().any(|a| p.starts_with(a)), needles)
}

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

#[test]
fn the_code_map_names_every_module() {
    let arch = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).expect("src/lib.rs");
    // `pub mod x;`, and `pub use toolsmith_x as x;` for a module that is a crate of its own.
    let modules: Vec<&str> = lib
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            l.strip_prefix("pub mod ").or_else(|| {
                l.strip_prefix("pub use toolsmith_")
                    .and_then(|r| r.split(" as ").nth(1))
            })
        })
        .map(|m| m.trim_end_matches(';'))
        .collect();
    assert!(modules.len() > 5, "no modules found in src/lib.rs");
    let missing: Vec<_> = modules
        .iter()
        .filter(|m| !arch.contains(&format!("`{m}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md's code map does not name: {missing:?}"
    );
    // And every module the map names exists.
    let named: Vec<String> = arch
        .lines()
        .filter(|l| l.starts_with("| `"))
        .flat_map(|l| {
            l.split('|')
                .nth(1)
                .unwrap_or("")
                .split(',')
                .map(|s| s.trim().trim_matches('`').to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    let src = root().join("src");
    let exists = |m: &str| {
        // A module that is a crate: `crates/<first>/src/<rest>`.
        let (first, rest) = m.split_once("::").unwrap_or((m, ""));
        let (dir, rel) = if crates().iter().any(|c| c == first) {
            let dir = crate_dir(first).join("src");
            if rest.is_empty() {
                return dir.join("lib.rs").exists();
            }
            (dir, rest.replace("::", "/"))
        } else {
            (src.clone(), m.replace("::", "/"))
        };
        Path::new(&dir.join(format!("{rel}.rs"))).exists() || dir.join(&rel).is_dir()
    };
    let gone: Vec<_> = named.iter().filter(|m| !exists(m)).collect();
    assert!(
        gone.is_empty(),
        "ARCHITECTURE.md names modules that do not exist: {gone:?}"
    );
}

/// The top-level module a source file belongs to (`src/cli/doctor.rs` → `cli`).
fn top_module(path: &str) -> Option<String> {
    let rest = path.strip_prefix("src/")?;
    let first = rest.split('/').next()?;
    let m = first.strip_suffix(".rs").unwrap_or(first);
    (m != "lib" && m != "main").then(|| m.to_string())
}

/// The names at the start of the items of a `use` group's body, split at its top level
/// (`a, b::c, d::{e, f}` → a, b, d).
fn listed(body: &str) -> Vec<String> {
    let mut items = vec![String::new()];
    let mut depth = 0usize;
    for c in body.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => items.push(String::new()),
            _ if depth == 0 => items.last_mut().expect("one item").push(c),
            _ => {}
        }
    }
    items
        .iter()
        .map(|item| ident(item.trim()))
        .filter(|n| !n.is_empty())
        .collect()
}

/// The identifier `text` starts with.
fn ident(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// The names following `prefix` in `code`: `prefix` `name`, and each name of a grouped list
/// `prefix` `{a, b::{c, d}}` (its top level: a, b).
fn named_after(code: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices(prefix) {
        let rest = &code[i + prefix.len()..];
        if let Some(body) = rest.strip_prefix('{') {
            // The group ends at the brace that closes it.
            let mut depth = 1usize;
            let end = body
                .char_indices()
                .find(|&(_, c)| {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                })
                .map_or(body.len(), |(j, _)| j);
            out.extend(listed(&body[..end]));
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out
}

/// The top-level modules one file's code (tests excluded) names through `crate::`.
fn uses(text: &str) -> std::collections::BTreeSet<String> {
    let code = code_only(text);
    let code = match code.find("#[cfg(test)]") {
        Some(i) => &code[..i],
        None => &code,
    };
    named_after(code, "crate::").into_iter().collect()
}

#[test]
fn grouped_use_lists_are_read() {
    let found = uses(
        "use crate::{index::Tool, runner, toolbox::{Toolbox, FileSpec}};\nfn f() { crate::app::x() }",
    );
    assert_eq!(
        found.into_iter().collect::<Vec<_>>(),
        ["app", "index", "runner", "toolbox"]
    );
}

/// The first cycle in a module graph, if any (a depth-first search meeting a module still on
/// its stack).
fn find_cycle(
    graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
) -> Option<Vec<String>> {
    use std::collections::{BTreeMap, BTreeSet};
    fn visit(
        m: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|s| s == m) {
            let mut cycle = stack[i..].to_vec();
            cycle.push(m.to_string());
            return Some(cycle);
        }
        if done.contains(m) {
            return None;
        }
        stack.push(m.to_string());
        for d in g.get(m).into_iter().flatten() {
            if let Some(c) = visit(d, g, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|m| visit(m, graph, &mut Vec::new(), &mut done))
}

/// No import cycles between top-level modules: each module's dependencies form a DAG, so
/// each can be understood (and tested) from the ones below it.
#[test]
fn top_level_modules_have_no_import_cycles() {
    use std::collections::{BTreeMap, BTreeSet};
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (p, t) in sources() {
        let Some(m) = top_module(&p) else { continue };
        let deps = graph.entry(m.clone()).or_default();
        for u in uses(&t) {
            if u != m {
                deps.insert(u);
            }
        }
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "import cycle between top-level modules: {}; move what both need below them",
            cycle.join(" → ")
        );
    }
}

/// The module path of a source file (`crates/8-surfaces/mcp/src/tools/core.rs` → `mcp::tools::core`; a crate's
/// `crates/3-storage/git/src/locks.rs` → `git::locks`, its root `lib.rs` → `git`), and whether it is in
/// a crate of its own (there `crate::` names the crate's root, `git`).
fn module_path(path: &str) -> Option<(Vec<String>, bool)> {
    let (mut parts, in_crate) = if let Some(rest) = path.strip_prefix("crates/") {
        let (tier_krate, file) = rest.split_once("/src/")?;
        let krate = tier_krate.rsplit('/').next()?;
        let file = file.strip_suffix(".rs")?;
        let mut parts = vec![krate.to_string()];
        if file != "lib" {
            parts.extend(file.split('/').map(str::to_string));
        }
        (parts, true)
    } else {
        let rest = path.strip_prefix("src/")?.strip_suffix(".rs")?;
        let parts: Vec<String> = rest.split('/').map(str::to_string).collect();
        if parts.first().is_some_and(|f| f == "lib" || f == "main") {
            return None;
        }
        (parts, false)
    };
    if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    Some((parts, in_crate))
}

/// Nor between sibling modules (`mcp::handler` and `mcp::host`, `cli::commands` and the other
/// `cli` files): what two siblings share lives in a third they both use.
#[test]
fn sibling_modules_have_no_import_cycles() {
    use std::collections::{BTreeMap, BTreeSet};
    let files: Vec<(Vec<String>, bool, String)> = sources()
        .into_iter()
        .filter_map(|(p, t)| module_path(&p).map(|(m, c)| (m, c, t)))
        .collect();
    // parent path → (child → children it uses).
    let mut graphs: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (m, _, _) in &files {
        if m.len() >= 2 {
            let (parent, child) = m.split_at(m.len() - 1);
            graphs
                .entry(parent.to_vec())
                .or_default()
                .entry(child[0].clone())
                .or_default();
        }
    }
    for (m, in_crate, text) in &files {
        let code = code_only(text);
        let code = match code.find("#[cfg(test)]") {
            Some(i) => code[..i].to_string(),
            None => code,
        };
        // Every ancestor P of this file, with the child of P the file lies in.
        for depth in 1..m.len() {
            let (parent, rest) = m.split_at(depth);
            let me = &rest[0];
            let Some(graph) = graphs.get_mut(parent) else {
                continue;
            };
            let siblings: Vec<String> = graph.keys().cloned().collect();
            // In a crate of its own, `crate::` is the crate's root (`parent[0]`).
            let inner = if *in_crate { &parent[1..] } else { parent };
            let mut prefixes = vec![if inner.is_empty() {
                "crate::".to_string()
            } else {
                format!("crate::{}::", inner.join("::"))
            }];
            if rest.len() == 1 {
                prefixes.push("super::".to_string());
            }
            for prefix in prefixes {
                for name in named_after(&code, &prefix) {
                    if &name != me && siblings.contains(&name) {
                        graph.entry(me.clone()).or_default().insert(name);
                    }
                }
            }
        }
    }
    let cycles: Vec<String> = graphs
        .iter()
        .filter_map(|(parent, g)| {
            find_cycle(g).map(|c| format!("in {}: {}", parent.join("::"), c.join(" → ")))
        })
        .collect();
    assert!(
        cycles.is_empty(),
        "import cycles between sibling modules (move what both need into a third):\n{}",
        cycles.join("\n")
    );
}

/// Each crate under crates/ documents its public API (`#![deny(missing_docs)]`) and says what
/// it is for in its package description.
#[test]
fn every_crate_documents_its_api() {
    let crates = crates();
    assert!(crates.len() >= 5, "crates/ holds {crates:?}");
    let mut bad = Vec::new();
    for c in &crates {
        let dir = crate_dir(c);
        let rel = crate_rel(c);
        let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap_or_default();
        if !lib.starts_with("//!") || !lib.contains("#![deny(missing_docs)]") {
            bad.push(format!(
                "{rel}/src/lib.rs: a `//!` summary and #![deny(missing_docs)]"
            ));
        }
        let toml = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_default();
        if !toml.contains(&format!("name = \"toolsmith-{c}\"")) || !toml.contains("description = ")
        {
            bad.push(format!(
                "{rel}/Cargo.toml: name toolsmith-{c} and a description"
            ));
        }
        if !std::fs::read_to_string(root().join("ARCHITECTURE.md"))
            .unwrap_or_default()
            .contains(&format!("`toolsmith-{c}`"))
        {
            bad.push(format!(
                "ARCHITECTURE.md does not name the crate `toolsmith-{c}`"
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// One way to replace a file atomically: `platform::write_atomic` (a temporary file renamed
/// over the old one). A second hand-written copy is how the six there were drifted apart.
#[test]
fn files_are_replaced_atomically_in_one_place() {
    let bad = offenders(
        &["crates/1-foundation/platform/"],
        &[".persist(", "NamedTempFile::new_in"],
    );
    assert!(
        bad.is_empty(),
        "ARCHITECTURE: replace files through `platform::write_atomic`; found in: {bad:?}"
    );
}

/// One way to run blocking work from async code: `platform::blocking` (awaited: a panic comes
/// back as an error), `platform::blocking_here` (a WASM call) and `platform::detached` (nobody
/// waits). A raw `spawn_blocking` is how a panic became a request never answered.
#[test]
fn blocking_work_runs_one_way() {
    let bad = offenders(
        &["crates/1-foundation/platform/"],
        &["tokio::task::spawn_blocking", "task::block_in_place"],
    );
    assert!(
        bad.is_empty(),
        "ARCHITECTURE: run blocking work through `platform::blocking`, `blocking_here` or `detached`; found in: {bad:?}"
    );
}

/// Every source path ARCHITECTURE.md names (`` `dir/file.rs` ``) exists, under the workspace
/// or under `src/`: a moved file leaves no pointer to nowhere.
#[test]
fn the_source_files_architecture_names_exist() {
    let arch = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let gone: Vec<&str> = arch
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| s.ends_with(".rs") && s.contains('/') && !s.contains(' '))
        .filter(|s| !root().join(s).exists() && !root().join("src").join(s).exists())
        .collect();
    assert!(
        gone.is_empty(),
        "ARCHITECTURE.md names source files that do not exist: {gone:?}"
    );
}

/// No static holds a table keyed by a path (per-toolbox state lives in the toolbox handle's
/// `state`; locks shared with other processes are file locks). The one left is a fact about
/// the machine, keyed by an executable: which toolchain a cargo is.
#[test]
fn no_static_table_is_keyed_by_a_path() {
    let machine_facts = ["crates/7-making/build/src/toolchain.rs"];
    let keyed_by_path = ["Map<PathBuf", "Map<std::path::PathBuf", "Set<PathBuf"];
    let mut bad = Vec::new();
    for (path, text) in sources() {
        if machine_facts.contains(&path.as_str()) {
            continue;
        }
        let code = code_only(&text);
        for line in code.lines() {
            let l = line.trim_start();
            let declares = l.starts_with("static ") || l.starts_with("pub static ");
            // A table keyed by a path behind a type alias counts too.
            let table = declares || l.starts_with("type ");
            if table && keyed_by_path.iter().any(|k| l.contains(k)) {
                bad.push(format!("{path}: {}", l.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "ARCHITECTURE (state belongs to what it describes): keep per-toolbox state in `Toolbox::state`, not in a static keyed by path; found: {bad:?}"
    );
}

/// What shows a tool's text or files to the model or to another agent reads the toolbox
/// through `trust::View` (held tools withheld), never through the index: the guide, the
/// resources, the skills extension and the skills export name no `Index` and call no
/// `.index()`. (tests/it/held.rs checks every reader over MCP.)
#[test]
fn readers_of_tools_go_through_the_view() {
    let readers = [
        "crates/6-core/guide/src/",
        "crates/8-surfaces/mcp/src/resources.rs",
        "crates/8-surfaces/mcp/src/skills.rs",
        "crates/7-making/share/src/skills",
    ];
    let bad = scan(
        |p| readers.iter().any(|r| p.starts_with(r)),
        &["Index", ".index()", "index::Entry", "trust::standing"],
    );
    assert!(
        bad.is_empty(),
        "ARCHITECTURE (held content reaches no one): read tools through `trust::View`; found: {bad:?}"
    );
    // The check sees what it must.
    assert!(
        scan(
            |p| p == "crates/8-surfaces/mcp/src/handler.rs",
            &[".index()"]
        )
        .len()
            == 1,
        "the scan reads the sources"
    );
}

/// A call's origin (a stored tool, a staged candidate, scratch code) is said by its entry
/// point (`index::Callee`) and read by every gate and runner: no code decides it by comparing
/// a directory with `tools/<name>` or a directory's last name with the tool's name (issue
/// 42: five such guesses, three different tests, once decided the trust gate).
#[test]
fn no_path_decides_a_calls_origin() {
    let comparison = |l: &str| l.contains("==") || l.contains("!=");
    let guesses = |l: &str| {
        l.contains("tools_dir()")
            || l.contains("toolbox_root(")
            || (l.contains("file_name()")
                && ["m.name", "manifest.name", "name.as_str()"]
                    .iter()
                    .any(|n| l.contains(n)))
    };
    let bad: Vec<String> = sources()
        .into_iter()
        // The sandbox compares an executable's file name with the interpreter's (no tool).
        .filter(|(p, _)| !p.starts_with("crates/4-execution/sandbox/"))
        .flat_map(|(p, t)| {
            code_only(&t)
                .lines()
                .enumerate()
                .filter(|(_, l)| comparison(l) && guesses(l))
                .map(|(i, l)| format!("{p}:{}: {}", i + 1, l.trim()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        bad.is_empty(),
        "ARCHITECTURE: a call's origin comes from its entry point (index::Callee), never a path; found: {bad:?}"
    );
    // And the gates take it: trust, approval and the runners' warm processes.
    let all: String = sources().into_iter().map(|(_, t)| t).collect();
    for needle in [
        "pub fn require_trusted(\n    tb: &Toolbox,\n    origin: crate::index::Origin,",
        "pub async fn admit(\n    gate: &Gate<'_>,\n    origin: Origin,",
        "pub origin: Origin,",
    ] {
        assert!(
            all.contains(needle),
            "the gates read the origin: {needle:?}"
        );
    }
}

/// One bridge from a library error to what the CLI prints (`UserError::of`: the cause chain,
/// and a `hint:` line only when there is a hint), not a copy per command (issue 42: eleven,
/// five of which printed an empty `hint:`).
#[test]
fn the_cli_bridges_errors_in_one_place() {
    let bad = scan(
        |p| p.starts_with("src/cli/") && p != "src/cli/output.rs",
        &[
            "hint: e.hint()",
            "e.hint().unwrap_or_default()",
            "Hint::hint(e).unwrap_or_default()",
            "Hint::hint(&e).unwrap_or_default()",
        ],
    );
    assert!(
        bad.is_empty(),
        "ARCHITECTURE: the CLI's errors go through UserError::of; found in: {bad:?}"
    );
}

/// A crate with no `unsafe` code says so: `#![forbid(unsafe_code)]` keeps it that way (the
/// ones that need it — platform calls, the sandbox, mapped tables — are the only ones without).
#[test]
fn crates_without_unsafe_forbid_it() {
    let all = sources();
    let mut missing = Vec::new();
    let roots = crates()
        .into_iter()
        .map(|c| {
            (
                format!("{}/src/", crate_rel(&c)),
                format!("{}/src/lib.rs", crate_rel(&c)),
            )
        })
        .chain([("src/".to_string(), "src/lib.rs".to_string())]);
    for (dir, lib) in roots {
        let code: String = all
            .iter()
            .filter(|(p, _)| p.starts_with(&dir))
            .map(|(_, t)| code_only(t))
            .collect();
        let uses_unsafe = ["unsafe {", "unsafe fn", "unsafe impl", "unsafe extern"]
            .iter()
            .any(|n| code.contains(n));
        let text = &all.iter().find(|(p, _)| *p == lib).expect("lib.rs").1;
        if !uses_unsafe && !text.contains("#![forbid(unsafe_code)]") {
            missing.push(lib);
        }
    }
    assert!(
        missing.is_empty(),
        "a crate without unsafe code forbids it: {missing:?}"
    );
}

/// The workspace crates' direct dependencies on each other, as `cargo metadata` says (normal
/// dependencies; names without the `toolsmith-` prefix).
fn metadata_edges() -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
    let short = |n: &str| n.strip_prefix("toolsmith-").map(str::to_string);
    let packages = v["packages"].as_array().expect("packages");
    let ours: std::collections::BTreeSet<String> = packages
        .iter()
        .filter_map(|p| short(p["name"].as_str()?))
        .collect();
    packages
        .iter()
        .filter_map(|p| {
            let name = short(p["name"].as_str()?)?;
            let deps = p["dependencies"]
                .as_array()?
                .iter()
                .filter(|d| d["kind"].is_null())
                .filter_map(|d| short(d["name"].as_str()?))
                .filter(|d| ours.contains(d))
                .collect();
            Some((name, deps))
        })
        .collect()
}

/// ARCHITECTURE.md's tier picture is the workspace: every crate under the tier folder it is in,
/// with exactly its direct dependencies on other crates (`cargo metadata`); no dependency goes
/// up a tier; and the longest chain is the one the text gives (issue 42: it was 15).
#[test]
fn the_tier_picture_is_the_workspace() {
    use std::collections::{BTreeMap, BTreeSet};
    let arch = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let block = arch
        .split("```\ncrates/\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the tier picture (a block starting with `crates/`)");
    let mut pictured: BTreeMap<String, (String, BTreeSet<String>)> = BTreeMap::new();
    let mut tier = String::new();
    for line in block.lines() {
        if line.starts_with(|c: char| c.is_ascii_digit()) {
            tier = line.split_whitespace().next().unwrap_or("").to_string();
        } else if let Some(rest) = line.strip_prefix("  ") {
            let (name, deps) = rest.split_once("──▶").unwrap_or((rest, ""));
            pictured.insert(
                name.trim().to_string(),
                (
                    tier.clone(),
                    deps.split_whitespace().map(str::to_string).collect(),
                ),
            );
        }
    }
    let on_disk: BTreeMap<String, String> = tiered().into_iter().map(|(t, c)| (c, t)).collect();
    let edges = metadata_edges();
    let mut wrong = Vec::new();
    for (name, deps) in edges.iter().filter(|(n, _)| *n != "toolsmith") {
        match pictured.get(name) {
            None => wrong.push(format!("{name}: not in the picture")),
            Some((t, d)) => {
                if on_disk.get(name) != Some(t) {
                    wrong.push(format!(
                        "{name}: pictured in {t}, is in {:?}",
                        on_disk.get(name)
                    ));
                }
                if d != deps {
                    wrong.push(format!("{name}: pictured ──▶ {d:?}, cargo says {deps:?}"));
                }
            }
        }
    }
    for name in pictured.keys() {
        if !edges.contains_key(name) {
            wrong.push(format!("{name}: pictured, but no such crate"));
        }
    }
    assert!(
        wrong.is_empty(),
        "ARCHITECTURE.md's tier picture:\n{}",
        wrong.join("\n")
    );
    // No edge goes up: a tier's number is at least its dependencies'.
    let rank = |c: &str| on_disk.get(c).cloned().unwrap_or_default();
    let up: Vec<String> = edges
        .iter()
        .filter(|(n, _)| *n != "toolsmith")
        .flat_map(|(n, ds)| {
            ds.iter()
                .filter(|d| rank(d) > rank(n))
                .map(move |d| format!("{n} ({}) ──▶ {d} ({})", rank(n), rank(d)))
        })
        .collect();
    assert!(up.is_empty(), "dependencies that go up a tier: {up:?}");
    // The longest chain, as the text says it.
    fn longest(
        n: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        memo: &mut BTreeMap<String, Vec<String>>,
    ) -> Vec<String> {
        if let Some(c) = memo.get(n) {
            return c.clone();
        }
        let mut best = vec![n.to_string()];
        for d in edges.get(n).into_iter().flatten() {
            let mut c = vec![n.to_string()];
            c.extend(longest(d, edges, memo));
            if c.len() > best.len() {
                best = c;
            }
        }
        memo.insert(n.to_string(), best.clone());
        best
    }
    let mut memo = BTreeMap::new();
    let chain = longest("mcp", &edges, &mut memo);
    let said = format!("{} crates, `{}`", chain.len(), chain.join(" → "));
    assert!(
        arch.replace('\n', " ").contains(&said),
        "ARCHITECTURE.md should give the longest chain as: {said}"
    );
    assert!(chain.len() <= 9, "the tower grew back: {said}");
}

#[test]
fn a_tools_requests_are_told_apart_by_type_not_by_method_name() {
    // The script protocol's method names are parsed in one place (call::host::ToolRequest,
    // memory::MemoryOp); no host routes by comparing one.
    let names = [
        "\"tools/call\"",
        "\"resources/read\"",
        "\"elicitation/create\"",
        "\"sampling/createMessage\"",
        "\"memory/",
    ];
    let routes = |l: &str| {
        ["=>", "==", "!=", "starts_with("]
            .iter()
            .any(|r| l.contains(r))
    };
    let bad: Vec<String> = sources()
        .into_iter()
        .filter(|(p, _)| {
            p != "crates/4-execution/call/src/host.rs" && p != "crates/3-storage/memory/src/lib.rs"
        })
        .flat_map(|(p, t)| {
            code_only(&t)
                .lines()
                .enumerate()
                .filter(|(_, l)| names.iter().any(|n| l.contains(n)) && routes(l))
                .map(|(i, l)| format!("{p}:{}: {}", i + 1, l.trim()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        bad.is_empty(),
        "ARCHITECTURE: a tool's request is parsed once into call::host::ToolRequest; found routing by name: {bad:?}"
    );
    let host = std::fs::read_to_string(root().join("crates/4-execution/call/src/host.rs"))
        .expect("runner's host");
    assert!(
        host.contains("pub enum ToolRequest"),
        "the request enum is where the trait is"
    );
}
