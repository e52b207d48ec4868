//! The command line as a person uses it: data on stdout, errors on stderr with a hint, exit codes.

use crate::common;
use common::*;
use std::path::Path;
use std::process::{Command, Output};

fn toolsmith(toolbox: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(toolbox)
        .args(args)
        .env("TOOLSMITH_CACHE", toolbox.parent().unwrap().join("cache"))
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn example_box() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("box");
    let o = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(["init", "--example"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("7 tool(s)"), "{}", stdout(&o));
    (tmp, dir)
}

#[test]
fn init_new_list_show_search_log_as_a_person_would() {
    let (_tmp, tb) = example_box();
    assert_clean(&tb);
    for lang in ["python", "node", "ruby", "bash", "perl", "php", "rust"] {
        let name = format!("my_{lang}");
        let o = toolsmith(
            &tb,
            &[
                "new",
                &name,
                "--lang",
                lang,
                "-d",
                &format!("A {lang} tool"),
            ],
        );
        assert!(o.status.success(), "{lang}: {}", stderr(&o));
        assert_clean(&tb);
        assert!(
            git(&tb, &["log", "-1", "--format=%B"]).contains(&format!("add {name}: A {lang} tool"))
        );
    }
    let o = toolsmith(&tb, &["--json", "list"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let names: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"my_python") && names.contains(&"word_count") && names.len() == 14,
        "{names:?}"
    );
    let o = toolsmith(&tb, &["list", "--kind", "wasm"]);
    assert!(
        stdout(&o).contains("word_count")
            && stdout(&o).contains("my_rust")
            && !stdout(&o).contains("slugify")
    );

    let o = toolsmith(&tb, &["show", "slugify"]);
    assert!(
        stdout(&o).contains("main.js") && stdout(&o).contains("kind = \"script\""),
        "{}",
        stdout(&o)
    );
    let o = toolsmith(&tb, &["--json", "search", "roman", "numeral"]);
    let hits: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(hits[0]["name"], "roman_numeral");
    let o = toolsmith(&tb, &["log", "my_bash"]);
    assert_eq!(stdout(&o).lines().count(), 1, "{}", stdout(&o));
    assert!(stdout(&o).contains("add my_bash: A bash tool"));
    // The new script tools run with their template's example.
    let o = toolsmith(
        &tb,
        &["call", "my_python", "--args", r#"{"text": "world"}"#],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("Hello, world!"), "{}", stdout(&o));
    let o = toolsmith(&tb, &["delete", "my_php"]);
    assert!(o.status.success());
    assert_clean(&tb);
}

#[test]
fn errors_go_to_stderr_with_a_hint_and_a_nonzero_exit() {
    let (_tmp, tb) = example_box();
    let cases: &[&[&str]] = &[
        &["new", "../evil", "--lang", "python"],
        &["new", "word_count", "--lang", "python"],
        &["show", "nope"],
        &["call", "nope"],
        &["call", "word_count", "--args", "not json"],
        &["call", "word_count", "--args", r#"{"wrong": 1}"#],
        &["delete", "nope"],
        &["log", "a/b"],
    ];
    for args in cases {
        let o = toolsmith(&tb, args);
        assert!(!o.status.success(), "{args:?} should fail");
        assert_eq!(stdout(&o), "", "{args:?}: nothing on stdout");
        let err = stderr(&o);
        assert!(
            err.starts_with("error: ") && err.contains("\nhint: "),
            "{args:?}: {err}"
        );
    }
    assert!(!tb.parent().unwrap().join("evil").exists());
    assert_clean(&tb);
    let o = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(["--toolbox", "/nonexistent/box", "list"])
        .output()
        .unwrap();
    assert!(stderr(&o).contains("toolsmith init"), "{}", stderr(&o));
    // A configuration variable that does not parse stops the binary at start, named, with a hint.
    for (var, value) in [
        ("TOOLSMITH_SPARES", "abc"),
        ("TOOLSMITH_ALLOW_UNSANDBOXED", "perhaps"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .args(["--toolbox", tb.to_str().unwrap(), "list"])
            .env(var, value)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{var}");
        let err = stderr(&o);
        assert!(
            err.starts_with(&format!("error: {var}=\"{value}\" is not"))
                && err.contains(&format!("\nhint: set {var}")),
            "{err}"
        );
    }
}

#[test]
fn lint_points_at_the_right_line_of_a_broken_file() {
    let (_tmp, tb) = example_box();
    let o = toolsmith(&tb, &["lint"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A hand edit breaks one tool: a wrong type on line 5 of its tool.toml.
    let path = tb.join("tools/slugify/tool.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let line_no = lines.iter().position(|l| l.starts_with("version")).unwrap();
    lines[line_no] = "version = [1, 0]";
    std::fs::write(&path, lines.join("\n")).unwrap();
    let o = toolsmith(&tb, &["lint"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("tools/slugify/tool.toml:{}:", line_no + 1)),
        "{err}"
    );
    assert!(err.contains("hint:"), "{err}");
    // The other tools still list, the broken one is shown as broken.
    let o = toolsmith(&tb, &["list"]);
    assert!(
        stdout(&o).contains("word_count") && stdout(&o).contains("slugify  BROKEN"),
        "{}",
        stdout(&o)
    );
    let o = toolsmith(&tb, &["--json", "lint"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["errors"], 1);
    assert_eq!(v["diagnostics"][0]["line"], line_no + 1);
}

#[test]
fn the_default_toolbox_is_created_and_seeded_on_first_use() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let o = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(["--json", "list"])
        .env("TOOLSMITH_HOME", &home)
        .env_remove("TOOLSMITH_TOOLBOX")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["tools"].as_array().unwrap().len(), 7);
    assert_clean(&home);
    // XDG data dir when TOOLSMITH_HOME is unset.
    let o = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(["list"])
        .env_remove("TOOLSMITH_HOME")
        .env("XDG_DATA_HOME", tmp.path().join("xdg"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        tmp.path()
            .join("xdg/toolsmith/tools/word_count/tool.toml")
            .is_file()
    );
}

/// `doctor` reports what this machine has, one check per line with hints, and fails (exit 1)
/// when no sandbox can run scripts — without creating or changing the toolbox.
#[test]
fn doctor_tells_what_works_and_what_is_missing() {
    let (_tmp, dir) = example_box();
    let run = |extra: &[(&str, &str)]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
        c.arg("--toolbox").arg(&dir).args(["doctor", "--json"]);
        c.env("GIT_COMMITTER_NAME", "Doc Tor")
            .env("GIT_COMMITTER_EMAIL", "doc@example.com");
        for (k, v) in extra {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let head = |d: &Path| git(d, &["rev-parse", "HEAD"]);
    let before = head(&dir);

    let o = run(&[]);
    let checks: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let find = |v: &serde_json::Value, name: &str| -> Vec<serde_json::Value> {
        v.as_array()
            .unwrap()
            .iter()
            .filter(|c| c["check"] == name)
            .cloned()
            .collect()
    };
    let tb = &find(&checks, "toolbox")[0];
    assert_eq!(tb["status"], "ok", "{tb}");
    assert!(tb["detail"].as_str().unwrap().contains("7 tools"), "{tb}");
    let id = &find(&checks, "git identity")[0];
    assert!(
        id["detail"]
            .as_str()
            .unwrap()
            .contains("Doc Tor <doc@example.com>"),
        "{id}"
    );
    // The real interpreter behind PATH is named (python3 is in the suite's requirements).
    let py = &find(&checks, "python")[0];
    assert_eq!(py["status"], "ok", "{py}");
    assert!(
        std::path::Path::new(py["detail"].as_str().unwrap().split(' ').next().unwrap())
            .is_absolute()
    );
    assert!(find(&checks, "sandbox").iter().any(|c| c["status"] == "ok"));
    assert!(o.status.success(), "{}", stderr(&o));

    // No sandbox mechanism: a failing check with the fix and the opt-out.
    let o = run(&[
        ("TOOLSMITH_BWRAP", "/nonexistent"),
        ("TOOLSMITH_SANDBOX_NO_FALLBACK", "1"),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let checks: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let fail = find(&checks, "sandbox")
        .into_iter()
        .find(|c| c["status"] == "fail")
        .expect("a failing sandbox check");
    assert!(
        fail["detail"].as_str().unwrap().contains("are refused"),
        "{fail}"
    );
    assert!(
        fail["hint"]
            .as_str()
            .unwrap()
            .contains("--allow-unsandboxed"),
        "{fail}"
    );

    // The component tool chains scripts/setup.sh installs are found, with their versions; a
    // missing one is a warning that says how to install it.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let py = root.join("target/componentize-py/bin/componentize-py");
    let js = root.join("target/componentize-js/node_modules/.bin/componentize-js");
    let o = run(&[
        ("TOOLSMITH_COMPONENTIZE_PY", py.to_str().unwrap()),
        ("TOOLSMITH_COMPONENTIZE_JS", js.to_str().unwrap()),
    ]);
    let checks: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for (id, version) in [
        ("python/component", "componentize-py 0.25.1"),
        ("javascript/component", "componentize-js 0.23.0"),
    ] {
        let c = &find(&checks, id)[0];
        assert_eq!(c["status"], "ok", "{c}");
        assert!(c["detail"].as_str().unwrap().contains(version), "{c}");
    }
    let o = run(&[("TOOLSMITH_COMPONENTIZE_JS", "/nonexistent/componentize-js")]);
    let checks: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = &find(&checks, "javascript/component")[0];
    assert_eq!(c["status"], "warn", "{c}");
    assert!(
        c["hint"]
            .as_str()
            .unwrap()
            .contains("@bytecodealliance/componentize-js"),
        "{c}"
    );

    // A missing interpreter is a warning with how to install it; PATH without php.
    let o = run(&[("PATH", "/nonexistent-bin")]);
    let checks: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let php = &find(&checks, "php")[0];
    assert_eq!(php["status"], "warn", "{php}");
    assert!(php["hint"].as_str().unwrap().contains("php"), "{php}");

    assert_eq!(head(&dir), before, "doctor wrote nothing");
    assert_eq!(git(&dir, &["status", "--porcelain"]), "");
}
