//! An AI's first attempt works (issue 11), through the official MCP Python SDK: the natural
//! first script in every language, truthful errors, strict and consistent meta-tools, Agent
//! Skills imported as what they are, and a tool list without a cliff.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use toolsmith::error::Hint;

/// The real Agent Skills fixtures: `shared/fixtures/agent-skills` beside the repository (CI
/// copies `shared/` next to its clone), found by walking up from the crate; or
/// `TOOLSMITH_SKILL_FIXTURES`. A missing fixture fails the test, it never skips it.
pub fn skill_fixtures() -> PathBuf {
    if let Some(p) = std::env::var_os("TOOLSMITH_SKILL_FIXTURES") {
        return PathBuf::from(p);
    }
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .map(|a| a.join("shared/fixtures/agent-skills"))
        .find(|p| p.join("brand-guidelines/SKILL.md").is_file())
        .unwrap_or_else(|| {
            panic!(
                "the Agent Skills fixtures are missing: expected shared/fixtures/agent-skills beside the repository (looked upwards from {}); copy shared/ next to the clone or set TOOLSMITH_SKILL_FIXTURES",
                here.display()
            )
        })
}

/// Run one scenario of tests/py/first_attempt.py against `toolsmith serve` on `toolbox`.
fn scenario(toolbox: &Path, name: &str, extra: &[&str]) -> Value {
    let base = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(python())
        .arg(base.join("tests/py/first_attempt.py"))
        .args([
            "--toolsmith",
            env!("CARGO_BIN_EXE_toolsmith"),
            "--scenario",
            name,
        ])
        .arg("--toolbox")
        .arg(toolbox)
        .args(extra)
        // Share the wasm test cache so the Rust build reuses compiled crates.
        .env("TOOLSMITH_CACHE", base.join("target/wasm-test-cache"))
        // The person's approvals: beside the toolbox, never the real ones.
        .env(
            "TOOLSMITH_DATA",
            toolbox.parent().unwrap_or(toolbox).join("personal"),
        )
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "first_attempt.py {name} failed:\nstdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("a JSON summary")
}

#[test]
fn a_naive_agent_succeeds_on_the_first_try() {
    let (_tmp, tb) = toolbox();
    let s = scenario(tb.root(), "naive", &[]);
    for lang in ["python", "node", "bash", "ruby", "perl", "php"] {
        let t = &s["naive"][lang];
        assert_eq!(t["protocol"], "plain", "{lang}: {t}");
        assert_eq!(t["protocol_from"], "detected", "{lang}: {t}");
        assert_eq!(t["get_tool_protocol"], "plain", "{lang}: {t}");
        assert_eq!(t["result"]["sum"], 42, "{lang}: {t}");
    }
    assert_eq!(s["helper_protocol"], "jsonrpc", "{s}");
    assert_eq!(s["mean"]["mean"], 1.5, "{s}");
    assert_clean(tb.root());
}

#[test]
fn a_naive_agent_succeeds_in_the_2026_protocol_era_too() {
    let (_tmp, tb) = toolbox();
    let s = scenario(tb.root(), "naive", &["--mode", "auto"]);
    for lang in ["python", "node", "bash", "ruby", "perl", "php"] {
        assert_eq!(s["naive"][lang]["protocol"], "plain", "{lang}: {s}");
        assert_eq!(s["naive"][lang]["result"]["sum"], 42, "{lang}: {s}");
    }
    assert_eq!(s["mean"]["mean"], 1.5, "{s}");
}

#[test]
fn failures_say_what_really_went_wrong() {
    let (_tmp, tb) = toolbox();
    let s = scenario(tb.root(), "errors", &[]);
    let mismatch = s["mismatch"]["text"].as_str().unwrap();
    assert_eq!(s["mismatch"]["is_error"], true, "{s}");
    assert!(mismatch.contains("protocol mismatch"), "{mismatch}");
    assert!(mismatch.contains("protocol \"plain\""), "{mismatch}");
    assert!(!mismatch.contains("timeout_ms"), "{mismatch}");
    assert!(
        !mismatch.contains("docs/"),
        "hints point where a client can read: {mismatch}"
    );
    let stderr = s["stderr"]["text"].as_str().unwrap();
    assert!(
        stderr.contains("exit code 3") && stderr.contains("the input has no field `city`"),
        "{stderr}"
    );
    let stdout = s["stdout"]["text"].as_str().unwrap();
    assert!(
        stdout.contains("exit code 2") && stdout.contains("usage: give a positive number"),
        "{stdout}"
    );
}

