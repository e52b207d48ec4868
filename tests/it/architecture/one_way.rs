//! One way to do each thing, and the gates read a call's origin and type, never a path or a name.

use super::*;

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
