//! A person decides what a tool may do (issue 12), through the command line: a tool asking
//! for more than the defaults is not run until approved (`pending`, `approve`, `deny`), an
//! approval binds to the exact content (a change asks again, with the diff), secrets reach only
//! approved tools and are redacted from output and errors, credentials never reach a commit,
//! and the audit log records each step. The MCP path (elicitation) is in tests/py/approvals.py.

use crate::common;

use common::{assert_clean, commit_count, git, python};
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const VALUE: &str = "tok-7f3a9c1e5b2d4680";

struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    personal: PathBuf,
    work: PathBuf,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("box");
        let personal = tmp.path().join("personal");
        let work = tmp.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let e = Env {
            root,
            personal,
            work,
            _tmp: tmp,
        };
        let out = e.run(&["init", e.root.to_str().unwrap()], None);
        assert!(out.status.success(), "{out:?}");
        e
    }

    fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolsmith"));
        cmd.args(["--toolbox", self.root.to_str().unwrap()])
            .args(args)
            .env("TOOLSMITH_DATA", &self.personal)
            .env("TOOLSMITH_CACHE", self._tmp.path().join("cache"))
            .env("TOOLSMITH_ROOTS", self._tmp.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("the CLI runs");
        let mut input = child.stdin.take().unwrap();
        if let Some(s) = stdin {
            input.write_all(s.as_bytes()).unwrap();
        }
        drop(input);
        child.wait_with_output().unwrap()
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut a = vec!["--json"];
        a.extend(args);
        let out = self.run(&a, None);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"))
    }

    /// Register the script `name` with `code` and extra register_script fields.
    fn register(&self, name: &str, code: &str, extra: Value) -> Output {
        let file = self.work.join(format!("{name}.py"));
        std::fs::write(&file, code).unwrap();
        let mut spec =
            json!({"description": "A test tool", "language": "python", "protocol": "plain"});
        for (k, v) in extra.as_object().unwrap() {
            spec[k] = v.clone();
        }
        let spec_file = self.work.join(format!("{name}.json"));
        std::fs::write(&spec_file, spec.to_string()).unwrap();
        self.run(
            &[
                "register",
                name,
                "--spec",
                spec_file.to_str().unwrap(),
                "--code",
                file.to_str().unwrap(),
            ],
            None,
        )
    }

    fn call(&self, name: &str, args: Value) -> Output {
        self.run(&["--json", "call", name, "--args", &args.to_string()], None)
    }

    fn audit(&self, tool: &str) -> Vec<Value> {
        self.json(&["audit", "--tool", tool])
            .as_array()
            .unwrap()
            .clone()
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Reads the secret and prints it (or, with `fail`, writes it to stderr and exits 1).
const ECHO_TOKEN: &str = "import base64, json, os, sys, urllib.parse\nargs = json.load(sys.stdin)\ntok = os.environ.get('DEMO_TOKEN')\nif args.get('encode'):\n    t = tok.encode()\n    print(json.dumps({'b64': base64.b64encode(b'x:' + t).decode(), 'b64url': base64.urlsafe_b64encode(b'ab' + t).decode(), 'hex': t.hex(), 'HEX': t.hex().upper(), 'url': urllib.parse.quote('q=' + tok + '&'), 'rev': tok[::-1], 'split': tok[:7] + '\\n' + tok[7:]}))\n    sys.exit(0)\nif args.get('fail'):\n    sys.stderr.write('bad token ' + str(tok) + '\\n')\n    sys.exit(1)\nprint(json.dumps({'token': tok, 'len': len(tok or '')}))\n";

#[test]
fn a_person_approves_on_the_command_line_and_secrets_stay_out_of_output() {
    let e = Env::new();
    let out = e.register(
        "tok",
        ECHO_TOKEN,
        json!({"secrets": {"DEMO_TOKEN": "a demo API token"}, "capabilities": {"network": true}}),
    );
    assert!(out.status.success(), "{}", stderr(&out));

    // Pending: not run, and the error says exactly what waits and how to approve it.
    let out = e.call("tok", json!({}));
    let err = stderr(&out);
    assert!(!out.status.success());
    for part in [
        "was not run",
        "network access",
        "the secret DEMO_TOKEN",
        "toolsmith approve tok",
    ] {
        assert!(err.contains(part), "{part}: {err}");
    }
    let pending = e.json(&["pending"]);
    assert_eq!(pending[0]["name"], "tok", "{pending}");
    assert_eq!(
        pending[0]["requested"],
        json!(["network access to any host", "the secret DEMO_TOKEN"])
    );

    // Approved, but the secret is not set: an actionable error naming the command.
    assert!(e.run(&["approve", "tok"], None).status.success());
    assert_eq!(e.json(&["pending"]), json!([]));
    let out = e.call("tok", json!({}));
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("toolsmith secret set DEMO_TOKEN"),
        "{}",
        stderr(&out)
    );

    // Set (from stdin here; a terminal reads it without echo): the tool sees the value, the
    // result shows its name only, and so does an error that prints it.
    let set = e.run(
        &["secret", "set", "DEMO_TOKEN"],
        Some(&format!("{VALUE}\n")),
    );
    assert!(set.status.success(), "{}", stderr(&set));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(e.personal.join("secrets.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let out = e.call("tok", json!({}));
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["structured"]["token"], "[secret DEMO_TOKEN]", "{v}");
    assert_eq!(
        v["structured"]["len"],
        VALUE.len(),
        "the tool saw the real value"
    );
    assert!(!stdout(&out).contains(VALUE) && !stderr(&out).contains(VALUE));
    let out = e.call("tok", json!({"fail": true}));
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("bad token [secret DEMO_TOKEN]"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains(VALUE));
    // Encoded, reversed or split across lines, the value is still redacted (issue 25).
    let out = e.call("tok", json!({"encode": true}));
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    for k in ["b64", "b64url", "hex", "HEX", "url", "rev", "split"] {
        assert!(
            v["structured"][k]
                .as_str()
                .is_some_and(|s| s.contains("[secret DEMO_TOKEN]")),
            "{k}: {v}"
        );
    }
    let list = e.json(&["secret", "list"]);
    assert_eq!(
        list,
        json!([{"name": "DEMO_TOKEN", "set": true, "tools": ["tok"]}])
    );
    assert!(!stdout(&e.run(&["secret", "list"], None)).contains(VALUE));

    // A tool without the approval (or without the declaration) never sees the value.
    let out = e.register("peek", ECHO_TOKEN, json!({}));
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&e.call("peek", json!({})).stdout).unwrap();
    assert_eq!(v["structured"]["token"], Value::Null, "{v}");

    // A changed tool asks again, and `pending` shows the diff since the approved version.
    let changed = ECHO_TOKEN.replace("'len'", "'length'");
    let out = e.register(
        "tok",
        &changed,
        json!({"secrets": {"DEMO_TOKEN": "a demo API token"}, "capabilities": {"network": true}}),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = e.call("tok", json!({}));
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("changed since the version approved"),
        "{}",
        stderr(&out)
    );
    let pending = e.json(&["pending"]);
    let diff = pending[0]["diff"].as_str().unwrap();
    assert!(
        diff.contains("-print(json.dumps({'token': tok, 'len'"),
        "{diff}"
    );
    assert!(
        diff.contains("+print(json.dumps({'token': tok, 'length'"),
        "{diff}"
    );

    // Denied: it runs with the default grants only (no secret), and says so.
    assert!(e.run(&["deny", "tok"], None).status.success());
    let out = e.call("tok", json!({}));
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["structured"]["token"], Value::Null, "{v}");
    assert!(v.to_string().contains("a person denied tok"), "{v}");

    // The audit log: each step, with no secret value anywhere in it.
    let log = e.audit("tok");
    let events: Vec<(String, String)> = log
        .iter()
        .map(|x| {
            (
                x["event"].as_str().unwrap_or("").to_string(),
                x["outcome"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let want = [
        ("call", "pending"),
        ("approved", ""),
        ("call", "pending"),
        ("call", "ok"),
        ("call", "error"),
        ("call", "ok"),
        ("call", "pending"),
        ("denied", ""),
        ("call", "ok"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(events, want, "{log:?}");
    let ok = &log[3];
    assert_eq!(
        ok["grants"],
        json!(["network access to any host", "the secret DEMO_TOKEN"])
    );
    assert!(ok["commit"].as_str().is_some_and(|c| c.len() == 40), "{ok}");
    assert!(ok["bytes_in"].as_u64() == Some(2) && ok["bytes_out"].as_u64() > Some(0));
    assert!(
        log[8].get("grants").is_none(),
        "a denied call used no grant"
    );
    let raw = std::fs::read_to_string(e.personal.join("audit.log")).unwrap();
    assert!(!raw.contains(VALUE));
    let since = e.json(&["audit", "--since", "1h"]);
    assert!(since.as_array().unwrap().len() >= log.len());
    // `secret rm`: gone from the list (still declared by the tool), and the tool stops.
    assert!(
        e.run(&["secret", "rm", "DEMO_TOKEN"], None)
            .status
            .success()
    );
    assert_eq!(
        e.json(&["secret", "list"]),
        json!([{"name": "DEMO_TOKEN", "set": false, "tools": ["tok"]}])
    );
    let out = e.run(&["secret", "rm", "DEMO_TOKEN"], None);
    assert!(!out.status.success() && stderr(&out).contains("hint:"));
    let out = e.run(&["audit", "--since", "yesterday-ish"], None);
    assert!(!out.status.success() && stderr(&out).contains("hint:"));

    // Examples before the commit run with the defaults: a failure says which grants it lacked.
    let out = e.register(
        "needs_tok",
        "import os, sys\nsys.exit(0 if os.environ.get('DEMO_TOKEN') else 3)\n",
        json!({"secrets": {"DEMO_TOKEN": "d"}, "examples": [{"input": {}, "output_text": ""}]}),
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("default grants only: the secret DEMO_TOKEN not granted"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains(VALUE));

    // Approvals and secrets are never in the toolbox.
    assert!(!raw.is_empty());
    assert!(!git(&e.root, &["log", "-p", "--all"]).contains(VALUE));
    assert!(!git(&e.root, &["ls-files"]).contains("secrets"));
    assert_clean(&e.root);
}

#[test]
fn no_approved_path_reaches_the_private_directory() {
    let e = Env::new();
    let wide = e._tmp.path().to_str().unwrap().to_string();
    let out = e.register(
        "snoop",
        "import json\nprint(json.dumps({'ok': True}))\n",
        json!({"capabilities": {"read": [wide]}}),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(e.run(&["approve", "snoop"], None).status.success());
    let out = e.call("snoop", json!({}));
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("would include toolsmith's private directory"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_ai_pasting_a_key_into_source_is_stopped_before_the_commit() {
    let e = Env::new();
    let before = commit_count(&e.root);
    let key = format!("ghp_{}", "Zq3x".repeat(9));
    let code = format!("import json\nTOKEN = '{key}'\nprint(json.dumps({{'ok': True}}))\n");
    let out = e.register("leaky", &code, json!({}));
    let err = stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains("tools/leaky/main.py:2: a GitHub token"),
        "{err}"
    );
    assert!(err.contains("[secrets]"), "{err}");
    assert!(
        !err.contains(&key),
        "the error must not repeat the key: {err}"
    );
    // A stored secret's value pasted into source is stopped too, whatever it looks like.
    let set = e.run(
        &["secret", "set", "PLAIN_KEY"],
        Some("plain-looking-value-42\n"),
    );
    assert!(set.status.success());
    let out = e.register(
        "leaky",
        "import json\nprint(json.dumps({'k': 'plain-looking-value-42'}))\n",
        json!({}),
    );
    assert!(
        stderr(&out).contains("tools/leaky/main.py:2: the value of the secret PLAIN_KEY"),
        "{}",
        stderr(&out)
    );
    assert_eq!(commit_count(&e.root), before, "nothing was committed");
    assert!(!Path::new(&e.root.join("tools/leaky")).exists());
    assert_clean(&e.root);
}

/// tests/py/approvals.py in one protocol era: the SDK's elicitation callback plays the person,
/// who opted the kinds `opt_in` in (`[approvals] elicitation` in their personal config.toml):
/// without it an answer through the client approves nothing (tests/it/console.rs).
fn elicitation_scenario(mode: &str, scenario: &str, opt_in: &str) -> Value {
    let e = Env::new();
    std::fs::create_dir_all(&e.personal).unwrap();
    std::fs::write(
        e.personal.join("config.toml"),
        format!("[approvals]\nelicitation = [{opt_in}]\n"),
    )
    .unwrap();
    let out = Command::new(python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/approvals.py"))
        .args([
            "--toolsmith",
            env!("CARGO_BIN_EXE_toolsmith"),
            "--mode",
            mode,
        ])
        .args(["--scenario", scenario])
        .arg("--toolbox")
        .arg(&e.root)
        .env("TOOLSMITH_DATA", &e.personal)
        .env("TOOLSMITH_CACHE", e._tmp.path().join("cache"))
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "approvals.py --mode {mode}: {}\n{}",
        stdout(&out),
        stderr(&out)
    );
    assert_clean(&e.root);
    serde_json::from_str(stdout(&out).lines().last().unwrap_or("")).expect("a JSON summary")
}

#[test]
fn a_person_answers_the_elicitation_form_in_both_protocol_eras() {
    for mode in ["legacy", "auto"] {
        let s = elicitation_scenario(mode, "form", "\"env\"");
        assert_eq!(s["asked"], 3, "{s}");
        assert_eq!(
            s["decisions"],
            json!([
                ["denied", "elicitation (personal setting)"],
                ["approved once", "elicitation (personal setting)"],
                ["approved", "elicitation (personal setting)"]
            ]),
            "{s}"
        );
        assert_eq!(s["actor_session"], true, "{s}");
        let calls: Vec<&str> = s["calls"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .filter(|c| *c != "pending")
            .collect();
        assert_eq!(calls, ["ok"; 5], "{s}");
        assert_eq!(
            s["calls"].as_array().unwrap().last(),
            Some(&json!("pending")),
            "{s}"
        );
    }
}

#[test]
fn a_missing_secret_is_set_in_the_console_in_a_real_browser() {
    for mode in ["legacy", "auto"] {
        let s = elicitation_scenario(mode, "page", "\"secrets\"");
        assert_eq!(
            s["modes"],
            json!(["form", "url"]),
            "approval form, then the console's page: {s}"
        );
        let url = s["url"].as_str().unwrap();
        assert!(url.ends_with("/secrets#secret-PAGE_TOKEN"), "{url}");
        // The link the client was given opens nothing without the person's session, and a
        // post without it sets nothing.
        assert!(
            s["stranger_text"]
                .as_str()
                .unwrap()
                .contains("Not signed in"),
            "{s}"
        );
        assert_eq!(s["other_origin"], 401, "{s}");
        assert_eq!(s["cross_site"], 401, "{s}");
        if mode == "legacy" {
            // A 2025 session waits for the secret within the call, hears why, and hears it
            // was set.
            assert_eq!(s["offered"].as_array().map(Vec::len), Some(1), "{s}");
            assert_eq!(
                s["completed"], s["offered"],
                "notifications/elicitation/complete names the offered elicitation: {s}"
            );
            assert_eq!(s["waited_note"], true, "{s}");
            // The person set it seconds after the link was accepted: meanwhile the call sent
            // progress notifications saying what it waits for.
            let progress = s["progress"].as_array().unwrap();
            assert!(
                progress.len() >= 2
                    && progress.iter().all(|m| m
                        .as_str()
                        .unwrap()
                        .starts_with("waiting for the person to set the secret PAGE_TOKEN in the toolsmith console")),
                "{s}"
            );
            assert_eq!(
                s["loggers"],
                json!([["tool page_tok", true], ["toolsmith", false]]),
                "a tool's log lines are labelled as the tool's: {s}"
            );
        }
        assert!(
            s["page_text"].as_str().unwrap().contains("PAGE_TOKEN"),
            "{s}"
        );
        assert!(
            s["saved_text"]
                .as_str()
                .unwrap()
                .contains("PAGE_TOKEN is set."),
            "{s}"
        );
        assert_eq!(s["value_shown"], false, "never shown back: {s}");
        assert_eq!(s["set_by"], json!(["PAGE_TOKEN"]), "{s}");
        // The tool saw the value; the result shows only its name.
        assert_eq!(
            s["result"],
            json!({"token": "[secret PAGE_TOKEN]", "len": 20}),
            "{s}"
        );
        assert_eq!(s["value_in_result"], false);
        assert_eq!(s["asked_again"], false, "{s}");
        if mode == "legacy" {
            // Log notifications (2025 sessions) carry the name, never the value.
            assert_eq!(s["log_redacted"], true, "{s}");
        }
        assert_eq!(s["value_in_logs"], false, "{s}");
    }
}
