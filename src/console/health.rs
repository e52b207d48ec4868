//! The console's Health page: the report `toolsmith stats` prints (`health::report`), with
//! charts drawn as inline SVG on the server (the console loads no script and no asset):
//! calls per tool (failures in red), p50 and p95 durations, and what needs attention —
//! tools failing more than they succeed, tools never called, near-duplicates.

use super::html::{escape, table};
use crate::app::App;
use crate::health::{Report, ToolHealth};

/// Tools a chart shows (the most called, or the slowest).
const CHART_ROWS: usize = 20;
const OK: &str = "#1f7a3a";
const ERR: &str = "#a32626";
const P50: &str = "#2f5f98";
const P95: &str = "#9db8dc";

/// A bar's segment: its value, colour and what it is.
type Segment<'a> = (f64, &'a str, &'a str);
/// A chart's row: its label and segments.
type Row<'a> = (String, Vec<Segment<'a>>);

/// One bar chart: a row per (label, segments), segments stacked left to right, each (value,
/// colour, what it is); the axis ends at the largest row. `unit` follows the totals.
fn bars(id: &str, caption: &str, rows: &[Row<'_>], unit: &str) -> String {
    if rows.is_empty() {
        return format!(
            "<p class=\"muted\">{}: nothing to show yet.</p>",
            escape(caption)
        );
    }
    let (label_w, bar_w, row_h) = (190.0, 460.0, 22.0);
    let max = rows
        .iter()
        .map(|(_, s)| s.iter().map(|x| x.0).sum::<f64>())
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    let height = row_h * rows.len() as f64 + 8.0;
    let mut svg = format!(
        "<figure id=\"{id}\"><figcaption>{}</figcaption><svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" width=\"{w}\" height=\"{height}\" viewBox=\"0 0 {w} {height}\" font-size=\"12\" font-family=\"system-ui,sans-serif\">",
        escape(caption),
        w = label_w + bar_w + 90.0
    );
    for (i, (label, segments)) in rows.iter().enumerate() {
        let y = 4.0 + row_h * i as f64;
        svg.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            label_w - 6.0,
            y + 14.0,
            escape(label)
        ));
        let mut x = label_w;
        for (value, colour, what) in segments {
            let w = bar_w * value / max;
            if w > 0.0 {
                svg.push_str(&format!(
                    "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{}\" fill=\"{colour}\"><title>{}: {}</title></rect>",
                    row_h - 6.0,
                    escape(label),
                    escape(&format!("{value} {what}"))
                ));
            }
            x += w;
        }
        let total: f64 = segments.iter().map(|s| s.0).sum();
        svg.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{}\">{} {}</text>",
            x + 6.0,
            y + 14.0,
            total,
            escape(unit)
        ));
    }
    svg.push_str("</svg></figure>");
    svg
}

fn legend(items: &[(&str, &str)]) -> String {
    let spans: String = items
        .iter()
        .map(|(c, l)| {
            format!(
                "<span><svg width=\"10\" height=\"10\"><rect width=\"10\" height=\"10\" fill=\"{c}\"/></svg> {}</span> ",
                escape(l)
            )
        })
        .collect();
    format!("<p class=\"muted\">{spans}</p>")
}

fn calls_chart(tools: &[&ToolHealth]) -> String {
    let mut by_calls: Vec<&&ToolHealth> = tools.iter().filter(|t| t.calls > 0).collect();
    by_calls.sort_by(|a, b| b.calls.cmp(&a.calls).then(a.name.cmp(&b.name)));
    let rows: Vec<Row<'_>> = by_calls
        .iter()
        .take(CHART_ROWS)
        .map(|t| {
            (
                t.name.clone(),
                vec![
                    ((t.calls - t.errors) as f64, OK, "succeeded"),
                    (t.errors as f64, ERR, "failed"),
                ],
            )
        })
        .collect();
    bars(
        "calls",
        "Calls per tool (most called first)",
        &rows,
        "calls",
    ) + &legend(&[(OK, "succeeded"), (ERR, "failed")])
}

