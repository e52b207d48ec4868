//! The person's own channel (issue 25): against an MCP client that accepts every elicitation,
//! the AI obtains no secret, environment variable, write root, unsandboxed run or network; the
//! console (`toolsmith console`, driven in headless Chromium by tests/py/console.py) refuses a
//! foreign Host, a link without a session, a reused login link and cross-site posts, and the
//! approval the person clicks there lets the waiting call through — in both protocol eras.

mod common;

use common::{assert_clean, python};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

fn scenario(mode: &str) -> (Value, Vec<u8>) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("box");
    let personal = tmp.path().join("personal");
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let shot = tmp.path().join("console.png");
    let bin = env!("CARGO_BIN_EXE_toolsmith");
    let out = Command::new(bin)
        .args(["init", root.to_str().unwrap()])
        .env("TOOLSMITH_DATA", &personal)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let out = Command::new(python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/console.py"))
        .args(["--toolsmith", bin, "--mode", mode])
        .arg("--toolbox")
        .arg(&root)
        .arg("--work")
        .arg(&work)
        .arg("--screenshot")
        .arg(&shot)
        .env("TOOLSMITH_DATA", &personal)
        .env("TOOLSMITH_CACHE", tmp.path().join("cache"))
        .env("TOOLSMITH_ROOTS", tmp.path())
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "console.py --mode {mode}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_clean(&root);
    let s = serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("a JSON summary");
    (s, std::fs::read(&shot).expect("the screenshot"))
}

fn text<'a>(s: &'a Value, key: &str) -> &'a str {
    s[key].as_str().unwrap_or_else(|| panic!("{key} in {s}"))
}

fn check(s: &Value, shot: &[u8]) {
    // 1. An always-accepting client obtains nothing.
    let tools = ["env_t", "net_t", "secret_t", "unsandboxed_t", "write_t"];
    for t in tools {
        assert_eq!(s["obtained"][t], false, "{t}: {s}");
    }
    assert_eq!(s["wrote"], false, "{s}");
    assert!(s["told"].as_u64() >= Some(5), "the client was told: {s}");
    assert_eq!(s["told_how"], true, "each message names the console: {s}");
    assert_eq!(s["pending"], json!(tools), "{s}");
    assert_eq!(s["approved_events"], json!([]), "{s}");

    // 2. The console's refusals.
    assert_eq!(s["loopback"], true);
    assert_eq!(s["foreign_host"], 403, "{s}");
    assert_eq!(s["foreign_host_login"], 403, "{s}");
    assert_eq!(s["no_session_post"], 401, "no session: {s}");
    assert!(text(s, "stolen_link_text").contains("Not signed in"), "{s}");
    assert!(
        text(s, "reused_login_text").contains("used or expired"),
        "{s}"
    );
    assert!(text(s, "stranger_after").contains("Not signed in"), "{s}");
    let approvals = text(s, "approvals_text");
    for part in [
        "env_t",
        "the environment variable TOOLSMITH_TEST_CONSOLE_ENV",
        "the secret CONSOLE_TOKEN",
        "running without a sandbox",
        "network access to any host",
        "Approve this version",
        "os.environ.get('TOOLSMITH_TEST_CONSOLE_ENV')",
    ] {
        assert!(approvals.contains(part), "{part}: {approvals}");
    }
    assert!(
        !approvals.contains("console-token-8d2f6a1b"),
        "no secret value"
    );
    for k in ["cross_site_guess", "cross_site_token"] {
        let t = text(s, k);
        assert!(
            t.contains("Refused") || t.contains("Not signed in"),
            "{k}: {t}"
        );
        assert!(!t.contains("Approved"), "{k}: {t}");
    }
    assert_eq!(s["pending_after_cross_site"], json!(tools), "{s}");

    // The screenshot shows the pending item: a PNG of the window, the item inside it.
    assert!(shot.starts_with(b"\x89PNG\r\n\x1a\n") && shot.len() > 10_000);
    let r = &s["screenshot_item"];
    assert!(r["width"].as_f64() > Some(300.0), "{r}");
    assert!(
        r["y"].as_f64() < Some(900.0) && r["height"].as_f64() > Some(50.0),
        "{r}"
    );

    // 3. Approved in the console while the call waited: the same call goes through.
    assert_eq!(
        s["env_after"],
        json!({"seen": "visible-env-value-31"}),
        "{s}"
    );
    assert_eq!(
        s["secret_after"],
        json!({"token": "[secret CONSOLE_TOKEN]", "len": 22}),
        "{s}"
    );
    assert_eq!(s["secret_value_in_result"], false);
    assert!(
        s["url_asks"].as_array().unwrap().iter().all(|m| m == "url"),
        "{s}"
    );
    for c in s["clicked"].as_array().unwrap() {
        assert!(
            c.as_str().unwrap().contains("Approved this version of"),
            "{c}"
        );
    }
    assert!(
        text(s, "denied_text").contains("Denied net_t"),
        "{}",
        s["denied_text"]
    );
    assert_eq!(
        s["net_after"],
        json!([false, {"connected": false}, true]),
        "{s}"
    );
    assert!(
        text(s, "secret_set_text").contains("NEW_ONE is set."),
        "{s}"
    );
    assert_eq!(s["secret_value_shown"], false);
    assert_eq!(s["secrets"]["NEW_ONE"], json!([true, []]), "{s}");
    assert_eq!(
        s["secrets"]["CONSOLE_TOKEN"],
        json!([true, ["secret_t"]]),
        "{s}"
    );
    let audit = text(s, "audit_text");
    assert!(
        audit.contains("approved") && audit.contains("via console"),
        "{audit}"
    );
    assert!(!audit.contains("secret_t"), "filtered by tool: {audit}");
    assert!(text(s, "audit_bad_since").contains("is not a time"), "{s}");
    let history = text(s, "history_text");
    assert!(history.contains("Roll back to this version"), "{history}");
    assert!(
        text(s, "rollback_text").contains("Rolled write_t back"),
        "{s}"
    );
    assert!(text(s, "held_text").contains("No tool is held"), "{s}");
    assert_eq!(s["console_file_left"], false, "{s}");
}

#[test]
fn the_person_approves_in_the_console_and_an_accepting_client_obtains_nothing() {
    for mode in ["legacy", "auto"] {
        let (s, shot) = scenario(mode);
        check(&s, &shot);
    }
}
