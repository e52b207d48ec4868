//! A person's commands for what tools may do: `pending`, `approve NAME`, `deny NAME`,
//! `secret set|list|rm`, `audit`. These are the only writers of approvals and secrets; no
//! meta-tool reaches them.

use super::output::{self, UserError};
use crate::app::App;
use crate::approval::{self, Decision, Status};
use crate::audit;
use crate::index::Tool;
use crate::secrets;
use anyhow::Result;
use serde_json::{Value, json};
use std::io::IsTerminal;

/// `toolsmith secret ...`
#[derive(Debug, clap::Subcommand)]
pub enum SecretCommand {
    /// Set a secret's value: read from the terminal without echo (or one line of stdin).
    Set { name: String },
    /// The secrets set on this machine and the tools that declare them (never values).
    List,
    /// Remove a secret.
    Rm { name: String },
}

/// `toolsmith audit`
#[derive(Debug, clap::Args)]
pub struct AuditArgs {
    /// Only entries about this tool.
    #[arg(long)]
    pub tool: Option<String>,
    /// Only entries since this time: RFC 3339 (2026-01-31T12:00:00Z) or an age (30m, 2h, 7d).
    #[arg(long)]
    pub since: Option<String>,
    /// At most this many (the newest).
    #[arg(long, short = 'n', default_value_t = 100)]
    pub limit: usize,
}

/// `toolsmith console`
#[derive(Debug, clap::Args)]
pub struct ConsoleArgs {
    /// The port on 127.0.0.1 (default: any free port).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Do not open the browser: only print the login link.
    #[arg(long)]
    pub no_open: bool,
}

impl From<secrets::SecretError> for UserError {
    fn from(e: secrets::SecretError) -> Self {
        UserError::of(&e)
    }
}

fn io_error(app: &App, what: &str, e: std::io::Error) -> anyhow::Error {
    UserError::new(
        format!("{what}: {e}"),
        format!(
            "check the files under {} (mode 0700/0600, owned by you)",
            app.personal_dir().display()
        ),
    )
}

fn diff_since(app: &App, s: &Status) -> String {
    approval::status::diff_since_approved(&app.gate(), s)
}

fn tool(app: &App, name: &str) -> Result<Tool> {
    app.tool(name).map_err(|e| UserError::wrap(&e))
}

/// `toolsmith pending`
pub fn pending(app: &App, as_json: bool) -> Result<i32> {
    let out = approval::status::pending(&app.gate(), &app.index())
        .map_err(|e| io_error(app, "cannot read the approvals", e))?;
    if as_json {
        let mut v: Vec<Value> = out
            .iter()
            .map(|s| {
                json!({
                    "name": s.name,
                    "requested": approval::request::lines(&s.items),
                    "content": s.content,
                    "previous": s.record.as_ref().map(|r| json!({"decision": r.decision, "at": crate::personal::rfc3339(r.at), "approved_commit": r.approved_commit})),
                    "diff": diff_since(app, s),
                })
            })
            .collect();
        v.extend(super::references::pending_json(app));
        output::json(&Value::Array(v));
        return Ok(0);
    }
    let refs = super::references::print_pending(app);
    if out.is_empty() {
        if !refs {
            eprintln!("nothing waits for approval");
        }
        return Ok(0);
    }
    for s in &out {
        println!("{} asks for:", s.name);
        for l in approval::request::lines(&s.items) {
            println!("  - {l}");
        }
        if let Some(r) = &s.record {
            println!(
                "  (a person {} an earlier version on {}; it changed since)",
                match r.decision {
                    Decision::Approved => "approved",
                    Decision::Denied => "denied",
                },
                crate::personal::rfc3339(r.at)
            );
            let diff = diff_since(app, s);
            if !diff.is_empty() {
                println!("  diff since the approved version:");
                for line in diff.lines().take(200) {
                    println!("    {line}");
                }
            }
        }
        println!(
            "  approve: toolsmith approve {0}   deny: toolsmith deny {0}\n",
            s.name
        );
    }
    Ok(0)
}

