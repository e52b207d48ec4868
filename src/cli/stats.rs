//! `toolsmith stats`: the toolbox's health report (`health::report`) as a table, or `--json`.

use super::output;
use crate::app::App;
use crate::health::Report;
use anyhow::Result;

/// Print the report of `app`'s toolbox.
pub(super) fn stats(app: &App, as_json: bool) -> Result<i32> {
    let report = crate::health::report(app).map_err(|e| {
        super::UserErrorRef::new(
            format!("cannot read the audit log or the health record: {e}"),
            "`toolsmith doctor` checks the personal directory (TOOLSMITH_DATA)",
        )
    })?;
    if as_json {
        output::json(&serde_json::to_value(&report)?);
    } else {
        print!("{}", table(&report));
    }
    Ok(0)
}

fn ms(v: Option<u64>) -> String {
    v.map_or("-".into(), |v| format!("{v} ms"))
}

/// The report as text: one row per tool, then what needs attention.
pub fn table(r: &Report) -> String {
    let mut rows = vec![[
        "tool".to_string(),
        "kind".into(),
        "calls".into(),
        "errors".into(),
        "p50".into(),
        "p95".into(),
        "last used".into(),
        "made by".into(),
        "made".into(),
    ]];
    for t in &r.tools {
        rows.push([
            t.name.clone(),
            t.kind.clone(),
            t.calls.to_string(),
            if t.calls == 0 {
                "-".into()
            } else {
                format!("{} ({:.0}%)", t.errors, t.error_rate * 100.0)
            },
            ms(t.p50_ms),
            ms(t.p95_ms),
            t.last_used.clone().unwrap_or_else(|| "never".into()),
            t.made_by.clone().unwrap_or_default(),
            t.made_at.clone().unwrap_or_default(),
        ]);
    }
    let widths: Vec<usize> = (0..9)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    let list = |items: &[String]| {
        if items.is_empty() {
            "none".to_string()
        } else {
            items.join(", ")
        }
    };
    out.push_str(&format!("\nnever called: {}\n", list(&r.never_called)));
    out.push_str(&format!(
        "failing (more failures than successes): {}\n",
        list(&r.failing)
    ));
    out.push_str("near-duplicates:");
    if r.near_duplicates.is_empty() {
        out.push_str(" none\n");
    } else {
        out.push('\n');
        for p in &r.near_duplicates {
            out.push_str(&format!(
                "  {} ~ {} ({:.2}): {}\n",
                p.a,
                p.b,
                p.similarity,
                p.differs.join("; ")
            ));
        }
    }
    out.push_str(&format!("  ({})\n", r.near_duplicates_note));
    out
}
