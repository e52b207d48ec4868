//! The console's pages, rendered from the same library functions the CLI commands use:
//! `approval::status` (pending, approve, deny), `trust` (held tools, review, trust),
//! `secrets::Store` (set, remove, which tools use each), `audit::Log` (filtered by tool and
//! time), `history` (each tool's versions with diffs, rollback).

use super::html::{self, button_form, diff, escape, table};
use crate::app::App;
use crate::approval::{self, Decision};

/// Bytes of one source file shown on the approvals page (the rest: the file itself).
const SOURCE_BYTES: usize = 48 * 1024;
/// Versions listed on a tool's page.
const VERSIONS: usize = 30;

fn error_note(e: impl std::fmt::Display) -> String {
    format!("<p class=\"err\">{}</p>", escape(&e.to_string()))
}

/// The text files of a tool as they are on disk (what an approval binds to).
fn sources(app: &App, name: &str) -> String {
    let dir = app.toolbox.tools_dir().join(name);
    let mut out = String::new();
    for entry in crate::hashing::walk_tool_dir(&dir).flatten() {
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(&dir)
            .map(|r| r.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        let Ok(bytes) = std::fs::read(entry.path()) else {
            continue;
        };
        let shown = &bytes[..bytes.len().min(SOURCE_BYTES)];
        let body = if shown.contains(&0) {
            format!("({} bytes, binary)", bytes.len())
        } else {
            let mut t = String::from_utf8_lossy(shown).into_owned();
            if bytes.len() > SOURCE_BYTES {
                t.push_str(&format!("\n… {} more bytes", bytes.len() - SOURCE_BYTES));
            }
            t
        };
        out.push_str(&format!(
            "<details open><summary><code>{}</code></summary><pre>{}</pre></details>",
            escape(&rel),
            escape(&body)
        ));
    }
    out
}

/// Pending approvals: the tool, what it asks in words, its source and the diff since the last
/// approved version; approve this version or deny.
pub fn approvals(app: &App, csrf: &str) -> String {
    let gate = app.gate();
    let index = app.index();
    let pending = match approval::status::pending(&gate, &index) {
        Ok(p) => p,
        Err(e) => return error_note(e),
    };
    let (refs, refs_waiting) = references(app, csrf);
    let mut out = String::new();
    if pending.is_empty() && !refs_waiting {
        out.push_str("<p>Nothing waits for your approval.</p>");
    }
    for s in &pending {
        let name = &s.name;
        let description = index
            .get(name)
            .and_then(|e| e.tool())
            .map(|t| t.manifest.description.clone())
            .unwrap_or_default();
        let asks: String = s
            .lines()
            .iter()
            .map(|l| format!("<li>{}</li>", escape(l)))
            .collect();
        let previous = match &s.record {
            Some(r) => format!(
                "<p class=\"muted\">You {} an earlier version on {}; the tool changed since. The diff since the version you approved:</p>{}",
                match r.decision {
                    Decision::Approved => "approved",
                    Decision::Denied => "denied",
                },
                escape(&crate::personal::rfc3339(r.at)),
                diff(&approval::status::diff_since_approved(&gate, s))
            ),
            None => {
                "<p class=\"muted\">No version of this tool was approved here before.</p>".into()
            }
        };
        let fields = [("name", name.as_str()), ("content", s.content.as_str())];
        out.push_str(&format!(
            "<section class=\"item pending\" id=\"tool-{n}\"><h2>{n}</h2><p>{d}</p>\
             <p>It asks for:</p><ul class=\"asks\">{asks}</ul><p>{ok}{no}</p>\
             <p class=\"muted\">Version {c}. Any change asks again.</p>{previous}\
             <p>Its files, as they are now (the approval binds to exactly these):</p>{src}</section>",
            n = escape(name),
            d = escape(&description),
            src = sources(app, name),
            ok = button_form("/approve", csrf, &fields, "Approve this version", "ok"),
            no = button_form("/deny", csrf, &fields, "Deny", "no"),
            c = escape(&s.content),
        ));
    }
    out.push_str(&refs);
    out
}

/// Direct references (a local path or an archive URL as a tool's dependency): those refused
/// for a tool, to allow; those allowed, to take back. Whether any waits.
fn references(app: &App, csrf: &str) -> (String, bool) {
    let (allowed, waiting) = match approval::references::listing(&app.gate()) {
        Ok(l) => l,
        Err(e) => return (error_note(e), false),
    };
    let mut out = String::new();
    for r in &waiting {
        let fields = [
            ("tool", r.tool.as_str()),
            ("ecosystem", r.ecosystem.as_str()),
            ("spec", r.spec.as_str()),
        ];
        let how = if r.kind == "path" {
            "Allowing reads the path now and pins what it holds: if it changes later, the tool is refused again until you allow it anew."
        } else {
            "Allowing lets toolsmith download it once, through its proxy, and pins what that download got."
        };
        out.push_str(&format!(
            "<section class=\"item pending\" id=\"reference-{n}\"><h2>{n}: a direct reference</h2>\
             <p>The tool asks for the {eco} dependency <code>{spec}</code>, which is not a package from the registry.</p>\
             <p class=\"muted\">Refused {at}: {reason}. {how} It is installed contained: copied or fetched by toolsmith, built and installed offline in the sandbox, for this tool only.</p>\
             <p>{ok}</p><p class=\"muted\">In a terminal: <code>{cmd}</code></p></section>",
            n = escape(&r.tool),
            eco = escape(r.ecosystem.as_str()),
            spec = escape(&r.spec),
            at = escape(&crate::personal::rfc3339(r.at)),
            reason = escape(&r.reason),
            ok = button_form("/references/allow", csrf, &fields, &format!("Allow for {}", r.tool), "ok"),
            cmd = escape(&r.command()),
        ));
    }
    if !allowed.is_empty() {
        let rows: Vec<Vec<String>> = allowed
            .iter()
            .map(|a| {
                let fields = [
                    ("tool", a.tool.as_str()),
                    ("ecosystem", a.ecosystem.as_str()),
                    ("spec", a.spec.as_str()),
                ];
                vec![
                    escape(&a.tool),
                    format!(
                        "{} <code>{}</code>",
                        escape(a.ecosystem.as_str()),
                        escape(&a.spec)
                    ),
                    escape(
                        a.digest
                            .as_deref()
                            .unwrap_or("pinned at its first download"),
                    ),
                    escape(&format!("{} via {}", crate::personal::rfc3339(a.at), a.via)),
                    button_form("/references/remove", csrf, &fields, "Take back", "no"),
                ]
            })
            .collect();
        out.push_str(&format!(
            "<section class=\"item\"><h2>Direct references you allowed</h2>{}</section>",
            table(&["Tool", "Dependency", "Pinned to", "Allowed", ""], &rows)
        ));
    }
    (out, !waiting.is_empty())
}

/// Held tools (arrived through sync, pull or import, not signed by an allowed key): the review
/// diff since the last trusted version; trust.
pub fn held(app: &App, csrf: &str) -> String {
    let view = app.view();
    let held = view.held();
    if held.is_empty() {
        return "<p>No tool is held: every tool's version is trusted on this machine.</p>".into();
    }
    let mut out = String::new();
    for h in &held {
        let review = match crate::trust::review(&app.toolbox, &h.name) {
            Ok(r) => {
                let since = match &r.since {
                    Some(c) => format!(
                        "Changes since the version last trusted here ({}):",
                        escape(&c[..c.len().min(10)])
                    ),
                    None => "No version was ever trusted here; the whole tool:".into(),
                };
                let commits: String = r
                    .commits
                    .iter()
                    .map(|c| {
                        format!(
                            "<li><code>{}</code> {} ({})</li>",
                            escape(&c.commit[..c.commit.len().min(10)]),
                            escape(&c.summary),
                            escape(&c.author)
                        )
                    })
                    .collect();
                format!("<p>{since}</p><ul>{commits}</ul>{}", diff(&r.diff))
            }
            Err(e) => error_note(e),
        };
        out.push_str(&format!(
            "<section class=\"item held\" id=\"tool-{n}\"><h2>{n}</h2><p>{reason}</p><p class=\"muted\">commit {short} by {author}: {summary}</p>{review}<p>{trust}</p></section>",
            n = escape(&h.name),
            reason = escape(&h.reason),
            short = escape(&h.short),
            author = escape(&h.author),
            summary = escape(&h.summary),
            trust = button_form("/trust", csrf, &[("name", &h.name)], "Trust this version", "ok"),
        ));
    }
    out
}

/// Secrets: set (typed here, never shown back) and remove; which tools use each.
pub fn secrets(app: &App, csrf: &str) -> String {
    let store = crate::secrets::Store::new(app.personal_dir());
    let rows = match approval::status::secrets_listing(&store, &app.index()) {
        Ok(r) => r,
        Err(e) => return error_note(e),
    };
    let set_form = |name: &str| {
        format!(
            "<form class=\"inline\" method=\"post\" action=\"/secrets/set\"><input type=\"hidden\" name=\"csrf\" value=\"{}\"><input type=\"hidden\" name=\"name\" value=\"{n}\"><input type=\"password\" name=\"value\" autocomplete=\"off\" required aria-label=\"value of {n}\"> <button type=\"submit\">Set</button></form>",
            escape(csrf),
            n = escape(name)
        )
    };
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|u| {
            let remove = if u.set {
                button_form(
                    "/secrets/remove",
                    csrf,
                    &[("name", &u.name)],
                    "Remove",
                    "no",
                )
            } else {
                String::new()
            };
            vec![
                format!("<code id=\"secret-{0}\">{0}</code>", escape(&u.name)),
                if u.set {
                    "set".into()
                } else {
                    "<b>not set</b>".into()
                },
                escape(&u.tools.join(", ")),
                format!("{}{remove}", set_form(&u.name)),
            ]
        })
        .collect();
    format!(
        "<p>Values are stored on this machine only (mode 0600), injected only into approved tools that declare them, and never shown here again.</p>{}\
         <section class=\"item\"><h2>Set another secret</h2><form method=\"post\" action=\"/secrets/set\"><input type=\"hidden\" name=\"csrf\" value=\"{}\">\
         <input type=\"text\" name=\"name\" placeholder=\"NAME\" required pattern=\"[A-Z][A-Z0-9_]*\"> <input type=\"password\" name=\"value\" autocomplete=\"off\" required placeholder=\"value\"> <button type=\"submit\">Set</button></form></section>",
        if body.is_empty() {
            "<p>No secret is set or declared.</p>".into()
        } else {
            table(&["Name", "Value", "Used by", ""], &body)
        },
        escape(csrf)
    )
}

