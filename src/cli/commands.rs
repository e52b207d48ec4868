//! The CLI commands: open the toolbox, act, print.

use super::output::{self, UserError};
use super::{CLI_ACTOR, Cli, Command};
use crate::app::App;
use crate::config::Config;
use crate::index::{Index, Status};
use crate::manifest::Severity;
use crate::scaffold;
use crate::toolbox::{self, FileSpec, Toolbox};
use anyhow::Result;
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;

/// Run a parsed command line with the configuration read at start (the command line's flags
/// win over it). Returns the process exit code.
pub fn run(cli: Cli, mut config: Config) -> Result<i32> {
    config.sandbox.allow_unsandboxed |= cli.allow_unsandboxed;
    let explicit = cli.toolbox.clone().or_else(|| config.toolbox.clone());
    let location = explicit.clone().unwrap_or_else(|| config.home.clone());
    let config = Arc::new(config);
    Config::install(Arc::clone(&config));
    // Every command's app runs MCP entries' servers (their client is part of it from the start).
    let app = |tb: Toolbox| crate::mcp::upstream::with_client(App::new(tb, Arc::clone(&config))).0;
    match cli.command {
        Command::Init { dir, example } => init(dir.unwrap_or(location), example, cli.json),
        Command::New {
            name,
            lang,
            description,
        } => {
            let tb = open(explicit, &location)?;
            new_tool(
                &tb,
                &name,
                lang.template_dir(),
                description.as_deref(),
                cli.json,
            )
        }
        Command::List { kind, tag } => {
            let tb = open(explicit, &location)?;
            list(
                &Index::build(tb.root()),
                kind.as_deref(),
                tag.as_deref(),
                cli.json,
            )
        }
        Command::Show { name } => show(&open(explicit, &location)?, &name, cli.json),
        Command::Search { query, limit } => {
            let app = app(open(explicit, &location)?);
            // The same ranking as `search_tools`; embeddings cached from earlier runs and
            // servers are reused, the missing ones made now.
            app.prepare_search();
            let found = app.search(&query.join(" "), limit);
            if let Some(n) = &found.notice {
                eprintln!("notice: {n}");
            }
            let hits = found.results;
            if cli.json {
                output::json(&serde_json::to_value(&hits)?);
            } else if hits.is_empty() {
                eprintln!("no tool matches {:?}", query.join(" "));
            } else {
                let rows: Vec<Vec<String>> = hits
                    .iter()
                    .map(|h| {
                        vec![
                            h.name.clone(),
                            h.kind.clone(),
                            format!("{:.2}", h.score),
                            h.matched.join(","),
                            h.summary.clone(),
                        ]
                    })
                    .collect();
                print!(
                    "{}",
                    output::table(&["NAME", "KIND", "SCORE", "MATCHED", "DESCRIPTION"], &rows)
                );
                eprintln!("ranking: {}", found.ranking);
            }
            Ok(0)
        }
        Command::Log { name, limit } => {
            let tb = open(explicit, &location)?;
            let log = tb.log(name.as_deref(), limit).map_err(UserError::from)?;
            if cli.json {
                output::json(&serde_json::to_value(&log)?);
            } else {
                for c in log {
                    println!(
                        "{}  {}  {}",
                        &c.id[..c.id.len().min(10)],
                        format_time(c.time),
                        c.summary
                    );
                }
            }
            Ok(0)
        }
        Command::Lint => {
            let tb = open(explicit, &location)?;
            lint(&tb, &Index::build(tb.root()), cli.json)
        }
        Command::Guide => {
            print!("{}", {
                let tb = open(explicit, &location)?;
                let view =
                    crate::trust::View::new(&tb, std::sync::Arc::new(Index::build(tb.root())));
                crate::mcp::guide(&view, &tb, &config.sandbox)
            });
            Ok(0)
        }
        Command::Schema => {
            output::json(&crate::manifest::json_schema());
            Ok(0)
        }
        Command::Pending => super::approvals::pending(&app(open(explicit, &location)?), cli.json),
        Command::Approve { name } => super::approvals::decide(
            &app(open(explicit, &location)?),
            &name,
            crate::approval::Decision::Approved,
            cli.json,
        ),
        Command::Deny { name } => super::approvals::decide(
            &app(open(explicit, &location)?),
            &name,
            crate::approval::Decision::Denied,
            cli.json,
        ),
        Command::Allow(a) => {
            super::references::allow(&app(open(explicit, &location)?), &a, cli.json)
        }
        Command::Disallow(a) => {
            super::references::disallow(&app(open(explicit, &location)?), &a, cli.json)
        }
        Command::Secret(c) => {
            super::approvals::secret(&app(open(explicit, &location)?), &c, cli.json)
        }
        Command::Audit(a) => {
            super::approvals::audit(&app(open(explicit, &location)?), &a, cli.json)
        }
        Command::Console(a) => {
            super::approvals::console(app(open(explicit, &location)?), &a, cli.json)
        }
        Command::Call { name, args } => {
            call(app(open(explicit, &location)?), &name, &args, cli.json)
        }
        Command::Serve(args) => super::serve::serve(open(explicit, &location)?, args, config),
        Command::HistoryMemo => {
            crate::history::prepare(&open(explicit, &location)?)?;
            Ok(0)
        }
        Command::Doctor => super::doctor::run(explicit.as_deref(), &location, &config, cli.json),
        Command::Stats => super::stats::stats(&app(open(explicit, &location)?), cli.json),
        Command::Build { name, force } => {
            super::build::run(app(open(explicit, &location)?), &name, force, cli.json)
        }
        Command::Register(args) => {
            super::scripts::register(app(open(explicit, &location)?), &args, cli.json)
        }
        Command::History(a) => super::history::history(&open(explicit, &location)?, &a, cli.json),
        Command::Diff(a) => super::history::diff(&open(explicit, &location)?, &a, cli.json),
        Command::Rollback(a) => super::history::rollback(&open(explicit, &location)?, &a, cli.json),
        Command::Restore(a) => super::history::restore(&open(explicit, &location)?, &a, cli.json),
        Command::UndoSession(a) => {
            super::history::undo_session(&open(explicit, &location)?, &a, cli.json)
        }
        Command::Import(a) => {
            let tb = open(explicit, &location)?;
            // An editor's MCP configuration: its servers become entries.
            let file = std::path::Path::new(&a.source);
            if file.is_file()
                && std::fs::read_to_string(file)
                    .is_ok_and(|t| crate::servers::config::is_config(&t))
            {
                return super::servers::import_config(app(tb), file, a.name.as_deref(), cli.json);
            }
            super::share::import(&tb, &a, &config, cli.json)
        }
        Command::AddMcp(a) => {
            super::servers::add_mcp(app(open(explicit, &location)?), &a, cli.json)
        }
        Command::Update(a) => {
            super::share::update(&open(explicit, &location)?, &a, &config, cli.json)
        }
        Command::Export(a) => super::share::export(&open(explicit, &location)?, &a, cli.json),
        Command::Sync(a) => super::team::sync(&open(explicit, &location)?, &a, cli.json),
        Command::Review(a) => super::team::review(&open(explicit, &location)?, &a, cli.json),
        Command::Trust(a) => super::team::trust(&open(explicit, &location)?, &a, cli.json),
        Command::Delete { name } => {
            let tb = open(explicit, &location)?;
            let out = tb.delete_tool(&name, CLI_ACTOR).map_err(UserError::from)?;
            if cli.json {
                output::json(&serde_json::to_value(&out)?);
            } else {
                println!(
                    "deleted {name} ({})",
                    out.commit.as_deref().unwrap_or("no commit")
                );
            }
            Ok(0)
        }
    }
}