#[test]
fn examples_compare_values_and_unknown_keys_are_refused() {
    let (_tmp, tb) = toolbox();
    let before = commit_count(tb.root());
    let s = scenario(tb.root(), "strict", &[]);
    let typo = s["unknown_example_key"]["text"].as_str().unwrap();
    assert_eq!(s["unknown_example_key"]["is_error"], true, "{s}");
    assert!(
        typo.contains("expected_output") && typo.contains("did you mean `output`"),
        "{typo}"
    );
    let field = s["unknown_field"]["text"].as_str().unwrap();
    assert!(
        field.contains("timeout_ms") && field.contains("limits"),
        "{field}"
    );
    let wrong = s["wrong_example"]["text"].as_str().unwrap();
    assert_eq!(s["wrong_example"]["is_error"], true, "{s}");
    assert!(wrong.contains("1 of 2 examples failed"), "{wrong}");
    assert!(wrong.contains("$.items[1]: expected 4, got 3"), "{wrong}");
    assert_eq!(commit_count(tb.root()), before, "nothing was committed");
}

#[test]
fn meta_tool_results_conform_to_their_typed_output_schemas() {
    let (_tmp, tb) = toolbox();
    let s = scenario(tb.root(), "typed", &[]);
    // Output schemas type the main keys of the read meta-tools' results (and the SDK checked
    // every result of the scenario's calls against them: a mismatch fails the script).
    for (tool, keys) in [
        ("list_tools", vec!["tools", "total"]),
        ("search_tools", vec!["ranking", "results"]),
        ("memory", vec!["found", "keys", "value"]),
        ("tool_history", vec!["versions"]),
        ("diff_tool", vec!["files", "unified"]),
    ] {
        assert_eq!(s["typed"][tool], json!(keys), "{tool}: {s}");
    }
    assert_eq!(
        s["typed"]["call_tool"],
        json!([]),
        "a tool's own result: any object"
    );
    assert_eq!(
        s["typed_keys"]["memory"].as_array().map(Vec::len),
        Some(5),
        "{s}"
    );
}

#[test]
fn results_are_consistent() {
    let (_tmp, tb) = toolbox();
    let s = scenario(tb.root(), "consistent", &[]);
    let logs = s["logs_before_result"].as_array().unwrap();
    assert_eq!(
        logs.len(),
        5,
        "every log line arrives before the result: {s}"
    );
    assert_eq!(
        s["execute_code"]["text"], s["execute_code"]["structured"],
        "{s}"
    );
    assert_eq!(s["execute_code"]["structured"]["result"], 10, "{s}");
    for (name, same) in s["text_equals_structured"].as_object().unwrap() {
        assert_eq!(same, true, "{name}: text and structuredContent differ");
    }
    let unknown = s["unknown"]["text"].as_str().unwrap();
    assert_eq!(s["unknown"]["is_error"], true, "{s}");
    assert!(unknown.contains("did you mean `add_python`"), "{unknown}");
    let deleted = s["deleted"]["text"].as_str().unwrap();
    assert_eq!(s["deleted"]["is_error"], true, "{s}");
    assert!(
        deleted.contains("deleted") && deleted.contains("restore_tool"),
        "{deleted}"
    );
    assert_eq!(s["memory_ghost"]["is_error"], true, "{s}");
    assert!(
        s["memory_ghost"]["text"]
            .as_str()
            .unwrap()
            .contains("ghost"),
        "{s}"
    );
    assert_eq!(s["memory_alias"]["is_error"], false, "{s}");
    assert_eq!(s["commit_notifications"], 0, "{s}");
}

/// A host for library-level registrations: it records progress messages.
#[derive(Default)]
struct Quiet(std::sync::Mutex<Vec<String>>);

