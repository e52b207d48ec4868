//! `toolsmith build NAME`: build a Rust tool's directory as it is on disk and commit it.

use super::CLI_ACTOR;
use super::output::{self, UserError};
use crate::app::App;
use crate::build::{self, BuildError};
use crate::error::{HostCode, HostError};
use crate::runner::script::{Host, ToolRequest};
use anyhow::Result;
use futures::future::BoxFuture;
use serde_json::Value;

/// Prints cargo's status lines and the build's log on stderr, as cargo itself would.
struct Terminal;

impl Host for Terminal {
    fn log(&self, level: &str, message: &str) {
        let message = message.strip_prefix("cargo: ").unwrap_or(message);
        match level {
            "info" | "debug" => eprintln!("{message}"),
            _ => eprintln!("{level}: {message}"),
        }
    }
    fn progress(&self, _: f64, _: Option<f64>, _: Option<String>) {}
    fn request(&self, request: ToolRequest) -> BoxFuture<'_, Result<Value, HostError>> {
        Box::pin(async move {
            Err(HostError::new(
                HostCode::MethodNotFound,
                format!("{} is not available during a build", request.method()),
            ))
        })
    }
}

/// Run the build; Ctrl-C stops cargo and commits nothing.
pub(super) fn run(app: App, name: &str, force: bool, as_json: bool) -> Result<i32> {
    let rt = super::runtime(Some(2))?;
    let host = Terminal;
    let mut opts = build::Options::new(&host, CLI_ACTOR);
    opts.commit_anyway = force;
    let cancel = opts.cancel.clone();
    let result = rt.block_on(async {
        let interrupt = async {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel.cancel();
            }
            std::future::pending::<()>().await
        };
        tokio::select! {
            r = build::build_in_place(&app, name, &opts) => r,
            _ = interrupt => Err(BuildError::Cancelled { tool: name.to_string() }),
        }
    });
    match result {
        Ok(o) => {
            if as_json {
                output::json(&serde_json::to_value(&o)?);
            } else {
                let what = if o.compiled {
                    format!("compiled in {} ms", o.cargo_ms.unwrap_or(0))
                } else {
                    "source unchanged, nothing compiled".to_string()
                };
                let commit = match &o.commit {
                    Some(c) => format!("commit {}", &c[..c.len().min(10)]),
                    None => "no change to commit".to_string(),
                };
                println!(
                    "built {name} ({what}; {} bytes; {} example(s) run): {commit}",
                    o.artifact_bytes, o.examples_run
                );
                for f in &o.example_failures {
                    eprintln!("warning: committed despite a failing {f}");
                }
            }
            Ok(0)
        }
        Err(e) => Err(UserError::wrap(&e)),
    }
}