/// `toolsmith approve NAME` / `toolsmith deny NAME`
pub fn decide(app: &App, name: &str, decision: Decision, as_json: bool) -> Result<i32> {
    let t = tool(app, name)?;
    let s = approval::status::decide(&app.gate(), &t, None, decision, "cli")
        .map_err(|e| UserError::wrap(&e))?;
    let word = match decision {
        Decision::Approved => "approved",
        Decision::Denied => "denied",
    };
    let lines = approval::request::lines(&s.items);
    if as_json {
        output::json(
            &json!({"name": name, "decision": word, "content": s.content, "requested": lines}),
        );
    } else {
        println!("{word} for this version of {name} on this machine:");
        for l in &lines {
            println!("  - {l}");
        }
        if decision == Decision::Denied {
            println!("it runs with the default grants only");
        } else {
            println!("any change to the tool asks again");
        }
    }
    Ok(0)
}

/// `toolsmith secret ...`
pub fn secret(app: &App, cmd: &SecretCommand, as_json: bool) -> Result<i32> {
    let store = secrets::Store::new(app.personal_dir());
    let log = audit::Log::new(app.personal_dir());
    let note = |event: &str, name: &str| {
        log.append(&audit::Entry::decision(
            app.toolbox.root(),
            "",
            event,
            "cli",
            vec![name.to_string()],
        ))
    };
    match cmd {
        SecretCommand::Set { name } => {
            if !crate::manifest::is_secret_name(name) {
                return Err(
                    UserError::from(secrets::SecretError::BadName { name: name.clone() }).into(),
                );
            }
            let value = if std::io::stdin().is_terminal() {
                rpassword::prompt_password(format!("value of {name} (not echoed): "))
                    .map_err(|e| io_error(app, "cannot read the value", e))?
            } else {
                let mut line = String::new();
                std::io::stdin()
                    .read_line(&mut line)
                    .map_err(|e| io_error(app, "cannot read the value from stdin", e))?;
                line
            };
            if value.trim_end_matches(['\r', '\n']).len() < secrets::redact::MIN_LEN {
                return Err(UserError::new(
                    format!(
                        "the value is shorter than {} characters",
                        secrets::redact::MIN_LEN
                    ),
                    "a value that short could not be told apart from ordinary output (and would not be redacted); paste the real value",
                ));
            }
            store.set(name, &value).map_err(UserError::from)?;
            note("secret set", name);
            if as_json {
                output::json(&json!({"name": name, "set": true}));
            } else {
                eprintln!(
                    "{name} is set (stored in {}, mode 0600)",
                    store.path().display()
                );
            }
        }
        SecretCommand::Rm { name } => {
            store.remove(name).map_err(UserError::from)?;
            note("secret removed", name);
            if as_json {
                output::json(&json!({"name": name, "removed": true}));
            } else {
                eprintln!("{name} removed");
            }
        }
        SecretCommand::List => {
            let rows: Vec<(String, bool, Vec<String>)> =
                approval::status::secrets_listing(&store, &app.index())
                    .map_err(UserError::from)?
                    .into_iter()
                    .map(|u| (u.name, u.set, u.tools))
                    .collect();
            if as_json {
                output::json(&Value::Array(
                    rows.iter()
                        .map(|(n, s, t)| json!({"name": n, "set": s, "tools": t}))
                        .collect(),
                ));
            } else if rows.is_empty() {
                eprintln!("no secrets are set or declared");
            } else {
                let table: Vec<Vec<String>> = rows
                    .iter()
                    .map(|(n, s, t)| {
                        vec![
                            n.clone(),
                            if *s { "set".into() } else { "NOT SET".into() },
                            t.join(", "),
                        ]
                    })
                    .collect();
                print!("{}", output::table(&["NAME", "VALUE", "USED BY"], &table));
            }
        }
    }
    Ok(0)
}

/// Seconds since the epoch of `--since`.
fn parse_since(s: &str) -> Result<u64> {
    audit::parse_since(s).ok_or_else(|| {
        UserError::new(
            format!("--since {s:?} is not a time"),
            "give an RFC 3339 time (2026-01-31T12:00:00Z) or an age such as 30m, 2h or 7d",
        )
    })
}