impl toolsmith::runner::script::Host for Quiet {
    fn log(&self, _: &str, message: &str) {
        self.0.lock().unwrap().push(message.to_string());
    }
    fn progress(&self, _: f64, _: Option<f64>, _: Option<String>) {}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editing_code_reuses_unchanged_dependencies() {
    use toolsmith::register::{ScriptSpec, register};
    let (_tmp, tb) = toolbox();
    let root = tb.root().to_path_buf();
    let app = toolsmith::app::App::new(tb, toolsmith::config::Config::from_env().expect("config"));
    let actor = toolsmith::toolbox::Actor::from("test");
    let spec = |name: &str, source: &str, deps: Value| -> ScriptSpec {
        serde_json::from_value(serde_json::json!({
            "name": name, "description": "Dependency reuse", "source": source, "dependencies": deps,
        }))
        .unwrap()
    };
    let cases = [
        (
            "py_six",
            serde_json::json!({"language": "python"}),
            "import json, six\nprint(json.dumps({'v': six.__version__}))\n",
            serde_json::json!({"pip": ["six==1.16.0"]}),
            "py",
        ),
        (
            "js_pad",
            serde_json::json!({"language": "node"}),
            "const p = require('left-pad');\nconsole.log(JSON.stringify({v: p('1', 3, '0')}));\n",
            serde_json::json!({"npm": ["left-pad@1.3.0"]}),
            "node",
        ),
    ];
    for (name, lang, source, deps, sub) in cases {
        let mut s = spec(name, source, deps.clone());
        s.language = lang["language"].as_str().map(str::to_string);
        let progress = std::sync::Mutex::new(Vec::new());
        let record = |_: f64, _: f64, m: String| progress.lock().unwrap().push(m);
        let first = register(&app, &s, &actor, &Quiet::default(), &record)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let env = env_of(&root, name, sub).expect("an environment");
        std::fs::write(env.join("sentinel"), "kept").unwrap();
        let lock_before = std::fs::read(root.join("tools").join(name).join(if sub == "py" {
            "requirements.lock"
        } else {
            "package-lock.json"
        }))
        .unwrap();
        // A comment edit: the same dependencies.
        s.source = format!("// edited\n{source}").replace(
            "// edited",
            if sub == "py" { "# edited" } else { "// edited" },
        );
        progress.lock().unwrap().clear();
        let second = register(&app, &s, &actor, &Quiet::default(), &record)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            first.commit.is_some() && second.commit.is_some(),
            "{name}: two commits"
        );
        assert!(
            env.join("sentinel").exists(),
            "{name}: the environment was rebuilt although its dependencies did not change"
        );
        assert!(
            progress
                .lock()
                .unwrap()
                .iter()
                .any(|m| m.contains("reusing the environment")),
            "{name}: {:?}",
            progress.lock().unwrap()
        );
        let lock_after = std::fs::read(root.join("tools").join(name).join(if sub == "py" {
            "requirements.lock"
        } else {
            "package-lock.json"
        }))
        .unwrap();
        assert_eq!(lock_before, lock_after, "{name}: the lockfile stays");
        let out = app
            .call(
                name,
                serde_json::json!({}),
                &toolsmith::runner::script::NoHost,
            )
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(out.structured.is_some(), "{name}: {}", out.text);
        // A changed dependency installs afresh.
        if sub == "py" {
            let s2 = spec(name, source, serde_json::json!({"pip": ["six==1.15.0"]}));
            let mut s2 = s2;
            s2.language = Some("python".into());
            register(&app, &s2, &actor, &Quiet::default(), &|_, _, _| {})
                .await
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let new = env_of(&root, name, sub).unwrap();
            assert!(
                new != env && !new.join("sentinel").exists(),
                "a new requirement installs a new environment"
            );
            // The environment of the version committed before is not rewritten: a process
            // of that version (maybe approved for secrets) never sees the new packages.
            assert!(
                env.join("sentinel").exists(),
                "the previous environment is left as it was"
            );
        }
    }
    assert_clean(&root);
}

