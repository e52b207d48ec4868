//! Script tools end to end with real interpreters, real pip/npm, real bubblewrap and git as the
//! oracle: registration in six languages, dependencies and lockfiles, host callbacks (memory,
//! log, progress, another tool), limits (timeout, fork bomb, stderr flood), isolation (host
//! secrets, network) and warm workers that crash and recover.

use crate::common;
use common::*;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Mutex;
use toolsmith::app::{App, CallError};
use toolsmith::error::Hint;
use toolsmith::error::{HostCode, HostError};
use toolsmith::register::{self, RegisterError, ScriptSpec};
use toolsmith::runner::RunError;
use toolsmith::runner::script::{Host, ToolRequest};
use toolsmith::toolbox::Actor;

/// A host that records what scripts send and answers `tools/call` through the app.
#[derive(Default)]
struct Recorder<'a> {
    app: Option<&'a App>,
    logs: Mutex<Vec<String>>,
    progress: Mutex<Vec<f64>>,
}

impl Host for Recorder<'_> {
    fn log(&self, _level: &str, message: &str) {
        self.logs.lock().unwrap().push(message.to_string());
    }
    fn progress(&self, p: f64, _: Option<f64>, _: Option<String>) {
        self.progress.lock().unwrap().push(p);
    }
    fn request(&self, request: ToolRequest) -> BoxFuture<'_, Result<Value, HostError>> {
        Box::pin(async move {
            match (request, self.app) {
                (ToolRequest::CallTool { name, arguments }, Some(app)) => {
                    let out = app
                        .call(&name, arguments, &toolsmith::runner::script::NoHost)
                        .await
                        .map_err(|e| HostError::new(HostCode::Refused, e.to_string()))?;
                    Ok(out.structured.unwrap_or(Value::String(out.text)))
                }
                (request, _) => Err(HostError::new(
                    HostCode::MethodNotFound,
                    format!("no {}", request.method()),
                )),
            }
        })
    }
}

/// A template's source with its `run` function replaced (the helper below it kept).
fn from_template(lang: &str, file: &str, run: &str) -> String {
    let t = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("templates/{lang}/{file}")),
    )
    .unwrap();
    let marker = match lang {
        "node" => "// --- toolsmith jsonrpc helper",
        _ => "# --- toolsmith jsonrpc helper",
    };
    let helper = &t[t.find(marker).expect("the template has a helper")..];
    let head = match lang {
        "python" => "",
        "node" => "'use strict';\n",
        _ => "require 'json'\n",
    };
    format!("{head}{run}\n{helper}")
}

fn py(run: &str) -> String {
    from_template("python", "main.py", run)
}

fn spec(v: Value) -> ScriptSpec {
    serde_json::from_value(v).expect("a valid spec")
}

async fn reg(app: &App, s: &ScriptSpec) -> Result<register::Registered, RegisterError> {
    register::register(
        app,
        s,
        &Actor::from("test"),
        &Recorder::default(),
        &|_, _, _| {},
    )
    .await
}

fn app() -> (tempfile::TempDir, App) {
    let (tmp, tb) = toolbox();
    let personal = tmp.path().join("personal");
    (
        tmp,
        App::new(tb, toolsmith::config::Config::from_env().expect("config"))
            .with_personal_dir(personal),
    )
}