/// The audit log, filtered by tool and time (newest first).
pub fn audit(app: &App, tool: Option<&str>, since: Option<&str>) -> String {
    let since_secs = since
        .filter(|s| !s.is_empty())
        .map(crate::audit::parse_since);
    if since_secs == Some(None) {
        return format!(
            "{}{}",
            filter_form(tool, since),
            error_note(
                "\"since\" is not a time: give an RFC 3339 time (2026-01-31T12:00:00Z) or an age such as 30m, 2h or 7d"
            )
        );
    }
    let log = crate::audit::Log::new(app.personal_dir());
    let entries = match log.read(tool.filter(|t| !t.is_empty()), since_secs.flatten()) {
        Ok(e) => e,
        Err(e) => return error_note(e),
    };
    let rows: Vec<Vec<String>> = entries
        .iter()
        .rev()
        .take(500)
        .map(|e| {
            let outcome = if e.event == "call" {
                format!(
                    "{} {}ms{}",
                    e.outcome,
                    e.ms,
                    e.error
                        .as_deref()
                        .map(|x| format!(": {x}"))
                        .unwrap_or_default()
                )
            } else {
                format!("via {}", e.via)
            };
            [
                crate::personal::rfc3339(e.time),
                e.event.clone(),
                e.tool.clone(),
                e.actor.clone(),
                e.grants.join("; "),
                outcome,
            ]
            .iter()
            .map(|c| escape(c))
            .collect()
        })
        .collect();
    format!(
        "{}<p class=\"muted\">{} entries{}</p>{}",
        filter_form(tool, since),
        entries.len(),
        if entries.len() > 500 {
            " (the newest 500 shown)"
        } else {
            ""
        },
        table(
            &["Time", "Event", "Tool", "Actor", "Grants", "Outcome"],
            &rows
        )
    )
}

