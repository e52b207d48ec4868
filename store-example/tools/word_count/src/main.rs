//! word_count: count words, lines and characters in a text.
//!
//! Calling convention (toolsmith, kind = "wasm"; compiled for `wasm32-wasip1`):
//! the arguments arrive as one JSON document on stdin, the JSON result is printed on stdout,
//! errors go to stderr with exit code 1.
//!
//! - words: runs of non-whitespace characters (Unicode whitespace separates words)
//! - lines: number of lines; a final line without a trailing newline counts, an empty text has 0
//! - chars: number of Unicode scalar values (not bytes)

use serde_json::{json, Value};
use std::io::Read;
use std::process::ExitCode;

fn count(text: &str) -> Value {
    json!({
        "words": text.split_whitespace().count(),
        "lines": text.lines().count(),
        "chars": text.chars().count(),
    })
}

fn run(input: &str) -> Result<Value, String> {
    let args: Value =
        serde_json::from_str(input).map_err(|e| format!("invalid JSON arguments: {e}"))?;
    let text = args
        .get("text")
        .and_then(Value::as_str)
        .ok_or("missing string argument `text`")?;
    Ok(count(text))
}

fn main() -> ExitCode {
    let mut input = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        eprintln!("cannot read stdin: {e}");
        return ExitCode::FAILURE;
    }
    match run(&input) {
        Ok(out) => {
            println!("{out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
