//! Real functions as tools: MBPP's problems (every 7th of the sanitized split, CC BY 4.0), each
//! solution made a tool as an AI would — a script (`register_script`) and a Python component
//! (`build_tool`, `language = "python"`, the plain function) — then checked by the problem's own
//! asserts through MCP. Prints a table, why each failure failed, and a JSON summary.
//! Run: `cargo bench --bench functions` (the release binary); arguments after `--` go to
//! `benches/functions/run.py` (`--limit N`, `--component-limit N` (default 30), `--forms`,
//! `--only IDS`, `--json FILE`, `--data FILE`). The data: `--data`, `TOOLSMITH_MBPP`,
//! `benches/data/sanitized-mbpp.json`, or `shared/fixtures/mbpp/` beside the repository.
//! The Python with the `mcp` SDK is `TOOLSMITH_TEST_PYTHON` or scripts/setup.sh's venv.

use std::path::Path;
use std::process::Command;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = std::env::var_os("TOOLSMITH_TEST_PYTHON")
        .unwrap_or_else(|| root.join("target/test-venv/bin/python").into_os_string());
    // cargo bench passes `--bench` (and a filter, when given) to every harness; keep the rest.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let mut cmd = Command::new(&python);
    cmd.arg(root.join("benches/functions/run.py"))
        .arg("--toolsmith")
        .arg(env!("CARGO_BIN_EXE_toolsmith"))
        .args(&args);
    if std::env::var_os("TOOLSMITH_COMPONENTIZE_PY").is_none() {
        cmd.env(
            "TOOLSMITH_COMPONENTIZE_PY",
            root.join("target/componentize-py/bin/componentize-py"),
        );
    }
    let status = cmd.status().unwrap_or_else(|e| {
        panic!(
            "cannot run {}: {e}\nhint: run scripts/setup.sh (it makes target/test-venv with the mcp SDK) or set TOOLSMITH_TEST_PYTHON",
            Path::new(&python).display()
        )
    });
    if !status.success() {
        std::process::exit(status.code().unwrap_or(1));
    }
}