/// Open the toolbox: an explicit --toolbox must exist; the default one is created on first use.
pub fn open(explicit: Option<PathBuf>, location: &std::path::Path) -> Result<Toolbox> {
    let tb = match explicit {
        Some(dir) => Toolbox::open(&dir),
        None => Toolbox::open_or_create(location),
    };
    Ok(tb.map_err(UserError::from)?)
}

fn init(dir: PathBuf, example: bool, as_json: bool) -> Result<i32> {
    let extra = if example {
        toolbox::seed_files()
    } else {
        Vec::new()
    };
    let tb = Toolbox::init(&dir, &extra, CLI_ACTOR).map_err(UserError::from)?;
    let n = Index::build(tb.root()).tools().count();
    if as_json {
        output::json(&json!({"toolbox": tb.root(), "tools": n}));
    } else {
        println!("created toolbox {} with {n} tool(s)", tb.root().display());
    }
    Ok(0)
}

fn new_tool(
    tb: &Toolbox,
    name: &str,
    lang: &str,
    description: Option<&str>,
    as_json: bool,
) -> Result<i32> {
    tb.tool_dir(name).map_err(UserError::from)?;
    if tb.tools_dir().join(name).exists() {
        return Err(UserError::new(
            format!("tool {name:?} already exists"),
            "pick another name, or edit the existing tool",
        ));
    }
    let description = description.unwrap_or("TODO: say what this tool does");
    let files = scaffold::render(lang, name, description).ok_or_else(|| {
        UserError::new(
            format!("no template for {lang}"),
            format!("templates: {}", scaffold::languages().join(", ")),
        )
    })?;
    let files: Vec<FileSpec> = files
        .into_iter()
        .map(|(path, contents, executable)| FileSpec {
            path,
            contents,
            executable,
        })
        .collect();
    let out = tb
        .write_tool(name, &files, CLI_ACTOR)
        .map_err(UserError::from)?;
    if as_json {
        output::json(&serde_json::to_value(&out)?);
    } else {
        println!(
            "created {} from the {lang} template in {}",
            name,
            tb.tools_dir().join(name).display()
        );
    }
    Ok(0)
}

