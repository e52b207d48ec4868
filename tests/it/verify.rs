//! Verify before running: a poisoned compiled-code cache entry never runs, and a tool whose
//! files differ from what was committed (an edited script, a swapped .wasm with its hash) is
//! never run silently — flagged in the result, listed by lint and the guide, and refused
//! under `[policy] uncommitted = "refuse"`.

use crate::common;
use common::*;
use serde_json::json;
use std::path::{Path, PathBuf};
use toolsmith::app::{App, CallError};
use toolsmith::error::Hint;
use toolsmith::runner::script::NoHost;
use toolsmith::toolbox::{FileSpec, Toolbox};

/// A valid WASI module whose `_start` does nothing (prints nothing).
const SILENT_WASM: &[u8] = &[
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
    0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type: () -> ()
    0x03, 0x02, 0x01, 0x00, // one function of type 0
    0x07, 0x0a, 0x01, 0x06, b'_', b's', b't', b'a', b'r', b't', 0x00, 0x00, // export _start
    0x0a, 0x04, 0x01, 0x02, 0x00, 0x0b, // body: no locals, end
];

fn cache() -> PathBuf {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| tempfile::tempdir().expect("tempdir"));
    dir.path().to_path_buf()
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn call(
    tb: &Toolbox,
    name: &str,
    args: serde_json::Value,
) -> Result<toolsmith::runner::CallOutput, CallError> {
    let app = App::new(
        tb.clone(),
        toolsmith::config::Config {
            cache_dir: cache(),
            ..toolsmith::config::Config::from_env().expect("config")
        },
    );
    rt().block_on(app.call(name, args, &NoHost))
}

fn seeded() -> (tempfile::TempDir, Toolbox) {
    let tmp = tempfile::tempdir().unwrap();
    let tb = Toolbox::init(
        &tmp.path().join("box"),
        &toolsmith::toolbox::seed_files(),
        "test",
    )
    .unwrap();
    (tmp, tb)
}

fn silent_manifest(name: &str) -> String {
    format!(
        "format = 1\nname = \"{name}\"\ndescription = \"Prints nothing\"\nkind = \"wasm\"\n\n[run]\nartifact = \"tool.wasm\"\n\n[hashes]\nartifact = \"{}\"\n\n[input_schema]\ntype = \"object\"\n",
        toolsmith::hashing::sha256_bytes(SILENT_WASM)
    )
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| e.path().to_path_buf())
        .filter(|p| p.extension().is_some_and(|e| e == "cwasm"))
        .collect();
    v.sort();
    v
}

