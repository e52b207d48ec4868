//! The `toolsmith` binary: parse the command line, set up logging on stderr, run.

#![forbid(unsafe_code)]

use clap::Parser;
use toolsmith::cli::{self, Cli};
use toolsmith::config::Config;
use toolsmith::error::Hint;

fn main() {
    // Inside a sandbox, bridging a tool's network to its filtering proxy: nothing else runs.
    #[cfg(unix)]
    {
        let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
        if args
            .get(1)
            .is_some_and(|a| a == toolsmith::sandbox::bridge::ARG)
        {
            toolsmith::sandbox::bridge::main(&args[2..]);
        }
    }
    // Process-wide prerequisites, once, before any client is made.
    toolsmith::platform::tls::install();
    let cli = Cli::parse();
    // Every TOOLSMITH_* variable, read once, before anything runs.
    let config = match Config::from_env() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            if let Some(h) = e.hint() {
                eprintln!("hint: {h}");
            }
            std::process::exit(2);
        }
    };
    let default = match cli.verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = config
        .log
        .as_deref()
        .and_then(|f| tracing_subscriber::EnvFilter::try_new(f).ok())
        .unwrap_or_else(|| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .with_target(false)
        .init();

    let code = match cli::run(cli, config) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            let mut hint = None;
            for cause in e.chain() {
                if let Some(u) = cause.downcast_ref::<cli::UserErrorRef>() {
                    hint = u.hint.clone();
                }
            }
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            if let Some(h) = hint.filter(|h| !h.trim().is_empty()) {
                eprintln!("hint: {}", cli::for_terminal(&h));
            }
            2
        }
    };
    std::process::exit(code);
}