fn filter_form(tool: Option<&str>, since: Option<&str>) -> String {
    format!(
        "<form method=\"get\" action=\"/audit\">Tool <input type=\"text\" name=\"tool\" value=\"{}\"> since <input type=\"text\" name=\"since\" value=\"{}\" placeholder=\"2h, 7d or 2026-01-31T12:00:00Z\"> <button type=\"submit\">Filter</button></form>",
        escape(tool.unwrap_or("")),
        escape(since.unwrap_or(""))
    )
}

/// Every tool, with a link to its history.
pub fn tools(app: &App) -> String {
    let index = app.index();
    let rows: Vec<Vec<String>> = index
        .tools()
        .map(|t| {
            let n = escape(&t.manifest.name);
            vec![
                format!("<a href=\"/tools/{n}\">{n}</a>"),
                escape(&t.manifest.description),
            ]
        })
        .collect();
    if rows.is_empty() {
        return "<p>This toolbox has no tools yet.</p>".into();
    }
    table(&["Tool", "Description"], &rows)
}

/// One tool's versions, each with its diff from the version before, and rollback.
pub fn tool(app: &App, name: &str, csrf: &str) -> String {
    let versions = match crate::history::tool_history(&app.toolbox, name, VERSIONS) {
        Ok(v) => v,
        Err(e) => return error_note(e),
    };
    let mut out = String::new();
    for (i, v) in versions.iter().enumerate() {
        let short = &v.commit[..v.commit.len().min(10)];
        let d = match versions.get(i + 1) {
            Some(prev) => {
                match crate::history::diff_tool(&app.toolbox, name, &prev.commit, &v.commit) {
                    Ok(d) => diff(&d.unified),
                    Err(e) => error_note(e),
                }
            }
            None => "<p class=\"muted\">(the first version)</p>".into(),
        };
        let rollback = if i == 0 {
            "<p class=\"muted\">the current version</p>".to_string()
        } else {
            button_form(
                "/rollback",
                csrf,
                &[("name", name), ("revision", &v.commit)],
                "Roll back to this version",
                "",
            )
        };
        out.push_str(&format!(
            "<section class=\"item version\"><h2><code>{}</code> {}</h2><p class=\"muted\">{} · {}{}</p><details{}><summary>diff</summary>{d}</details>{rollback}</section>",
            escape(short),
            escape(&v.message),
            escape(&v.date),
            escape(&v.author),
            v.actor
                .as_deref()
                .map(|a| format!(" · actor {}", escape(a)))
                .unwrap_or_default(),
            if i == 0 { " open" } else { "" },
        ));
    }
    if versions.is_empty() {
        out.push_str("<p>No versions.</p>");
    }
    out
}

/// The page's title and navigation entry for `path`.
pub fn title(path: &str) -> (&'static str, &'static str) {
    html::NAV
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(p, l)| (*l, *p))
        .unwrap_or(("Tools", "/tools"))
}