fn durations_chart(tools: &[&ToolHealth]) -> String {
    let mut timed: Vec<&&ToolHealth> = tools.iter().filter(|t| t.p95_ms.is_some()).collect();
    timed.sort_by(|a, b| b.p95_ms.cmp(&a.p95_ms).then(a.name.cmp(&b.name)));
    let rows: Vec<Row<'_>> = timed
        .iter()
        .take(CHART_ROWS)
        .map(|t| {
            let (p50, p95) = (t.p50_ms.unwrap_or(0) as f64, t.p95_ms.unwrap_or(0) as f64);
            (
                t.name.clone(),
                vec![
                    (p50, P50, "ms p50"),
                    ((p95 - p50).max(0.0), P95, "ms more at p95"),
                ],
            )
        })
        .collect();
    bars(
        "durations",
        "Duration of recent calls (slowest first): p50, then p95",
        &rows,
        "ms (p95)",
    ) + &legend(&[(P50, "p50"), (P95, "p95")])
}

fn names(list: &[String]) -> String {
    if list.is_empty() {
        "<p class=\"muted\">None.</p>".into()
    } else {
        let items: String = list
            .iter()
            .map(|n| format!("<li><a href=\"/tools/{0}\">{0}</a></li>", escape(n)))
            .collect();
        format!("<ul>{items}</ul>")
    }
}

/// The page for `r`.
pub fn render(r: &Report) -> String {
    let tools: Vec<&ToolHealth> = r.tools.iter().collect();
    let mut out = format!(
        "<p class=\"muted\">{} tools; figures from this machine's audit log, made {}.</p>",
        r.tools.len(),
        escape(&r.generated)
    );
    out.push_str("<section class=\"item\" id=\"failing\"><h2>Failing more than they succeed</h2>");
    if r.failing.is_empty() {
        out.push_str("<p class=\"muted\">None.</p>");
    } else {
        let rows: Vec<Vec<String>> = r
            .tools
            .iter()
            .filter(|t| r.failing.contains(&t.name))
            .map(|t| {
                vec![
                    format!("<a href=\"/tools/{0}\">{0}</a>", escape(&t.name)),
                    format!("{} of {}", t.errors, t.calls),
                    escape(t.last_error.as_deref().unwrap_or("")),
                ]
            })
            .collect();
        out.push_str(&table(&["tool", "failed", "last error"], &rows));
    }
    out.push_str("</section>");
    out.push_str(&format!(
        "<section class=\"item\" id=\"never-called\"><h2>Never called since they were made</h2>{}</section>",
        names(&r.never_called)
    ));
    out.push_str("<section class=\"item\" id=\"near-duplicates\"><h2>Near-duplicates</h2>");
    if r.near_duplicates.is_empty() {
        out.push_str("<p class=\"muted\">None.</p>");
    } else {
        let rows: Vec<Vec<String>> = r
            .near_duplicates
            .iter()
            .map(|p| {
                vec![
                    escape(&p.a),
                    escape(&p.b),
                    format!("{:.2}", p.similarity),
                    escape(&p.differs.join("; ")),
                ]
            })
            .collect();
        out.push_str(&table(
            &["tool", "looks like", "similarity", "what differs"],
            &rows,
        ));
    }
    out.push_str(&format!(
        "<p class=\"muted\">{}</p></section>",
        escape(&r.near_duplicates_note)
    ));
    out.push_str(&format!(
        "<section class=\"item\" id=\"charts\"><h2>Use</h2>{}{}</section>",
        calls_chart(&tools),
        durations_chart(&tools)
    ));
    let rows: Vec<Vec<String>> = r
        .tools
        .iter()
        .map(|t| {
            let ms = |v: Option<u64>| v.map_or("-".into(), |v| format!("{v} ms"));
            vec![
                format!("<a href=\"/tools/{0}\">{0}</a>", escape(&t.name)),
                escape(&t.kind),
                t.calls.to_string(),
                if t.calls == 0 {
                    "-".into()
                } else {
                    format!("{:.0}%", t.error_rate * 100.0)
                },
                ms(t.p50_ms),
                ms(t.p95_ms),
                escape(t.last_used.as_deref().unwrap_or("never")),
                escape(t.made_by.as_deref().unwrap_or("")),
                escape(t.made_at.as_deref().unwrap_or("")),
            ]
        })
        .collect();
    out.push_str(&format!(
        "<section class=\"item\" id=\"all-tools\"><h2>Every tool</h2>{}</section>",
        table(
            &[
                "tool",
                "kind",
                "calls",
                "errors",
                "p50",
                "p95",
                "last used",
                "made by",
                "made"
            ],
            &rows
        )
    ));
    out
}

/// The Health page of `app`'s toolbox.
pub fn page(app: &App) -> String {
    match crate::health::report(app) {
        Ok(r) => render(&r),
        Err(e) => format!(
            "<p class=\"err\">Cannot read the audit log or the health record: {}</p>",
            escape(&e.to_string())
        ),
    }
}