fn list(idx: &Index, kind: Option<&str>, tag: Option<&str>, as_json: bool) -> Result<i32> {
    let tools: Vec<_> = idx
        .tools()
        .filter(|t| kind.is_none_or(|k| t.manifest.kind.as_str() == k))
        .filter(|t| tag.is_none_or(|g| t.manifest.tags.iter().any(|x| x == g)))
        .collect();
    let broken: Vec<_> = idx.broken().collect();
    if as_json {
        let tools: Vec<_> = tools.iter().map(|t| json!({"name": t.manifest.name, "kind": t.manifest.kind, "description": t.manifest.summary(), "tags": t.manifest.tags})).collect();
        let broken: Vec<_> = broken.iter().map(|e| json!({"name": e.name, "errors": e.errors().iter().map(|d| d.to_string()).collect::<Vec<_>>()})).collect();
        output::json(&json!({"tools": tools, "broken": broken}));
        return Ok(0);
    }
    let rows: Vec<Vec<String>> = tools
        .iter()
        .map(|t| {
            vec![
                t.manifest.name.clone(),
                t.manifest.kind.to_string(),
                t.manifest.summary().to_string(),
            ]
        })
        .collect();
    print!("{}", output::table(&["NAME", "KIND", "DESCRIPTION"], &rows));
    for e in broken {
        let first = e
            .errors()
            .first()
            .map(|d| d.to_string())
            .unwrap_or_default();
        println!("{}  BROKEN  {}", e.name, first.lines().next().unwrap_or(""));
    }
    Ok(0)
}

