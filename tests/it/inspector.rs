//! The MCP Inspector CLI (a client nobody here wrote) against `toolsmith serve` over stdio.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn node_modules() -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/node-tools/node_modules");
    assert!(
        d.join("@modelcontextprotocol/inspector-cli/build/index.js")
            .is_file(),
        "the MCP Inspector CLI is missing under {}: run ./scripts/setup.sh (./scripts/test.sh does)",
        d.display()
    );
    d
}

/// Run the inspector CLI (from inside node_modules, where it finds its package.json).
fn inspect(toolbox: &Path, args: &[&str]) -> Value {
    let out = Command::new("node")
        .current_dir(node_modules())
        .arg("@modelcontextprotocol/inspector-cli/build/index.js")
        .arg(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(toolbox)
        .arg("serve")
        .args(args)
        .env("TOOLSMITH_CACHE", toolbox.parent().unwrap().join("cache"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "inspector {args:?} failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("inspector printed no JSON ({e}): {stdout}"))
}

#[test]
fn inspector_cli_lists_calls_and_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let tb = tmp.path().join("box");
    assert!(
        Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .args(["init", "--example"])
            .arg(&tb)
            .status()
            .unwrap()
            .success()
    );

    let list = inspect(&tb, &["--method", "tools/list"]);
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for n in [
        "list_tools",
        "get_tool",
        "search_tools",
        "call_tool",
        "delete_tool",
        "pipeline",
        "execute_code",
        "word_count",
        "slugify",
        "count_slug",
    ] {
        assert!(names.contains(&n), "{n} missing: {names:?}");
    }
    let wc = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "word_count")
        .unwrap();
    assert_eq!(wc["annotations"]["readOnlyHint"], true);
    assert_eq!(wc["outputSchema"]["properties"]["words"]["type"], "integer");

    let r = inspect(
        &tb,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "word_count",
            "--tool-arg",
            "text=hello big world",
        ],
    );
    assert_eq!(r["structuredContent"]["words"], 3, "{r}");
    assert_eq!(r["isError"], false);
    let r = inspect(
        &tb,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "count_slug",
            "--tool-arg",
            "text=Héllo World",
        ],
    );
    assert_eq!(r["structuredContent"]["chars"], 11, "{r}");
    let r = inspect(
        &tb,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "word_count",
            "--tool-arg",
            "wrong=1",
        ],
    );
    assert_eq!(r["isError"], true, "{r}");
    assert!(
        r["content"][0]["text"].as_str().unwrap().contains("hint:"),
        "{r}"
    );

    let r = inspect(
        &tb,
        &["--method", "resources/read", "--uri", "toolsmith://guide"],
    );
    assert!(
        r["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("| `word_count` | wasm |"),
        "{r}"
    );
    let r = inspect(
        &tb,
        &[
            "--method",
            "resources/read",
            "--uri",
            "toolsmith://tools/slugify",
        ],
    );
    assert!(
        r["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("main.js"),
        "{r}"
    );
    let r = inspect(&tb, &["--method", "resources/templates/list"]);
    assert_eq!(
        r["resourceTemplates"][0]["uriTemplate"],
        "toolsmith://tools/{name}"
    );
    let r = inspect(&tb, &["--method", "prompts/list"]);
    let prompts: Vec<&str> = r["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(prompts, vec!["create_tool", "improve_tool"]);
    let r = inspect(
        &tb,
        &[
            "--method",
            "prompts/get",
            "--prompt-name",
            "improve_tool",
            "--prompt-args",
            "name=slugify",
            "feedback=keep unicode",
        ],
    );
    let text = r["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(
        text.contains("keep unicode") && text.contains("main.js"),
        "{text}"
    );
}