#[test]
fn a_poisoned_compiled_module_is_never_run() {
    let cache = cache();
    let (_tmp, tb) = seeded();
    tb.write_tool(
        "silent",
        &[
            FileSpec::new("tool.toml", silent_manifest("silent")),
            FileSpec::new("tool.wasm", SILENT_WASM),
        ],
        "t",
    )
    .unwrap();
    let out = call(&tb, "word_count", json!({"text": "one two three"})).unwrap();
    assert_eq!(out.structured.as_ref().unwrap()["words"], 3);
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    let out = call(&tb, "silent", json!({})).unwrap();
    assert_eq!(out.text, "");
    let word_sha = toolsmith::hashing::sha256_file(&tb.tools_dir().join("word_count/tool.wasm"))
        .unwrap()
        .trim_start_matches("sha256:")
        .to_string();
    let silent_sha = toolsmith::hashing::sha256_bytes(SILENT_WASM)
        .trim_start_matches("sha256:")
        .to_string();
    let all = entries(&cache);
    let find = |sha: &str| {
        all.iter()
            .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(sha))
            .cloned()
            .unwrap_or_else(|| {
                panic!(
                    "a cache entry for {sha} in {all:?} under {}",
                    cache.display()
                )
            })
    };
    let (word_entry, silent_entry) = (find(&word_sha), find(&silent_sha));

    // Another tool's compiled module copied over word_count's entry.
    std::fs::copy(&silent_entry, &word_entry).unwrap();
    let poisoned = std::fs::read(&word_entry).unwrap();
    let out = call(&tb, "word_count", json!({"text": "one two three four"})).unwrap();
    assert_eq!(
        out.structured.as_ref().map(|v| v["words"].clone()),
        Some(json!(4)),
        "word_count's own code ran, not the copied module: {out:?}"
    );
    assert_ne!(
        std::fs::read(&word_entry).unwrap(),
        poisoned,
        "the entry was recompiled"
    );

    // Both the code and its MAC copied over: the MAC binds the code to its own artifact.
    let mac = |p: &std::path::Path| std::path::PathBuf::from(format!("{}.mac", p.display()));
    std::fs::copy(&silent_entry, &word_entry).unwrap();
    std::fs::copy(mac(&silent_entry), mac(&word_entry)).unwrap();
    let out = call(
        &tb,
        "word_count",
        json!({"text": "five words are right here"}),
    )
    .unwrap();
    assert_eq!(
        out.structured.as_ref().map(|v| v["words"].clone()),
        Some(json!(5)),
        "word_count's own code ran, not the copied module and MAC: {out:?}"
    );
    assert_ne!(std::fs::read(&word_entry).unwrap(), poisoned);

    // Bytes edited inside an entry (its MAC no longer holds): recompiled too.
    let mut forged = std::fs::read(&word_entry).unwrap();
    let n = forged.len();
    forged[n - 10] ^= 0xff;
    std::fs::write(&word_entry, &forged).unwrap();
    let out = call(&tb, "word_count", json!({"text": "a b"})).unwrap();
    assert_eq!(out.structured.as_ref().unwrap()["words"], 2);
    assert_ne!(std::fs::read(&word_entry).unwrap(), forged);
}

#[test]
fn an_edited_script_never_runs_silently() {
    let (_tmp, tb) = toolbox();
    let mut files = script_files("echo", "Echoes");
    // Record the source hash, as register_script does.
    let scratch = tempfile::tempdir().unwrap();
    toolsmith::toolbox::write_files(scratch.path(), &files).unwrap();
    let source = toolsmith::hashing::source_hash(scratch.path(), None).unwrap();
    files[0] = FileSpec::new(
        "tool.toml",
        format!(
            "{}\n[hashes]\nsource = \"{source}\"\n",
            script_manifest("echo", "Echoes")
        ),
    );
    tb.write_tool("echo", &files, "t").unwrap();
    let out = call(&tb, "echo", json!({"text": "hi"})).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);

    // A hand edit, not committed: it runs (hand editing is supported), but says so.
    let main = tb.tools_dir().join("echo/main.py");
    std::fs::write(
        &main,
        "import json, sys\nprint(json.dumps({\"edited\": True}))\n",
    )
    .unwrap();
    let out = call(&tb, "echo", json!({"text": "hi"})).unwrap();
    assert_eq!(out.structured, Some(json!({"edited": true})));
    let w = out.warnings.join("\n");
    assert!(
        w.contains("uncommitted changes") && w.contains("main.py"),
        "{w}"
    );
    assert!(w.contains("not matching the hash"), "{w}");

    // lint and the guide list it.
    let lint = std::process::Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(tb.root())
        .args(["--json", "lint"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&lint.stdout).unwrap();
    assert_eq!(report["uncommitted"][0]["name"], "echo", "{report}");
    let view = toolsmith::trust::View::new(
        &tb,
        std::sync::Arc::new(toolsmith::index::Index::build(tb.root())),
    );
    let guide = toolsmith::guide::render_for(&view, &tb, &Default::default());
    assert!(
        guide.contains("Tools running uncommitted changes") && guide.contains("`echo`"),
        "{guide}"
    );

    // The toolbox setting refuses such calls.
    std::fs::write(
        tb.root().join("toolsmith.toml"),
        "[policy]\nuncommitted = \"refuse\"\n",
    )
    .unwrap();
    let err = call(&tb, "echo", json!({"text": "hi"})).expect_err("refused");
    assert!(matches!(err, CallError::Uncommitted { .. }), "{err:?}");
    assert!(err.to_string().contains("main.py"), "{err}");
    assert!(
        err.hint()
            .unwrap()
            .contains("git checkout HEAD -- tools/echo")
    );

    // Committed by a person, the change still differs from the recorded hash: refused.
    git(tb.root(), &["add", "tools/echo", "toolsmith.toml"]);
    git(tb.root(), &["commit", "-qm", "hand edit"]);
    let err = call(&tb, "echo", json!({"text": "hi"})).expect_err("hash mismatch refused");
    assert!(err.to_string().contains("not matching the hash"), "{err}");
    // Back to the committed, recorded version: runs without a word.
    std::fs::write(&main, &files[1].contents).unwrap();
    git(tb.root(), &["commit", "-qam", "back"]);
    let out = call(&tb, "echo", json!({"text": "hi"})).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    // The branch moved back by hand (neither HEAD's text nor the index changes): the files
    // now differ from HEAD again, and the earlier verdict is not reused.
    git(tb.root(), &["reset", "-q", "--soft", "HEAD~1"]);
    let err = call(&tb, "echo", json!({"text": "hi"})).expect_err("differs from the new HEAD");
    assert!(matches!(err, CallError::Uncommitted { .. }), "{err:?}");
}