fn show(tb: &Toolbox, name: &str, as_json: bool) -> Result<i32> {
    let dir = tb.tool_dir(name).map_err(UserError::from)?;
    let idx = Index::build(tb.root());
    let entry = idx.get(name).ok_or_else(|| {
        UserError::new(
            format!("there is no tool named {name:?}"),
            "`toolsmith list` shows the tools",
        )
    })?;
    let text = std::fs::read_to_string(dir.join(crate::manifest::FILE_NAME)).unwrap_or_default();
    let files: Vec<String> = crate::hashing::walk_tool_dir(&dir)
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| {
            e.path()
                .strip_prefix(&dir)
                .ok()
                .map(|p| p.to_string_lossy().into_owned())
        })
        .collect();
    if as_json {
        let (status, errors) = match &entry.status {
            Status::Ok(_) => ("ok", vec![]),
            Status::Broken(d) => ("broken", d.iter().map(|d| d.to_string()).collect()),
        };
        output::json(
            &json!({"name": name, "status": status, "errors": errors, "dir": dir, "files": files, "manifest": entry.tool().map(|t| &t.manifest), "tool_toml": text}),
        );
        return Ok(0);
    }
    println!("# {name}  ({})\n", dir.display());
    for d in entry.errors() {
        println!("{d}");
    }
    println!("files: {}\n", files.join(", "));
    print!("{text}");
    Ok(0)
}

fn lint(tb: &Toolbox, idx: &Index, as_json: bool) -> Result<i32> {
    let mut errors = 0;
    let mut warnings = 0;
    let mut all = Vec::new();
    for e in idx.entries() {
        let diags: Vec<_> = match &e.status {
            Status::Ok(t) => t.warnings.clone(),
            Status::Broken(d) => d.clone(),
        };
        for d in diags {
            match d.severity {
                Severity::Error => errors += 1,
                Severity::Warning => warnings += 1,
            }
            all.push(d);
        }
    }
    // Tools that would run something other than what was committed and recorded.
    let drift = tb.drift_report(idx);
    warnings += drift.len();
    let refuse = tb.uncommitted_policy() == toolbox::UncommittedPolicy::Refuse;
    if as_json {
        let uncommitted: Vec<_> = drift
            .iter()
            .map(|(n, d)| json!({"name": n, "uncommitted": d.uncommitted, "source_mismatch": d.source_mismatch, "message": d.describe(n), "refused": refuse}))
            .collect();
        output::json(
            &json!({"errors": errors, "warnings": warnings, "diagnostics": all, "uncommitted": uncommitted}),
        );
    } else {
        for d in &all {
            eprintln!("{d}");
        }
        for (n, d) in &drift {
            eprintln!(
                "tools/{n}: warning: {}{}",
                d.describe(n),
                if refuse {
                    " (calls are refused by toolsmith.toml)"
                } else {
                    ""
                }
            );
        }
        println!(
            "{} tool(s) checked: {errors} error(s), {warnings} warning(s)",
            idx.len()
        );
    }
    Ok(if errors > 0 { 1 } else { 0 })
}

fn format_time(secs: i64) -> String {
    gix::date::Time::new(secs, 0)
        .format_or_unix(gix::date::time::CustomFormat::new("%Y-%m-%d %H:%M"))
}

/// `toolsmith call NAME --args JSON`.
pub(super) fn call(app: App, name: &str, args: &str, as_json: bool) -> Result<i32> {
    let args: serde_json::Value = serde_json::from_str(args).map_err(|e| {
        UserError::new(
            format!("--args is not valid JSON: {e}"),
            "pass a JSON object, e.g. --args '{\"text\": \"hello\"}'",
        )
    })?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let out = rt.block_on(async {
        let out = app.call(name, args, &crate::runner::script::NoHost).await;
        app.stop_all();
        out
    });
    // The call counts for ranking (`usage.json`), as a call over MCP does.
    app.usage().flush();
    match out {
        Ok(o) => {
            if as_json {
                output::json(
                    &json!({"text": o.text, "structured": o.structured, "logs": o.logs, "warnings": o.warnings}),
                );
            } else {
                for l in &o.logs {
                    eprintln!("{l}");
                }
                for w in &o.warnings {
                    eprintln!("warning: {w}");
                }
                println!("{}", o.text);
            }
            Ok(0)
        }
        Err(e) => Err(UserError::wrap(&e)),
    }
}
