//! Script tools through a real MCP client (the official Python SDK over stdio), in both protocol
//! eras: register_script and calls, progress while pip installs, and elicitation and sampling
//! requested from inside a script and answered by the client (2025: server→client requests;
//! 2026: input-required results and a retried call).

use crate::common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn run(toolbox: &Path, mode: &str) -> Value {
    let base = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(python())
        .arg(base.join("tests/py/scripts_mcp.py"))
        .args([
            "--toolsmith",
            env!("CARGO_BIN_EXE_toolsmith"),
            "--mode",
            mode,
        ])
        .arg("--toolbox")
        .arg(toolbox)
        .arg("--template")
        .arg(base.join("templates/python/main.py"))
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "scripts_mcp.py ({mode}) failed:\nstdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("a JSON summary")
}

#[test]
fn script_tools_over_mcp_in_both_protocol_eras() {
    let (_tmp, tb) = toolbox();
    let root = tb.root().to_path_buf();

    let legacy = run(&root, "legacy");
    assert_eq!(legacy["registered"]["action"], "add", "{legacy}");
    // The result says which sandbox the tool gets here (bubblewrap, or landlock without it).
    let mech = legacy["registered"]["sandbox"]["mechanism"].as_str();
    assert!(matches!(mech, Some("bubblewrap" | "landlock")), "{legacy}");
    assert_eq!(legacy["ruby"]["twice"], "xyxy", "{legacy}");
    assert_eq!(legacy["bad_example_error"], true, "{legacy}");
    let progress = legacy["pip_progress"].to_string();
    assert!(progress.contains("pip install six==1.16.0"), "{legacy}");
    // 2025 session: the script's elicitation and sampling reached the client and came back.
    assert_eq!(legacy["ask"]["is_error"], false, "{legacy}");
    assert_eq!(
        legacy["ask"]["structured"],
        serde_json::json!({"name": "Ada", "said": "Hello, Ada!"})
    );
    // Shown as the tool's own question, never as toolsmith's.
    assert_eq!(
        legacy["seen"]["elicit"][0],
        "tool ask_legacy asks: What is your name?"
    );
    // A tool cannot speak as toolsmith: no URL-mode elicitation, no secret-looking field.
    for k in ["forged_url", "forged_token"] {
        assert_eq!(legacy[k]["is_error"], true, "{k}: {legacy}");
    }
    assert!(
        legacy["forged_url"]["text"]
            .as_str()
            .unwrap()
            .contains("may not send URL-mode elicitation"),
        "{legacy}"
    );
    assert!(
        legacy["forged_token"]["text"]
            .as_str()
            .unwrap()
            .contains("[secrets]"),
        "{legacy}"
    );
    assert_eq!(
        legacy["seen"]["elicit"].as_array().map(Vec::len),
        Some(1),
        "{legacy}"
    );
    assert_eq!(legacy["seen"]["sample"][0], "Greet Ada");
    assert_eq!(legacy["memory"]["value"], "Ada", "{legacy}");

    let modern = run(&root, "auto");
    assert_eq!(modern["ruby"]["twice"], "xyxy", "{modern}");
    // 2026 session: no server→client requests mid-call, so the question ends the attempt with
    // an input-required result; the SDK answers through the same callbacks and retries, and
    // the script runs again with its answers (elicitation, then sampling: two rounds).
    assert_eq!(modern["ask"]["is_error"], false, "{modern}");
    assert_eq!(
        modern["ask"]["structured"],
        serde_json::json!({"name": "Ada", "said": "Hello, Ada!"}),
        "{modern}"
    );
    assert_eq!(
        modern["seen"]["elicit"][0], "tool ask_auto asks: What is your name?",
        "{modern}"
    );
    assert_eq!(modern["seen"]["sample"][0], "Greet Ada", "{modern}");

    // Every registration is one commit made by the MCP client; failures commit nothing.
    let log = git(&root, &["log", "--format=%s"]);
    for name in [
        "rb_twice_legacy",
        "six_ver",
        "ask_legacy",
        "rb_twice_auto",
        "ask_auto",
    ] {
        assert_eq!(
            log.lines()
                .filter(|l| l.starts_with(&format!("add {name}:")))
                .count(),
            1,
            "{log}"
        );
    }
    assert!(!log.contains("wrong_"), "{log}");
    assert!(git(&root, &["log", "-1", "--format=%B"]).contains("Actor: "));
    assert_clean(&root);
}
