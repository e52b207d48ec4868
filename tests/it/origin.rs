//! A call's origin is said by its entry point, never guessed from a path (issue 42), and a held
//! tool is refused through every entry point: the CLI's `call` (the tool itself, and a stored
//! pipeline whose step calls it), and over MCP with the official Python SDK against the built
//! binary (tests/py/held_calls.py) — tools/call, `call_tool`, a stored pipeline's step, a stored
//! script's nested call, `execute_code` in Python and JavaScript, and the examples gate of a new
//! pipeline and of a new script. The held tool's code never runs: its mark is in no answer.

use crate::common;
use crate::team::is_held;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use toolsmith::toolbox::{FileSpec, Toolbox};

/// What only the held tool's output would carry.
const MARK: &str = "wombat";

const HELD: &str = "held_echo";

const PIPE: &str = "format = 1\nname = \"via_pipe\"\ndescription = \"Calls held_echo as its step\"\nkind = \"pipeline\"\n\n[input_schema]\ntype = \"object\"\n[input_schema.properties.text]\ntype = \"string\"\n\n[[steps]]\ntool = \"held_echo\"\nargs = { text = \"$input.text\" }\n";

const NEST_TOML: &str = "format = 1\nname = \"via_nest\"\ndescription = \"Calls held_echo from its code\"\nkind = \"script\"\n\n[run]\nlanguage = \"python\"\nentry = \"main.py\"\nprotocol = \"jsonrpc\"\n\n[input_schema]\ntype = \"object\"\n[input_schema.properties.text]\ntype = \"string\"\n";

const NEST_PY: &str = r#"import json, sys
req = json.loads(sys.stdin.readline())
def send(m):
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
send({"jsonrpc": "2.0", "id": "c1", "method": "tools/call", "params": {"name": "held_echo", "arguments": req["params"]["arguments"]}})
resp = json.loads(sys.stdin.readline())
if "error" in resp:
    send({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32000, "message": resp["error"]["message"]}})
else:
    send({"jsonrpc": "2.0", "id": req["id"], "result": resp["result"]})
"#;

/// A toolbox with two tools of its own (a pipeline and a script, both calling `held_echo`) and
/// `held_echo` pulled from a teammate's clone: an unsigned commit not made here, so held.
fn toolbox_with_a_held_tool(tmp: &Path) -> Toolbox {
    let root = tmp.join("box");
    let tb = Toolbox::init(&root, &[], "test").expect("init");
    tb.write_tool("via_pipe", &[FileSpec::new("tool.toml", PIPE)], "test")
        .expect("the pipeline");
    tb.write_tool(
        "via_nest",
        &[
            FileSpec::new("tool.toml", NEST_TOML),
            FileSpec::new("main.py", NEST_PY),
        ],
        "test",
    )
    .expect("the script");
    let other = tmp.join("teammate");
    git(
        tmp,
        &[
            "clone",
            "-q",
            root.to_str().unwrap(),
            other.to_str().unwrap(),
        ],
    );
    let dir = other.join("tools").join(HELD);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("tool.toml"),
        script_manifest(HELD, "Echoes its input"),
    )
    .unwrap();
    std::fs::write(
        dir.join("main.py"),
        format!(
            "import json, sys\nargs = json.load(sys.stdin)\nprint(json.dumps({{\"mark\": \"{MARK}\", \"echo\": args}}))\n"
        ),
    )
    .unwrap();
    git(&other, &["add", "-A"]);
    git(
        &other,
        &[
            "-c",
            "user.name=teammate",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-qm",
            "held_echo",
        ],
    );
    git(
        &root,
        &["pull", "-q", "--ff-only", other.to_str().unwrap(), "HEAD"],
    );
    assert!(is_held(&tb, HELD), "a teammate's unsigned tool is held");
    assert!(
        !is_held(&tb, "via_pipe") && !is_held(&tb, "via_nest"),
        "the toolbox's own tools are trusted"
    );
    tb
}

fn cli_call(tb: &Path, name: &str) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(tb)
        .args(["call", name, "--args", r#"{"text": "hi"}"#])
        .output()
        .expect("toolsmith runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn a_held_tool_is_refused_through_every_entry_point() {
    let tmp = tempfile::tempdir().unwrap();
    let tb = toolbox_with_a_held_tool(tmp.path());
    let held = format!("tool {HELD} is held");

    // The CLI: the tool, and a pipeline of the toolbox's own whose step calls it.
    for name in [HELD, "via_pipe"] {
        let (ok, text) = cli_call(tb.root(), name);
        assert!(!ok, "toolsmith call {name} is refused: {text}");
        assert!(text.contains(&held), "toolsmith call {name}: {text}");
        assert!(!text.contains(MARK), "held code ran: {text}");
    }

    // Over MCP, every entry point.
    let out = Command::new(python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/held_calls.py"))
        .args(["--toolsmith", env!("CARGO_BIN_EXE_toolsmith"), "--toolbox"])
        .arg(tb.root())
        .args(["--held", HELD])
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "held_calls.py failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("JSON");
    let calls = v["calls"].as_object().expect("calls");
    for entry in [
        "tools/call",
        "call_tool",
        "pipeline step",
        "nested call",
        "execute_code python",
        "execute_code javascript",
        "examples gate (pipeline)",
        "examples gate (script)",
    ] {
        let answer = &calls[entry];
        let text = answer["text"].as_str().unwrap_or_default();
        assert_eq!(answer["is_error"], true, "{entry} is refused: {answer}");
        assert!(
            text.contains(&held),
            "{entry} says the tool is held: {text}"
        );
        assert!(!text.contains(MARK), "{entry}: held code ran: {text}");
        // Where the refusal is the answer (not an example's failure), it says what to do.
        if !entry.starts_with("examples gate") {
            assert!(
                text.contains(&format!("toolsmith trust {HELD}")),
                "{entry} gives the held tool's hint: {text}"
            );
        }
    }
    // Nothing was made of the refused candidates, and the toolbox is as it was.
    let tools: Vec<&str> = v["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        !tools.contains(&"new_pipe") && !tools.contains(&"new_nest"),
        "{tools:?}"
    );
    assert!(is_held(&tb, HELD), "still held: only a person trusts it");
    assert_clean(tb.root());
}
