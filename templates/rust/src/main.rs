//! {{name}}: {{description}}
//!
//! Calling convention (toolsmith, kind = "wasm"; compiled for `wasm32-wasip1`):
//! - the arguments arrive as ONE JSON document on stdin (an object matching `input_schema`);
//! - print the result on stdout: valid JSON becomes structured output (it should match
//!   `output_schema`), anything else is returned as text;
//! - lines written to stderr become log messages;
//! - exit with a non-zero code to report an error: its message is what was written to stderr.
//! There is no network and no filesystem access unless `[capabilities]` grants it.

use serde_json::{json, Value};
use std::io::Read;
use std::process::ExitCode;

fn run(args: &Value) -> Result<Value, String> {
    let text = args
        .get("text")
        .and_then(Value::as_str)
        .ok_or("missing string argument `text`")?;
    Ok(json!({ "message": format!("Hello, {text}!") }))
}

fn main() -> ExitCode {
    let mut input = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        eprintln!("cannot read stdin: {e}");
        return ExitCode::FAILURE;
    }
    let args: Value = if input.trim().is_empty() {
        json!({})
    } else {
        match serde_json::from_str(&input) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("invalid JSON arguments: {e}");
                return ExitCode::FAILURE;
            }
        }
    };
    match run(&args) {
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