#[test]
fn a_wasm_swapped_with_its_hash_in_an_uncommitted_manifest_is_flagged_or_refused() {
    let (_tmp, tb) = seeded();
    let dir = tb.tools_dir().join("word_count");
    std::fs::write(dir.join("tool.wasm"), SILENT_WASM).unwrap();
    let manifest = std::fs::read_to_string(dir.join("tool.toml")).unwrap();
    let manifest = if manifest.contains("[hashes]") {
        let re_start = manifest.find("[hashes]").unwrap();
        let (head, tail) = manifest.split_at(re_start);
        let tail: String = tail
            .lines()
            .map(|l| {
                if l.trim_start().starts_with("artifact") {
                    format!(
                        "artifact = \"{}\"",
                        toolsmith::hashing::sha256_bytes(SILENT_WASM)
                    )
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        format!("{head}{tail}\n")
    } else {
        panic!("word_count records its artifact hash")
    };
    std::fs::write(dir.join("tool.toml"), manifest).unwrap();
    let out = call(&tb, "word_count", json!({"text": "x"}));
    match out {
        Ok(o) => {
            let w = o.warnings.join("\n");
            assert!(w.contains("tool.wasm") && w.contains("tool.toml"), "{w}");
        }
        // Its output no longer matches the output schema: still, never silent.
        Err(e) => panic!("the swapped module should run flagged under the default policy: {e}"),
    }
    std::fs::write(
        tb.root().join("toolsmith.toml"),
        "[policy]\nuncommitted = \"refuse\"\n",
    )
    .unwrap();
    let err = call(&tb, "word_count", json!({"text": "x"})).expect_err("refused");
    assert!(matches!(err, CallError::Uncommitted { .. }), "{err:?}");
}

/// Unchanged files are known from git's stat data without being read again; an edit that keeps
/// the size and puts the mtime back is still found (its ctime moved), after a first call that
/// saw the tool clean.
#[test]
fn an_edit_that_keeps_size_and_mtime_is_still_found() {
    let (_tmp, tb) = toolbox();
    tb.write_tool("echo", &script_files("echo", "Echoes"), "t")
        .unwrap();
    let out = call(&tb, "echo", json!({"text": "hi"})).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);

    let main = tb.tools_dir().join("echo/main.py");
    let before = std::fs::read_to_string(&main).unwrap();
    let mtime = std::fs::metadata(&main).and_then(|m| m.modified()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let edited = before.replace("echo", "ECHO");
    assert_eq!(edited.len(), before.len());
    std::fs::write(&main, &edited).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&main)
        .and_then(|f| f.set_modified(mtime))
        .unwrap();
    let out = call(&tb, "echo", json!({"text": "hi"})).unwrap();
    assert_eq!(out.structured, Some(json!({"ECHO": {"text": "hi"}})));
    let w = out.warnings.join("\n");
    assert!(
        w.contains("uncommitted changes") && w.contains("main.py (modified)"),
        "{w}"
    );
}