fn structured(r: Result<toolsmith::runner::CallOutput, CallError>) -> Value {
    match r {
        Ok(o) => o.structured.unwrap_or(Value::String(o.text)),
        Err(e) => panic!("call failed: {e}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn six_languages_register_commit_and_run() {
    let (_tmp, app) = app();
    let root = app.toolbox.root().to_path_buf();
    let text_schema =
        json!({"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}});
    let tools = [
        ("py_up", "python", py("def run(args, ctx):\n    return {\"out\": args[\"text\"].upper()}\n")),
        ("js_up", "node", from_template("node", "main.js", "async function run(args) { return { out: args.text.toUpperCase() }; }")),
        ("rb_up", "ruby", from_template("ruby", "main.rb", "def run(args, _ctx)\n  { 'out' => args['text'].upcase }\nend")),
        ("sh_up", "bash", "t=$(sed -E 's/.*\"text\" *: *\"([^\"]*)\".*/\\1/'); printf '{\"out\":\"%s\"}\\n' \"$(printf %s \"$t\" | tr a-z A-Z)\"\n".to_string()),
        ("pl_up", "perl", "use JSON::PP; my $a = decode_json(do { local $/; <STDIN> }); print encode_json({out => uc $a->{text}}), \"\\n\";\n".to_string()),
        ("php_up", "php", "<?php $a = json_decode(stream_get_contents(STDIN), true); echo json_encode(['out' => strtoupper($a['text'])]), \"\\n\";\n".to_string()),
    ];
    for (name, lang, code) in &tools {
        let plain = matches!(*lang, "bash" | "perl" | "php");
        let s = spec(json!({
            "name": name, "language": lang, "code": code,
            "description": format!("Upper-case a text ({lang})"),
            "protocol": if plain { "plain" } else { "jsonrpc" },
            "input_schema": text_schema,
            "examples": [{"input": {"text": "ab"}, "output": {"out": "AB"}}],
        }));
        let before = commit_count(&root);
        let out = reg(&app, &s)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(out.action, "add");
        assert_eq!(out.examples_passed, 1);
        assert_eq!(commit_count(&root), before + 1, "{name}: one commit");
        let got = structured(
            app.call(name, json!({"text": "héllo"}), &Recorder::default())
                .await,
        );
        // tr and PHP's strtoupper upper-case ASCII only.
        let want = if matches!(*lang, "bash" | "php") {
            "HéLLO"
        } else {
            "HÉLLO"
        };
        assert_eq!(got, json!({"out": want}), "{name}");
    }
    assert_clean(&root);
    let files = git(&root, &["ls-files", "tools/py_up"]);
    assert_eq!(
        files.lines().collect::<Vec<_>>(),
        ["tools/py_up/main.py", "tools/py_up/tool.toml"]
    );
    let toml = std::fs::read_to_string(root.join("tools/py_up/tool.toml")).unwrap();
    assert!(toml.contains("source = \"sha256:"), "{toml}");

    // Re-registering is an update commit; a failing example commits nothing.
    let before = commit_count(&root);
    let s = spec(
        json!({"name": "py_up", "language": "python", "description": "Upper-case, v2", "input_schema": text_schema,
        "code": py("def run(args, ctx):\n    return {\"out\": args[\"text\"].upper() + \"!\"}\n"),
        "examples": [{"input": {"text": "a"}, "output": {"out": "A!"}}]}),
    );
    assert_eq!(reg(&app, &s).await.unwrap().action, "update");
    assert_eq!(commit_count(&root), before + 1);
    assert!(git(&root, &["log", "-1", "--format=%s"]).starts_with("update py_up"));
    let bad = spec(
        json!({"name": "py_up", "language": "python", "description": "Broken", "input_schema": text_schema,
        "code": py("def run(args, ctx):\n    return {\"out\": \"wrong\"}\n"),
        "examples": [{"input": {"text": "a"}, "output": {"out": "A"}}]}),
    );
    let err = reg(&app, &bad).await.unwrap_err();
    assert!(matches!(err, RegisterError::Examples { .. }), "{err}");
    assert!(err.to_string().contains("wrong"), "{err}");
    assert_eq!(commit_count(&root), before + 1);
    assert_clean(&root);
    let got = structured(
        app.call("py_up", json!({"text": "x"}), &Recorder::default())
            .await,
    );
    assert_eq!(
        got,
        json!({"out": "X!"}),
        "the committed version still runs"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pip_dependency_is_locked_committed_and_rebuilt_after_a_clone() {
    let (_tmp, app) = app();
    let root = app.toolbox.root().to_path_buf();
    let s = spec(json!({
        "name": "six_version", "language": "python", "description": "The version of six",
        "dependencies": {"pip": ["six==1.16.0"]},
        "code": py("import six\ndef run(args, ctx):\n    return {\"six\": six.__version__}\n"),
        "examples": [{"input": {}, "output": {"six": "1.16.0"}}],
    }));
    let progress = Mutex::new(Vec::new());
    let out = register::register(
        &app,
        &s,
        &Actor::from("test"),
        &Recorder::default(),
        &|p, _, m| {
            progress.lock().unwrap().push((p, m));
        },
    )
    .await
    .unwrap();
    assert!(out.files.contains(&"requirements.lock".to_string()));
    assert!(
        progress
            .lock()
            .unwrap()
            .iter()
            .any(|(_, m)| m.contains("pip install six==1.16.0"))
    );
    let lock = std::fs::read_to_string(root.join("tools/six_version/requirements.lock")).unwrap();
    assert!(lock.lines().any(|l| l == "six==1.16.0"), "{lock}");

    // A registration of another version asking for other packages (which the AI chooses)
    // never rewrites the environment the committed version runs in — here one whose examples
    // fail, so the committed version stays: its environment is as it was, and it runs.
    let env = env_of(&root, "six_version", "py").expect("an environment");
    std::fs::write(env.join("sentinel"), "untouched").unwrap();
    let other = spec(json!({
        "name": "six_version", "language": "python", "description": "The version of six",
        "dependencies": {"pip": ["six==1.15.0"]},
        "code": py("import six\ndef run(args, ctx):\n    return {\"six\": six.__version__}\n"),
        "examples": [{"input": {}, "output": {"six": "0"}}],
    }));
    let refused = register::register(
        &app,
        &other,
        &Actor::from("test"),
        &Recorder::default(),
        &|_, _, _| {},
    )
    .await;
    assert!(refused.is_err(), "the examples fail");
    assert!(
        env.join("sentinel").exists(),
        "the committed version's environment was rewritten"
    );
    assert_eq!(
        structured(
            app.call("six_version", json!({}), &Recorder::default())
                .await
        ),
        json!({"six": "1.16.0"})
    );

    assert!(git(&root, &["ls-files"]).contains("tools/six_version/requirements.lock"));
    assert_clean(&root); // the venv lives under the ignored .toolsmith/

    // A clone has the lockfile but no environment: the first call rebuilds it.
    let clone = root.parent().unwrap().join("clone");
    git(
        root.parent().unwrap(),
        &[
            "clone",
            "-q",
            root.to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    assert!(!clone.join(".toolsmith").exists());
    let app2 = App::new(
        toolsmith::toolbox::Toolbox::open(&clone).unwrap(),
        toolsmith::config::Config::from_env().expect("config"),
    );
    let got = structured(
        app2.call("six_version", json!({}), &Recorder::default())
            .await,
    );
    assert_eq!(got, json!({"six": "1.16.0"}));
    assert!(
        env_of(&clone, "six_version", "py")
            .expect("an environment")
            .join("bin/python")
            .exists()
    );
    assert_clean(&clone);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn npm_dependencies_including_a_scoped_package() {
    let (_tmp, app) = app();
    let root = app.toolbox.root().to_path_buf();
    let code = from_template(
        "node",
        "main.js",
        "const leftPad = require('left-pad');\nconst cmp = require('@isaacs/string-locale-compare')('en');\nasync function run(args) { return { padded: leftPad(args.text, 5, '*'), order: cmp('a', 'b') }; }",
    );
    let s = spec(json!({
        "name": "pad", "language": "node", "description": "Pad a text with left-pad",
        "dependencies": {"npm": {"left-pad": "1.3.0", "@isaacs/string-locale-compare": "1.1.0"}},
        "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
        "code": code,
        "examples": [{"input": {"text": "ab"}, "output": {"padded": "***ab", "order": -1}}],
    }));
    let out = reg(&app, &s).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(out.files.contains(&"package-lock.json".to_string()));
    let lock: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("tools/pad/package-lock.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        lock["packages"]["node_modules/left-pad"]["version"],
        "1.3.0"
    );
    assert_eq!(
        lock["packages"]["node_modules/@isaacs/string-locale-compare"]["version"],
        "1.1.0"
    );
    assert_clean(&root);
    // Rebuilt from the lockfile when the environment is gone.
    std::fs::remove_dir_all(root.join(".toolsmith/env/pad")).unwrap();
    let got = structured(
        app.call("pad", json!({"text": "x"}), &Recorder::default())
            .await,
    );
    assert_eq!(got, json!({"padded": "****x", "order": -1}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_install_returns_pips_error_and_commits_nothing() {
    let (_tmp, app) = app();
    let root = app.toolbox.root().to_path_buf();
    let before = commit_count(&root);
    let s = spec(json!({
        "name": "broken_dep", "language": "python", "description": "Needs a package that does not exist",
        "dependencies": {"pip": ["toolsmith-no-such-package-4711==0.0.1"]},
        "code": py("def run(args, ctx):\n    return {}\n"),
    }));
    let err = reg(&app, &s).await.unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, RegisterError::Deps(_)), "{msg}");
    assert!(
        msg.contains("pip failed") && msg.contains("toolsmith-no-such-package-4711"),
        "{msg}"
    );
    assert!(err.hint().is_some());
    assert_eq!(commit_count(&root), before);
    assert!(!root.join("tools/broken_dep").exists());
    assert_clean(&root);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripts_call_back_the_host_for_memory_log_progress_and_other_tools() {
    let (_tmp, app) = app();
    let root = app.toolbox.root().to_path_buf();
    let upper = spec(
        json!({"name": "upper", "language": "python", "description": "Upper-case",
        "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
        "code": py("def run(args, ctx):\n    return {\"text\": args[\"text\"].upper()}\n")}),
    );
    reg(&app, &upper).await.unwrap();
    let counter = spec(
        json!({"name": "counter", "language": "python", "description": "Count calls in memory and shout",
        "code": py(r#"def run(args, ctx):
    log("counting")
    progress(1, 2, "halfway")
    got = call_host("memory/get", {"key": "n"})
    n = (got["value"] or 0) + 1
    call_host("memory/set", {"key": "n", "value": n})
    keys = call_host("memory/list", {})["keys"]
    shout = call_host("tools/call", {"name": "upper", "arguments": {"text": "call " + str(n)}})
    return {"n": n, "keys": keys, "shout": shout["text"]}
"#)}),
    );
    reg(&app, &counter).await.unwrap();
    let host = Recorder {
        app: Some(&app),
        ..Default::default()
    };
    let first = structured(app.call("counter", json!({}), &host).await);
    assert_eq!(first, json!({"n": 1, "keys": ["n"], "shout": "CALL 1"}));
    assert!(host.logs.lock().unwrap().contains(&"counting".to_string()));
    assert_eq!(*host.progress.lock().unwrap(), vec![1.0]);
    // Memory survives a restart (a new App) and is not committed.
    let app2 = App::new(
        toolsmith::toolbox::Toolbox::open(&root).unwrap(),
        toolsmith::config::Config::from_env().expect("config"),
    );
    let host2 = Recorder {
        app: Some(&app2),
        ..Default::default()
    };
    let second = structured(app2.call("counter", json!({}), &host2).await);
    assert_eq!(second["n"], 2);
    assert_clean(&root);
    let mem = toolsmith::memory::Memory::for_toolbox(&root);
    assert_eq!(mem.get("counter", "n").unwrap(), Some(json!(2)));
    assert_eq!(mem.stats(None).unwrap()["tools"][0]["tool"], "counter");
}

async fn plain_py(app: &App, name: &str, code: &str, extra: Value) {
    let mut v = json!({"name": name, "language": "python", "protocol": "plain", "description": format!("test tool {name}"), "code": code});
    if let (Value::Object(o), Value::Object(e)) = (&mut v, extra) {
        o.extend(e);
    }
    reg(app, &spec(v))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_kills_the_whole_process_group() {
    let (_tmp, app) = app();
    plain_py(
        &app,
        "sleepy",
        "import subprocess, time\nsubprocess.Popen(['sleep', '31.4159'])\ntime.sleep(60)\n",
        json!({"limits": {"timeout_ms": 700}}),
    )
    .await;
    let err = app
        .call("sleepy", json!({}), &Recorder::default())
        .await
        .unwrap_err();
    assert!(
        matches!(err, CallError::Run(RunError::Timeout { ms: 700, .. })),
        "{err}"
    );
    assert!(err.hint().unwrap().contains("timeout_ms"));
    assert!(
        !leftover("sleep 31.4159"),
        "the script's child survived the timeout"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_bomb_is_contained_and_cleaned_up() {
    let (_tmp, app) = app();
    let contained = toolsmith::sandbox::PidsCgroup::new(8, &app.config().sandbox).is_some()
        || unsafe { libc::geteuid() } != 0;
    assert!(
        contained,
        "running as root without a usable pids cgroup: nothing would stop a fork bomb, so this \
         property cannot be checked here (a writable pids cgroup is needed; CI runs as root with one)"
    );
    let s = spec(
        json!({"name": "bomb", "language": "bash", "protocol": "plain", "description": "A fork bomb",
        "limits": {"timeout_ms": 3000},
        "code": "bomb_4711() { bomb_4711 | bomb_4711 & }; bomb_4711; wait\n"}),
    );
    reg(&app, &s).await.unwrap();
    // The bomb hits the process limit (fork fails) and the call ends, by itself or by timeout.
    // In a pid namespace the rest of the bomb dies with its first shell, sometimes before any
    // "Resource temporarily unavailable" reaches stderr: an empty success is contained too.
    match app.call("bomb", json!({}), &Recorder::default()).await {
        Ok(out) => assert!(
            out.text.is_empty()
                || out
                    .logs
                    .iter()
                    .any(|l| l.contains("Resource temporarily unavailable")),
            "{out:?}"
        ),
        Err(e) => assert!(
            matches!(
                e,
                CallError::Run(RunError::Timeout { .. } | RunError::Failed { .. })
            ),
            "{e}"
        ),
    }
    let entry = app.toolbox.root().join("tools/bomb/main.sh");
    assert!(
        !leftover(entry.to_str().unwrap()),
        "fork bomb processes survived"
    );
    // The host is fine afterwards.
    plain_py(&app, "after", "print('{\"ok\": true}')\n", json!({})).await;
    assert_eq!(
        structured(app.call("after", json!({}), &Recorder::default()).await),
        json!({"ok": true})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_megabyte_of_stderr_neither_blocks_nor_breaks_the_call() {
    let (_tmp, app) = app();
    plain_py(&app, "chatty", "import sys\nfor i in range(10000):\n    sys.stderr.write('x' * 99 + '\\n')\nprint('{\"done\": true}')\n", json!({})).await;
    let host = Recorder::default();
    let out = app.call("chatty", json!({}), &host).await.unwrap();
    assert_eq!(out.structured, Some(json!({"done": true})));
    assert_eq!(host.logs.lock().unwrap().len(), 10000);
    // Past the cap the call fails with a clear error instead of buffering without bound.
    plain_py(
        &app,
        "flood",
        "import sys\nsys.stderr.write('y' * 3_000_000)\nprint('{}')\n",
        json!({}),
    )
    .await;
    let err = app.call("flood", json!({}), &host).await.unwrap_err();
    assert!(
        matches!(err, CallError::Run(RunError::OutputTooLarge { .. })),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_secrets_are_invisible_unless_declared() {
    // SAFETY: set once, before any script of this test reads it; no other test reads this var.
    unsafe { std::env::set_var("TOOLSMITH_TEST_SECRET_4711", "hunter2") };
    let (_tmp, app) = app();
    let code = "import json, os\nprint(json.dumps({'secret': os.environ.get('TOOLSMITH_TEST_SECRET_4711'), 'home_is_scratch': os.environ.get('HOME') == os.getcwd()}))\n";
    plain_py(&app, "peek", code, json!({})).await;
    plain_py(
        &app,
        "granted",
        code,
        json!({"capabilities": {"env": ["TOOLSMITH_TEST_SECRET_4711"]}}),
    )
    .await;
    common::approve(&app, "granted");
    assert_eq!(
        structured(app.call("peek", json!({}), &Recorder::default()).await),
        json!({"secret": null, "home_is_scratch": true})
    );
    assert_eq!(
        structured(app.call("granted", json!({}), &Recorder::default()).await)["secret"],
        "hunter2"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_denies_network_and_writes_unless_granted() {
    let (_tmp, app) = app();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let code = format!(
        "import json, socket\nok = True\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2).close()\nexcept OSError:\n    ok = False\nwrote = True\ntry:\n    open('/usr/toolsmith-escape-4711', 'w').write('x')\nexcept OSError:\n    wrote = False\nprint(json.dumps({{'connected': ok, 'wrote_outside': wrote}}))\n"
    );
    // The property needs a sandbox: a machine without one cannot check it (setup.sh installs
    // bubblewrap; Landlock is in the kernel). Refusing to run without one is tested in
    // tests/it/sandbox.rs.
    if let Err(e) = toolsmith::sandbox::choose(
        toolsmith::manifest::SandboxMode::Required,
        &app.config().sandbox,
    ) {
        panic!("no sandbox on this machine, so this test cannot check anything: {e}");
    }
    plain_py(&app, "offline", &code, json!({"sandbox": "required"})).await;
    plain_py(
        &app,
        "online",
        &code,
        json!({"sandbox": "required", "capabilities": {"network": true}}),
    )
    .await;
    common::approve(&app, "online");
    assert_eq!(
        structured(app.call("offline", json!({}), &Recorder::default()).await),
        json!({"connected": false, "wrote_outside": false})
    );
    assert_eq!(
        structured(app.call("online", json!({}), &Recorder::default()).await)["connected"],
        true
    );
    assert!(!Path::new("/usr/toolsmith-escape-4711").exists());
    drop(listener);
}

#[test]
fn a_required_sandbox_that_is_missing_is_a_clear_error() {
    let (_tmp, tb) = toolbox();
    let root = tb.root().to_path_buf();
    let dir = root.join("tools/strict");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tool.toml"), "format = 1\nname = \"strict\"\ndescription = \"Needs a sandbox\"\nkind = \"script\"\n[run]\nlanguage = \"python\"\nentry = \"main.py\"\nprotocol = \"plain\"\nsandbox = \"required\"\n[input_schema]\ntype = \"object\"\n").unwrap();
    std::fs::write(dir.join("main.py"), "print('{\"ran\": true}')\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .args(["--toolbox", root.to_str().unwrap(), "call", "strict"])
        .env("TOOLSMITH_BWRAP", "/nonexistent/bwrap")
        .env("TOOLSMITH_SANDBOX_NO_FALLBACK", "1")
        .env("TOOLSMITH_ALLOW_UNSANDBOXED", "1") // "required" refuses even so
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("no sandbox can be applied")
            && stderr.contains("apt-get install bubblewrap")
            && stderr.contains("never runs unsandboxed"),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("ran"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warm_worker_serves_many_calls_restarts_after_a_crash_and_on_change() {
    let (_tmp, app) = app();
    let code = |v: &str| {
        py(&format!(
            "import os\ncalls = 0\ndef run(args, ctx):\n    global calls\n    calls += 1\n    if args.get('crash'):\n        os._exit(3)\n    return {{'pid': os.getpid(), 'calls': calls, 'v': '{v}'}}\n"
        ))
    };
    let s = |v: &str| {
        spec(
            json!({"name": "warm", "language": "python", "worker": true, "description": "A warm worker", "code": code(v),
        "input_schema": {"type": "object", "properties": {"crash": {"type": "boolean"}}}}),
        )
    };
    reg(&app, &s("1")).await.unwrap();
    let quiet = Recorder::default();
    let call = |args: Value| app.call("warm", args, &quiet);
    let a = structured(call(json!({})).await);
    let b = structured(call(json!({})).await);
    assert_eq!(a["pid"], b["pid"], "the same process served both calls");
    assert_eq!(
        (a["calls"].as_i64(), b["calls"].as_i64()),
        (Some(1), Some(2))
    );
    let err = call(json!({"crash": true})).await.unwrap_err();
    assert!(
        err.to_string().contains("exit code 3") && err.to_string().contains("restarts"),
        "{err}"
    );
    let c = structured(call(json!({})).await);
    assert_eq!(c["calls"], 1, "a fresh worker after the crash");
    // A new version of the tool replaces the worker.
    reg(&app, &s("2")).await.unwrap();
    let d = structured(call(json!({})).await);
    assert_eq!((d["v"].as_str(), d["calls"].as_i64()), (Some("2"), Some(1)));
    assert!(app.scripts().workers.live() >= 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warm_worker_is_replaced_when_a_person_changes_its_grants() {
    let (tmp, app) = app();
    let code = py(
        "import os\ncalls = 0\ndef run(args, ctx):\n    global calls\n    calls += 1\n    t = os.environ.get('W_TOKEN')\n    if t:\n        call_host('memory/set', {'key': 'k-' + t, 'value': {'v': t}})\n    return {'calls': calls, 'token': t, 'len': len(t or '')}\n",
    );
    reg(
        &app,
        &spec(
            json!({"name": "warm_tok", "language": "python", "worker": true,
            "description": "A warm worker with a secret", "code": code,
            "secrets": {"W_TOKEN": "a token"}}),
        ),
    )
    .await
    .unwrap();
    // Denied: the worker starts with the defaults only.
    let tool = app.tool("warm_tok").unwrap();
    let items = toolsmith::approval::requested(&tool.manifest);
    let dir = app.toolbox.tools_dir().join("warm_tok");
    let content = toolsmith::approval::content_hash(&dir, &tool, &items).unwrap();
    app.gate()
        .decide(
            "warm_tok",
            &content,
            &items,
            toolsmith::approval::Decision::Denied,
            "test",
        )
        .unwrap();
    let quiet = Recorder::default();
    structured(app.call("warm_tok", json!({}), &quiet).await);
    let a = structured(app.call("warm_tok", json!({}), &quiet).await);
    assert_eq!(
        (&a["token"], &a["calls"]),
        (&Value::Null, &json!(2)),
        "one warm worker: {a}"
    );
    // Approved, with the secret set: a new worker, which sees it (redacted in the result).
    toolsmith::secrets::Store::new(&tmp.path().join("personal"))
        .set("W_TOKEN", "warm-secret-value")
        .unwrap();
    common::approve(&app, "warm_tok");
    let b = structured(app.call("warm_tok", json!({}), &quiet).await);
    assert_eq!(b["token"], "[secret W_TOKEN]", "{b}");
    assert_eq!(b["len"], 17);
    // What it keeps in memory (read back by the AI) holds the secret's name, in a key as in a
    // value, never the value.
    let kept = std::fs::read_to_string(app.toolbox.root().join(".toolsmith/memory/warm_tok.json"))
        .expect("the tool's memory");
    assert!(
        !kept.contains("warm-secret-value") && kept.contains("k-[secret W_TOKEN]"),
        "{kept}"
    );
    assert_eq!(
        b["calls"], 1,
        "the worker with the old grants was replaced: {b}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interpreter_the_ai_could_have_written_is_refused_and_never_run() {
    let (tmp, app) = app();
    let root = app.toolbox.root().to_path_buf();
    let before = commit_count(&root);
    // A file the AI could write (a tool's own file, a build's output, a temporary file) that
    // would run on the host if toolsmith asked it where its real interpreter is.
    let marker = tmp.path().join("ran-on-host");
    let shim = tmp.path().join("python3");
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh\ntouch {}\nexec python3 \"$@\"\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&shim, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    for interpreter in [
        shim.to_str().unwrap().to_string(),
        root.join("tools/other/python3").display().to_string(),
        "./python3".to_string(),
        "/usr/../tmp/python3".to_string(),
    ] {
        let s = spec(json!({
            "name": "shimmed", "language": "python", "description": "Runs through a named interpreter",
            "interpreter": [interpreter],
            "dependencies": {"pip": ["six==1.16.0"]},
            "code": py("def run(args, ctx):\n    return {}\n"),
        }));
        let err = reg(&app, &s).await.unwrap_err();
        let msg = format!("{err}");
        assert!(
            msg.contains("run.interpreter") && msg.contains("not an installed interpreter"),
            "{interpreter}: {msg}"
        );
        assert!(msg.contains("name the command"), "{interpreter}: {msg}");
    }
    assert!(!marker.exists(), "the AI's file ran on the host");
    assert_eq!(commit_count(&root), before);
    assert!(!root.join("tools/shimmed").exists());
    assert_clean(&root);
    // A name toolsmith's own could be mistaken for is refused.
    let s = spec(json!({
        "name": "toolsmith_auth", "language": "python", "description": "Looks like toolsmith",
        "code": py("def run(args, ctx):\n    return {}\n"),
    }));
    let msg = reg(&app, &s).await.unwrap_err().to_string();
    assert!(msg.contains("reserved"), "{msg}");
}
