//! The toolbox's health report: per tool its calls, error rate, p50/p95 duration, last use,
//! who made it and when; the tools never called since they were made; the tools that fail more
//! than they succeed; and the near-duplicates (two tools whose descriptions and schemas mean
//! the same, from search's embeddings). One report, three readers: `toolsmith stats` (a table
//! or `--json`), the console's Health page and the `toolsmith://health` resource.
//!
//! Invariant: the report is derived, never a source of truth. Its figures come from the audit
//! log (`record`, kept up to date outside git in the personal directory, bounded) and the use
//! record `index::rank` keeps; who made a tool and when from git (`history`). It writes
//! nothing but its own record, and a lost record is made again from the log.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The crates below, under the names the code map gives them.
use toolsmith_app as app;
use toolsmith_audit as audit;
use toolsmith_history as history;
use toolsmith_index as index;
use toolsmith_personal as personal;
use toolsmith_search as search;
use toolsmith_trust as trust;

pub mod record;
pub mod similar;

use app::App;
use serde::Serialize;

pub use similar::{Pair, Similar, like};

/// The resource the AI reads the report from.
pub const URI: &str = "toolsmith://health";

/// One tool's health.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ToolHealth {
    /// The tool.
    pub name: String,
    /// Its kind (`wasm`, `script`, `pipeline`, `mcp`).
    pub kind: String,
    /// Calls that ran (audited).
    pub calls: u64,
    /// Those that failed.
    pub errors: u64,
    /// errors / calls (0 without calls).
    pub error_rate: f64,
    /// Median duration of its recent calls (ms).
    pub p50_ms: Option<u64>,
    /// 95th percentile duration of its recent calls (ms).
    pub p95_ms: Option<u64>,
    /// When it was last called (RFC 3339).
    pub last_used: Option<String>,
    /// Who made it (the commit's `Actor:` trailer — an MCP client's name, `cli` — else its
    /// author).
    pub made_by: Option<String>,
    /// When it was made (RFC 3339, the first commit of its directory).
    pub made_at: Option<String>,
    /// Its last error's message (secrets redacted), when its last failure is known; never
    /// of a held tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// Held until a person trusts it (`toolsmith review NAME`): the report says nothing of
    /// its words, and it is compared with no other tool.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub held: bool,
}

/// The whole report.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Report {
    /// The toolbox.
    pub toolbox: String,
    /// When it was made (RFC 3339).
    pub generated: String,
    /// Every tool, by name.
    pub tools: Vec<ToolHealth>,
    /// Tools never called since they were made.
    pub never_called: Vec<String>,
    /// Tools that failed more often than they succeeded.
    pub failing: Vec<String>,
    /// Pairs of tools that mean the same, closest first.
    pub near_duplicates: Vec<Pair>,
    /// How the near-duplicates were looked for (or why they were not).
    pub near_duplicates_note: String,
}

/// Who made the tool `name` and when (the first commit of its directory).
fn made(app: &App, name: &str) -> (Option<String>, Option<String>) {
    match history::tool_history(&app.toolbox, name, usize::MAX) {
        Ok(versions) => match versions.last() {
            Some(v) => (
                Some(v.actor.clone().unwrap_or_else(|| v.author.clone())),
                Some(v.date.clone()),
            ),
            None => (None, None),
        },
        Err(_) => (None, None),
    }
}

/// The report of `app`'s toolbox, now (blocking: it reads the audit log, git and, for the
/// near-duplicates, embeds what is not embedded yet).
pub fn report(app: &App) -> std::io::Result<Report> {
    let index = app.index();
    // The report is read by the model too (`toolsmith://health`): held tools as the view
    // shows them.
    let view = app.view();
    let root = app.toolbox.root();
    let records = record::update(app.personal_dir(), root, |n| index.tool(n).is_some())?;
    let usage = app.usage();
    let mut tools = Vec::new();
    for t in index.tools() {
        let name = t.manifest.name.clone();
        let stat = records.tools.get(&name).cloned().unwrap_or_default();
        // The use record also knows calls made before the audit log began.
        let used_ms = usage.of(&name).map(|(last, _)| last / 1000);
        let last = Some(stat.last)
            .filter(|&l| l > 0)
            .max(used_ms.filter(|&l| l > 0));
        let (made_by, made_at) = made(app, &name);
        let held = matches!(view.get(&name), Some(trust::Shown::Held(_)) | None);
        tools.push(ToolHealth {
            kind: t.manifest.kind.to_string(),
            calls: stat.calls,
            errors: stat.errors,
            error_rate: if stat.calls == 0 {
                0.0
            } else {
                (stat.errors as f64 / stat.calls as f64 * 1000.0).round() / 1000.0
            },
            p50_ms: stat.percentile(50.0),
            p95_ms: stat.percentile(95.0),
            last_used: last.map(personal::rfc3339),
            made_by,
            made_at,
            last_error: if held { None } else { stat.last_error.clone() },
            held,
            name,
        });
    }
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    let never_called = tools
        .iter()
        .filter(|t| t.calls == 0 && t.last_used.is_none())
        .map(|t| t.name.clone())
        .collect();
    let failing = tools
        .iter()
        .filter(|t| t.errors > t.calls - t.errors)
        .map(|t| t.name.clone())
        .collect();
    let (near_duplicates, near_duplicates_note) = similar::near_duplicates(app, &index, &view);
    Ok(Report {
        toolbox: root.display().to_string(),
        generated: personal::rfc3339(personal::now_secs()),
        tools,
        never_called,
        failing,
        near_duplicates,
        near_duplicates_note,
    })
}