/// `toolsmith audit`
pub fn audit(app: &App, a: &AuditArgs, as_json: bool) -> Result<i32> {
    let since = a.since.as_deref().map(parse_since).transpose()?;
    let log = audit::Log::new(app.personal_dir());
    let mut entries = log
        .read(a.tool.as_deref(), since)
        .map_err(|e| io_error(app, "cannot read the audit log", e))?;
    let skip = entries.len().saturating_sub(a.limit);
    entries.drain(..skip);
    if as_json {
        output::json(&serde_json::to_value(&entries)?);
        return Ok(0);
    }
    let rows: Vec<Vec<String>> = entries
        .iter()
        .map(|e| {
            let what = if e.event == "call" {
                let mut hosts = String::new();
                if !e.hosts_reached.is_empty() {
                    hosts += &format!(" reached {}", e.hosts_reached.join(","));
                }
                if !e.hosts_refused.is_empty() {
                    hosts += &format!(" refused {}", e.hosts_refused.join(","));
                }
                let process = e
                    .process
                    .as_deref()
                    .map(|p| format!(" ({p})"))
                    .unwrap_or_default();
                format!(
                    "{} {}ms{process} in {}B out {}B{hosts}{}",
                    e.outcome,
                    e.ms,
                    e.bytes_in,
                    e.bytes_out,
                    e.error
                        .as_deref()
                        .map(|x| format!(": {x}"))
                        .unwrap_or_default()
                )
            } else {
                format!("via {}", e.via)
            };
            vec![
                crate::personal::rfc3339(e.time),
                e.event.clone(),
                e.tool.clone(),
                format!(
                    "{}{}",
                    e.actor,
                    e.session
                        .as_deref()
                        .map(|s| format!(" ({s})"))
                        .unwrap_or_default()
                ),
                e.commit
                    .as_deref()
                    .map(|c| c.chars().take(8).collect())
                    .unwrap_or_default(),
                e.grants.join("; "),
                what,
            ]
        })
        .collect();
    print!(
        "{}",
        output::table(
            &[
                "TIME", "EVENT", "TOOL", "ACTOR", "COMMIT", "GRANTS", "OUTCOME"
            ],
            &rows
        )
    );
    Ok(0)
}

/// `toolsmith console`: serve the console until Ctrl-C. The login link goes to stdout (with
/// `--json`, `{"url", "login"}`), what to do with it to stderr.
pub fn console(app: App, a: &ConsoleArgs, as_json: bool) -> Result<i32> {
    let rt = super::runtime(Some(2))?;
    let opts = crate::console::Options {
        port: a.port,
        no_open: a.no_open,
    };
    rt.block_on(async move {
        let personal = app.personal_dir().display().to_string();
        let started = crate::console::start(app, &opts).await.map_err(|e| {
            UserError::new(
                format!("cannot listen on 127.0.0.1:{}: {e}", opts.port),
                "pick another port with --port, or leave it out for any free port",
            )
        })?;
        if as_json {
            output::json(&json!({"url": started.url, "login": started.login}));
        } else {
            println!("{}", started.login);
        }
        use std::io::Write;
        let _ = std::io::stdout().flush();
        let opened = !opts.no_open && crate::console::open_browser(&started.login);
        eprintln!(
            "toolsmith console for {personal} at {}\n{}\nThe link works once and opens a session in that browser; keep it to yourself. Ctrl-C stops the console.",
            started.url,
            if opened {
                "opened the login link above in your browser"
            } else {
                "open the login link above in your browser"
            },
        );
        started
            .run(async {
                #[cfg(unix)]
                {
                    use tokio::signal::unix::{SignalKind, signal};
                    if let Ok(mut term) = signal(SignalKind::terminate()) {
                        tokio::select! {
                            _ = tokio::signal::ctrl_c() => {}
                            _ = term.recv() => {}
                        }
                        return;
                    }
                }
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .map_err(|e| io_error_text(&personal, "the console stopped", e))?;
        Ok::<i32, anyhow::Error>(0)
    })
}

fn io_error_text(personal: &str, what: &str, e: std::io::Error) -> anyhow::Error {
    UserError::new(
        format!("{what}: {e}"),
        format!("check the files under {personal} (mode 0700/0600, owned by you)"),
    )
}