#[test]
fn the_tool_list_ranks_instead_of_falling_off_a_cliff() {
    let (_tmp, tb) = toolbox();
    let root = tb.root().to_path_buf();
    for i in 0..205 {
        let name = format!("t{i:03}");
        let dir = root.join("tools").join(&name);
        std::fs::create_dir_all(&dir).unwrap();
        for f in script_files(&name, &format!("Test tool number {i}")) {
            let mut text = String::from_utf8(f.contents.clone()).unwrap();
            if name == "t150" && f.path == "tool.toml" {
                text = text.replace("tags = [\"test\"]", "tags = [\"test\"]\npinned = true");
            }
            std::fs::write(dir.join(&f.path), text).unwrap();
        }
    }
    git(&root, &["add", "-A"]);
    common::commit(&root, "205 tools");
    let s = scenario(&root, "cap", &[]);
    let before: Vec<&str> = s["listed_before"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(before.len(), 200, "the cap, not zero: {before:?}");
    assert_eq!(before[0], "t150", "pinned first: {before:?}");
    let after: Vec<&str> = s["listed_after"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(after.len(), 200);
    assert_eq!(
        &after[..3],
        &["t150", "t203", "t204"],
        "then the recently used: {after:?}"
    );
    let guide = s["guide"].as_str().unwrap();
    assert!(
        guide.contains("search_tools") && guide.contains("call_tool") && guide.contains("200"),
        "{guide}"
    );
    assert!(
        // 20 meta-tools within 12,000 bytes as sent (11,959 with typed output schemas):
        // one-line descriptions, input schemas sent without `additionalProperties: false`
        // (still checked closed), the main result keys of 14 typed (the rest, and the
        // details, are in the guide's Meta-tools section).
        s["meta_bytes"].as_u64().unwrap() <= 12_000,
        "meta-tool definitions: {} bytes",
        s["meta_bytes"]
    );
}

/// Copy a directory tree (regular files only).
fn copy_tree(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from)
        .into_iter()
        .filter_map(Result::ok)
    {
        let rel = e.path().strip_prefix(from).unwrap();
        let dest = to.join(rel);
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else if e.file_type().is_file() {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

#[test]
fn agent_skills_are_imported_as_what_they_are() {
    let (tmp, tb) = toolbox();
    // A repository holding the four real skills and one broken skill.
    let repo = tmp.path().join("skills-repo");
    copy_tree(&skill_fixtures(), &repo);
    std::fs::create_dir_all(repo.join("no-description")).unwrap();
    std::fs::write(
        repo.join("no-description/SKILL.md"),
        "---\nname: no-description\n---\n# Nothing\n",
    )
    .unwrap();
    // And a skill with two scripts (and a helper they share).
    let ports = repo.join("port-tools/scripts");
    std::fs::create_dir_all(&ports).unwrap();
    std::fs::write(
        repo.join("port-tools/SKILL.md"),
        "---\nname: port-tools\ndescription: Check TCP ports\n---\n# Port tools\n\nRun scripts/check_port.py PORT.\n",
    )
    .unwrap();
    std::fs::write(ports.join("check_port.py"), CHECK_PORT).unwrap();
    std::fs::write(ports.join("portcheck.py"), PORTCHECK).unwrap();
    std::fs::write(
        ports.join("wait_port.py"),
        "#!/usr/bin/env python3\n\"\"\"Wait for a port.\"\"\"\nimport argparse\nfrom portcheck import is_open\np = argparse.ArgumentParser()\np.add_argument('port', type=int)\nprint(is_open('127.0.0.1', p.parse_args().port, 1))\n",
    )
    .unwrap();
    git(&repo, &["init", "-q"]);
    commit_all(&repo, "skills");
    let s = scenario(tb.root(), "skills", &["--skills", repo.to_str().unwrap()]);
    assert_eq!(
        s["imported"],
        serde_json::json!([
            "brand-guidelines",
            "internal-comms",
            "port-tools-check_port",
            "port-tools-wait_port",
            "slack-gif-creator",
            "webapp-testing"
        ]),
        "{s}"
    );
    // The skill with two scripts: its instructions once (as the skill and under each tool's
    // name), each tool callable through MCP with its own arguments.
    let resources = s["resources"].as_array().unwrap();
    let port_uris: Vec<&str> = resources
        .iter()
        .filter_map(|r| r.as_str())
        .filter(|r| r.contains("port-tools"))
        .collect();
    // (and once more through the skills extension, as the skill's SKILL.md)
    assert_eq!(
        port_uris,
        [
            "skill://port-tools/SKILL.md",
            "toolsmith://skills/port-tools"
        ],
        "{s}"
    );
    assert!(
        s["port_resource"]
            .as_str()
            .unwrap()
            .starts_with("# Port tools"),
        "{s}"
    );
    let guide = s["guide"].as_str().unwrap();
    assert_eq!(guide.matches("### Skill `port-tools`").count(), 1);
    assert_eq!(guide.matches("Run scripts/check_port.py PORT.").count(), 1);
    assert_eq!(s["port_call"]["is_error"], false, "{s}");
    assert_eq!(
        s["port_call"]["text"].as_str().unwrap().trim(),
        "127.0.0.1:9 closed",
        "{s}"
    );
    // The folder import took what it could and said what it refused, and why.
    let refused = s["refused"].as_array().unwrap();
    assert_eq!(refused.len(), 1, "{s}");
    assert_eq!(refused[0]["path"], "no-description");
    assert!(
        refused[0]["reason"]
            .as_str()
            .unwrap()
            .contains("description"),
        "{s}"
    );
    // Instructions: a resource per skill and part of the guide, instruction-only skills included.
    for name in [
        "brand-guidelines",
        "internal-comms",
        "slack-gif-creator",
        "webapp-testing",
    ] {
        let uri = format!("toolsmith://skills/{name}");
        assert!(
            s["resources"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r == &serde_json::json!(uri)),
            "{uri}: {s}"
        );
        assert!(
            s["guide"]
                .as_str()
                .unwrap()
                .contains(&format!("### Skill `{name}`")),
            "{name}"
        );
    }
    assert!(
        s["brand_resource"]
            .as_str()
            .unwrap()
            .contains("# Anthropic Brand Styling"),
        "{s}"
    );
    assert_eq!(s["brand_call"]["is_error"], false, "{s}");
    assert!(
        s["brand_call"]["text"]
            .as_str()
            .unwrap()
            .contains("Anthropic Brand Styling"),
        "{s}"
    );
    assert_eq!(s["slack_call"]["is_error"], false, "{s}");
    // The package skill: its requirements are reported.
    let slack_notes = s["notes"]["slack-gif-creator"].to_string();
    assert!(
        slack_notes.contains("pillow") && slack_notes.contains("numpy"),
        "{slack_notes}"
    );
    // The script skill: a schema that maps arguments to with_server.py's command line, and a
    // call that really runs it.
    let props = &s["webapp_schema"]["properties"];
    for p in ["servers", "ports", "timeout", "command", "argv"] {
        assert!(props.get(p).is_some(), "webapp-testing lacks {p}: {props}");
    }
    assert_eq!(props["ports"]["items"]["type"], "integer", "{props}");
    let call = &s["webapp_call"];
    assert_eq!(call["is_error"], false, "{call}");
    assert!(
        call["text"].as_str().unwrap().contains("probe ok"),
        "{call}"
    );
    let missing = &s["webapp_missing"];
    assert_eq!(missing["is_error"], true, "{missing}");
    // The script's own message (on its stdout) reaches the caller.
    assert!(
        missing["text"]
            .as_str()
            .unwrap()
            .contains("Number of --server and --port arguments must match"),
        "{missing}"
    );
    // get_tool is a summary by default, the files on request.
    assert_eq!(s["get_small_has_text"], false, "{s}");
    assert_eq!(s["get_full_has_text"], true, "{s}");
    assert_clean(tb.root());
}

#[test]
fn the_cli_refuses_a_misspelled_example_key_too() {
    let (tmp, tb) = toolbox();
    let code = tmp.path().join("add.py");
    std::fs::write(
        &code,
        "import json, sys\nprint(json.dumps(json.load(sys.stdin)))\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(tb.root())
        .args(["register", "echo_cli", "--description", "Echo", "--code"])
        .arg(&code)
        .args([
            "--example",
            r#"{"input": {"a": 1}, "expected_output": {"a": 1}}"#,
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("expected_output") && stderr.contains("`output`"),
        "{stderr}"
    );
    // Without the typo the same script registers as a plain tool.
    let out = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(tb.root())
        .args([
            "register",
            "echo_cli",
            "--description",
            "Echo",
            "--json",
            "--code",
        ])
        .arg(&code)
        .args(["--example", r#"{"input": {"a": 1}, "output": {"a": 1.0}}"#])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["protocol"], "plain", "{v}");
}

const CHECK_PORT: &str = r#"#!/usr/bin/env python3
"""Tell whether a TCP port answers."""
import argparse
import sys
from portcheck import is_open


def main():
    parser = argparse.ArgumentParser(description='Tell whether a TCP port answers')
    parser.add_argument('port', type=int, help='The port')
    parser.add_argument('--host', default='127.0.0.1', help='The host')
    parser.add_argument('--timeout', type=float, default=1.0, help='Seconds to wait')
    args = parser.parse_args()
    state = 'open' if is_open(args.host, args.port, args.timeout) else 'closed'
    print(f"{args.host}:{args.port} {state}")


if __name__ == '__main__':
    main()
"#;

const PORTCHECK: &str = r#""""Shared by the skill's scripts: does a TCP port answer?"""
import socket


def is_open(host, port, timeout):
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False
"#;

const SCREENSHOT: &str = r#"#!/usr/bin/env python3
"""Save a screenshot of a page with Playwright."""
import argparse


def main():
    parser = argparse.ArgumentParser(description='Save a screenshot of a page')
    parser.add_argument('--url', required=True, help='The page')
    parser.add_argument('--out', default='page.png', help='Where to save it')
    parser.add_argument('--full-page', action='store_true', help='The whole page')
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(headless=True)
        page = browser.new_page()
        page.goto(args.url)
        page.screenshot(path=args.out, full_page=args.full_page)
        browser.close()


if __name__ == '__main__':
    main()
"#;

fn commit_all(repo: &Path, message: &str) -> String {
    git(repo, &["add", "-A"]);
    git(
        repo,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            message,
        ],
    );
    git(repo, &["rev-parse", "HEAD"]).trim().to_string()
}

fn tool_toml(tb: &toolsmith::toolbox::Toolbox, name: &str) -> toml::Table {
    let text = std::fs::read_to_string(tb.tools_dir().join(name).join("tool.toml")).unwrap();
    toml::from_str(&text).unwrap()
}

/// The real webapp-testing skill with two more scripts (and a helper they may import): each
/// callable script is a tool with its own schema, dependencies and files, all imported in one
/// commit, listed once in the guide, updated together.
#[tokio::test(flavor = "multi_thread")]
async fn a_skill_with_several_scripts_is_a_tool_per_script() {
    use toolsmith::share::{self, ImportRequest};
    let (tmp, tb) = toolbox();
    let repo = tmp.path().join("skills-repo");
    copy_tree(
        &skill_fixtures().join("webapp-testing"),
        &repo.join("webapp-plus"),
    );
    let scripts = repo.join("webapp-plus/scripts");
    std::fs::write(scripts.join("check_port.py"), CHECK_PORT).unwrap();
    std::fs::write(scripts.join("portcheck.py"), PORTCHECK).unwrap();
    std::fs::write(scripts.join("screenshot.py"), SCREENSHOT).unwrap();
    std::fs::create_dir_all(repo.join("broken")).unwrap();
    std::fs::write(
        repo.join("broken/SKILL.md"),
        "---\nname: broken\n---\n# No description\n",
    )
    .unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    let first = commit_all(&repo, "skills");

    let before = commit_count(tb.root());
    let req = |path: Option<&str>, name: Option<&str>| ImportRequest {
        source: repo.display().to_string(),
        reference: None,
        path: path.map(str::to_string),
        name: name.map(str::to_string),
        gist_base: None,
    };
    let out = share::import_tool(&tb, &req(None, None), "test").unwrap();
    let names: Vec<&str> = out.tools.iter().map(|t| t.name.as_str()).collect();
    let (port, shot, server) = (
        "webapp-testing-check_port",
        "webapp-testing-screenshot",
        "webapp-testing-with_server",
    );
    assert_eq!(names, [port, shot, server], "{out:?}");
    // The folder import took what it could and said what it refused, and why.
    assert_eq!(out.refused.len(), 1, "{out:?}");
    assert_eq!(out.refused[0].path, "broken");
    assert!(out.refused[0].reason.contains("description"), "{out:?}");
    assert!(out.refused[0].hint.is_some(), "{out:?}");
    // One commit for the whole skill, naming each tool; the work tree clean.
    assert_eq!(commit_count(tb.root()), before + 1);
    let msg = git(tb.root(), &["log", "-1", "--format=%B"]);
    for n in [port, shot, server] {
        assert!(msg.contains(&format!("Tool: {n}\n")), "{msg}");
    }
    assert_clean(tb.root());

    // Each tool: its own schema, its own dependencies, its script and the skill's shared files.
    let index = toolsmith::index::Index::build(tb.root());
    let schema =
        |n: &str| serde_json::Value::Object((*index.tool(n).unwrap().input_schema).clone());
    let p = schema(port);
    assert_eq!(p["properties"]["port"]["type"], "integer", "{p}");
    assert_eq!(p["properties"]["timeout"]["type"], "number", "{p}");
    assert_eq!(p["required"], serde_json::json!(["port"]), "{p}");
    assert!(p["properties"].get("servers").is_none(), "{p}");
    let s = schema(shot);
    assert_eq!(s["properties"]["full_page"]["type"], "boolean", "{s}");
    assert_eq!(s["required"], serde_json::json!(["url"]), "{s}");
    let w = schema(server);
    assert_eq!(w["properties"]["ports"]["items"]["type"], "integer", "{w}");
    assert!(w["properties"].get("url").is_none(), "{w}");
    let pip = |n: &str| {
        tool_toml(&tb, n)
            .get("dependencies")
            .and_then(|d| d.get("pip"))
            .cloned()
    };
    assert_eq!(
        pip(shot),
        Some(toml::Value::Array(vec!["playwright".into()]))
    );
    assert_eq!(pip(port), None);
    assert_eq!(pip(server), None);
    let has = |n: &str, f: &str| tb.tools_dir().join(n).join(f).is_file();
    for n in [port, shot, server] {
        assert!(has(n, "SKILL.md") && has(n, "scripts/portcheck.py"), "{n}");
        let origin = tool_toml(&tb, n)["origin"].clone();
        assert_eq!(origin["path"].as_str(), Some("webapp-plus"), "{n}");
        assert_eq!(origin["commit"].as_str(), Some(first.as_str()), "{n}");
    }
    assert_eq!(
        tool_toml(&tb, port)["origin"]["script"].as_str(),
        Some("scripts/check_port.py")
    );
    assert!(has(port, "scripts/check_port.py") && !has(port, "scripts/screenshot.py"));
    assert!(has(shot, "scripts/screenshot.py") && !has(shot, "scripts/with_server.py"));
    let description = &index.tool(port).unwrap().manifest.description;
    assert!(
        description.starts_with("Tell whether a TCP port answers")
            && description.contains("Agent Skill `webapp-testing`"),
        "{description}"
    );

    // The instructions: none while the import is held (it came from elsewhere); once a person
    // trusts its tools, one skill in the guide and the resources, served under every tool.
    let view = |index: toolsmith::index::Index| {
        toolsmith::trust::View::new(&tb, std::sync::Arc::new(index))
    };
    assert!(toolsmith::guide::skills(&view(index.clone())).is_empty());
    for n in [port, shot, server] {
        toolsmith::trust::trust(&tb, n).unwrap();
    }
    let index = view(index);
    let skills = toolsmith::guide::skills(&index);
    assert_eq!(skills.len(), 1, "{skills:?}");
    assert_eq!(skills[0].name, "webapp-testing");
    assert_eq!(skills[0].tools, [port, shot, server]);
    assert!(skills[0].body.starts_with("# Web Application Testing"));
    for n in ["webapp-testing", port, shot, server] {
        assert!(skills[0].serves(n), "{n}");
    }
    let guide = toolsmith::guide::render(&index, &Default::default());
    assert_eq!(guide.matches("# Web Application Testing").count(), 1);
    assert_eq!(guide.matches("### Skill `webapp-testing`").count(), 1);

    // Calls: check_port with real arguments (its helper imported beside it), with_server's own
    // refusal of mismatched arguments reaching the caller.
    let app = toolsmith::app::App::new(
        tb.clone(),
        toolsmith::config::Config::from_env().expect("config"),
    );
    for n in [port, server] {
        toolsmith::trust::trust(&tb, n).unwrap();
    }
    let host = toolsmith::runner::script::NoHost;
    let r = app
        .call(port, serde_json::json!({"port": 9, "timeout": 0.5}), &host)
        .await
        .expect("check_port runs");
    assert_eq!(r.text.trim(), "127.0.0.1:9 closed", "{r:?}");
    let e = app
        .call(
            server,
            serde_json::json!({"servers": ["true", "true"], "ports": [1], "command": ["true"]}),
            &host,
        )
        .await
        .expect_err("mismatched counts fail");
    assert!(
        e.to_string()
            .contains("Number of --server and --port arguments must match"),
        "{e}"
    );

    // A name given to the import is the base of the tools' names.
    let (_tmp2, other) = toolbox();
    let out = share::import_tool(&other, &req(Some("webapp-plus"), Some("web")), "test").unwrap();
    let names: Vec<&str> = out.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["web-check_port", "web-screenshot", "web-with_server"]
    );
    assert_clean(other.root());

    // Here, a person edits one tool of the skill with plain git.
    let edited = tb.tools_dir().join(shot).join("scripts/screenshot.py");
    let mut text = std::fs::read_to_string(&edited).unwrap();
    text.push_str("# edited here\n");
    std::fs::write(&edited, text).unwrap();
    commit_all(tb.root(), "edit screenshot.py");

    // Upstream: check_port gains an option, a script is added.
    let changed = CHECK_PORT.replace(
        "    args = parser.parse_args()",
        "    parser.add_argument('--verbose', action='store_true', help='Say more')\n    args = parser.parse_args()",
    );
    std::fs::write(scripts.join("check_port.py"), changed).unwrap();
    std::fs::write(
        scripts.join("wait_port.py"),
        "#!/usr/bin/env python3\nimport sys\nprint(sys.argv)\n",
    )
    .unwrap();
    let second = commit_all(&repo, "check_port --verbose, wait_port");
    // Review from any tool of the skill: all its tools, nothing changed yet.
    let count = commit_count(tb.root());
    let u = share::update_tool(&tb, server, false, None, "test", None).unwrap();
    assert!(u.up_to_date && !u.applied && !u.local_changes, "{u:?}");
    let others: Vec<(&str, bool)> = u
        .skill_tools
        .iter()
        .map(|o| (o.name.as_str(), o.up_to_date))
        .collect();
    assert_eq!(others, [(port, false), (shot, false)], "{u:?}");
    let local: Vec<bool> = u.skill_tools.iter().map(|o| o.local_changes).collect();
    assert_eq!(local, [false, true], "only the edited tool: {u:?}");
    assert!(
        u.skill_tools[0]
            .changed_fields
            .iter()
            .any(|c| c.field == "input_schema"),
        "{u:?}"
    );
    assert_eq!(u.new_scripts, ["scripts/wait_port.py"]);
    assert!(u.hint.as_deref().unwrap_or("").contains(port), "{u:?}");
    assert_eq!(commit_count(tb.root()), count);
    // The CLI shows the same review, tool by tool.
    let cli = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(tb.root())
        .args(["update", server])
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&cli.stdout),
        String::from_utf8_lossy(&cli.stderr),
    );
    assert!(cli.status.success(), "{stderr}");
    assert!(
        stdout.contains(&format!("== {port}"))
            && stdout.contains("CHANGED input_schema")
            && stdout.contains(&format!("--apply --commit {second}")),
        "{stdout}"
    );
    assert!(
        stderr.contains("new script scripts/wait_port.py"),
        "{stderr}"
    );
    assert_eq!(commit_count(tb.root()), count);
    // Apply: one commit for the three tools, each pinned to the new commit.
    let u = share::update_tool(&tb, port, true, Some(&u.to_commit), "test", None).unwrap();
    assert!(
        u.applied && u.skill_tools.iter().all(|o| o.applied),
        "{u:?}"
    );
    assert_eq!(commit_count(tb.root()), count + 1);
    let msg = git(tb.root(), &["log", "-1", "--format=%B"]);
    for n in [port, shot, server] {
        assert!(msg.contains(&format!("Tool: {n}\n")), "{msg}");
        assert_eq!(
            tool_toml(&tb, n)["origin"]["commit"].as_str(),
            Some(second.as_str()),
            "{n}"
        );
    }
    assert!(msg.contains(&format!("Source-Commit: {second}")), "{msg}");
    assert_clean(tb.root());
    let index = toolsmith::index::Index::build(tb.root());
    assert!(
        index.tool(port).unwrap().input_schema["properties"]
            .get("verbose")
            .is_some()
    );
    toolsmith::trust::trust(&tb, port).unwrap();
    let app = toolsmith::app::App::new(
        tb.clone(),
        toolsmith::config::Config::from_env().expect("config"),
    );
    let r = app
        .call(port, serde_json::json!({"port": 9, "timeout": 0.2}), &host)
        .await
        .expect("the updated check_port runs");
    assert_eq!(r.text.trim(), "127.0.0.1:9 closed", "{r:?}");

    // A skill imported when it had one script keeps its tool when it gains another: that
    // tool still runs its script, and the new one is reported.
    let (_tmp3, single) = toolbox();
    let solo = tmp.path().join("solo");
    copy_tree(&skill_fixtures().join("webapp-testing"), &solo);
    git(&solo, &["init", "-q", "-b", "main"]);
    commit_all(&solo, "one script");
    let source = ImportRequest {
        source: solo.display().to_string(),
        ..Default::default()
    };
    let out = share::import_tool(&single, &source, "test").unwrap();
    assert_eq!(out.tools[0].name, "webapp-testing");
    assert!(
        tool_toml(&single, "webapp-testing")["origin"]
            .get("script")
            .is_none()
    );
    std::fs::write(solo.join("scripts/check_port.py"), CHECK_PORT).unwrap();
    std::fs::write(solo.join("scripts/portcheck.py"), PORTCHECK).unwrap();
    commit_all(&solo, "two scripts");
    let u = share::update_tool(&single, "webapp-testing", true, None, "test", None).unwrap();
    assert!(u.applied && u.skill_tools.is_empty(), "{u:?}");
    assert_eq!(u.new_scripts, ["scripts/check_port.py"], "{u:?}");
    assert_eq!(
        tool_toml(&single, "webapp-testing")["origin"]["script"].as_str(),
        Some("scripts/with_server.py")
    );
    let w = toolsmith::index::Index::build(single.root());
    assert!(
        w.tool("webapp-testing").unwrap().input_schema["properties"]
            .get("servers")
            .is_some()
    );
    assert_clean(single.root());

    // A script gone upstream: its tool is left alone, and cannot be updated by itself.
    std::fs::remove_file(scripts.join("screenshot.py")).unwrap();
    commit_all(&repo, "no screenshot");
    let u = share::update_tool(&tb, port, false, None, "test", None).unwrap();
    assert_eq!(u.left_alone.len(), 1, "{u:?}");
    assert!(u.left_alone[0].starts_with(shot), "{u:?}");
    let e = share::update_tool(&tb, shot, false, None, "test", None).unwrap_err();
    assert!(
        e.to_string().contains("scripts/screenshot.py") && e.hint().is_some(),
        "{e}"
    );
}
