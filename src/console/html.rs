//! The console's HTML: one layout (navigation, a message line, inline styles — no scripts, no
//! external assets), escaping, and the small pieces pages are made of (forms carrying the CSRF
//! token, diffs, tables).

/// Escape text for HTML (element content and quoted attribute values).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The Content-Security-Policy of every page: nothing loads from anywhere, no script runs,
/// forms post only to the console, no page frames it.
pub const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const STYLE: &str = "
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1d232a;background:#f6f7f9}
header{background:#1d2a3a;color:#fff;padding:.6em 1.5em;display:flex;gap:1.5em;align-items:center}
header b{font-size:1.1em;margin-right:1em}
header a{color:#cfe0ff;text-decoration:none}header a.on{color:#fff;border-bottom:2px solid #7fb0ff}
main{max-width:64em;margin:1.5em auto;padding:0 1.5em}
section.item{background:#fff;border:1px solid #d8dde3;border-radius:6px;padding:1em 1.3em;margin:1em 0}
h1{font-size:1.4em}h2{font-size:1.15em;margin:.2em 0 .5em}
pre{background:#f0f2f5;padding:.6em;overflow:auto;max-height:28em;font-size:13px;border-radius:4px}
.add{color:#116329;background:#e6ffec;display:block}.del{color:#82071e;background:#ffebe9;display:block}
ul.asks li{margin:.2em 0}
form.inline{display:inline-block;margin:.3em .5em .3em 0}
button{font:inherit;padding:.35em .9em;border-radius:4px;border:1px solid #8a96a3;background:#fff;cursor:pointer}
button.ok{background:#1f7a3a;color:#fff;border-color:#1f7a3a}button.no{background:#a32626;color:#fff;border-color:#a32626}
table{border-collapse:collapse;width:100%;background:#fff}td,th{border:1px solid #d8dde3;padding:.3em .5em;text-align:left;vertical-align:top;font-size:14px}
.msg{background:#fff8c5;border:1px solid #d4a72c;padding:.5em 1em;border-radius:4px}
.err{background:#ffebe9;border:1px solid #cf222e;padding:.5em 1em;border-radius:4px}
section:target,code:target{outline:3px solid #d4a72c;outline-offset:3px}
.muted{color:#59636e}input[type=text],input[type=password]{font:inherit;padding:.3em;min-width:16em}
";

/// The pages of the navigation bar: (path, label).
pub const NAV: &[(&str, &str)] = &[
    ("/approvals", "Approvals"),
    ("/held", "Held tools"),
    ("/secrets", "Secrets"),
    ("/audit", "Audit log"),
    ("/tools", "Tools"),
    ("/health", "Health"),
];

/// A whole page. `active` is the path of its navigation entry; `msg` a note shown on top.
pub fn page(title: &str, active: &str, msg: Option<&str>, body: &str) -> String {
    let nav: String = NAV
        .iter()
        .map(|(p, l)| {
            let on = if *p == active { " class=\"on\"" } else { "" };
            format!("<a href=\"{p}\"{on}>{l}</a>")
        })
        .collect();
    let msg = msg
        .map(|m| format!("<p class=\"msg\">{}</p>", escape(m)))
        .unwrap_or_default();
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t} · toolsmith console</title><style>{STYLE}</style></head>\
         <body><header><b>toolsmith console</b>{nav}</header><main><h1>{t}</h1>{msg}{body}</main></body></html>",
        t = escape(title)
    )
}

/// A page outside the session (refusals, the login's errors).
pub fn bare(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title><style>{STYLE}</style></head>\
         <body><main><h1>{t}</h1>{body}</main></body></html>",
        t = escape(title)
    )
}

/// A form posting `fields` (name, value) and the CSRF token to `action`, as one button.
pub fn button_form(
    action: &str,
    csrf: &str,
    fields: &[(&str, &str)],
    label: &str,
    class: &str,
) -> String {
    let hidden: String = fields
        .iter()
        .map(|(k, v)| {
            format!(
                "<input type=\"hidden\" name=\"{}\" value=\"{}\">",
                escape(k),
                escape(v)
            )
        })
        .collect();
    format!(
        "<form class=\"inline\" method=\"post\" action=\"{action}\"><input type=\"hidden\" name=\"csrf\" value=\"{}\">{hidden}<button type=\"submit\" class=\"{class}\">{}</button></form>",
        escape(csrf),
        escape(label)
    )
}

/// A unified diff, its added and removed lines marked.
pub fn diff(unified: &str) -> String {
    if unified.trim().is_empty() {
        return "<p class=\"muted\">(no difference)</p>".into();
    }
    let lines: String = unified
        .lines()
        .map(|l| {
            let class = if l.starts_with('+') && !l.starts_with("+++") {
                "add"
            } else if l.starts_with('-') && !l.starts_with("---") {
                "del"
            } else {
                ""
            };
            if class.is_empty() {
                format!("{}\n", escape(l))
            } else {
                format!("<span class=\"{class}\">{}</span>", escape(l))
            }
        })
        .collect();
    format!("<pre>{lines}</pre>")
}

/// A table with a header row; cells are HTML already.
pub fn table(head: &[&str], rows: &[Vec<String>]) -> String {
    let th: String = head
        .iter()
        .map(|h| format!("<th>{}</th>", escape(h)))
        .collect();
    let body: String = rows
        .iter()
        .map(|r| {
            format!(
                "<tr>{}</tr>",
                r.iter()
                    .map(|c| format!("<td>{c}</td>"))
                    .collect::<String>()
            )
        })
        .collect();
    format!("<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_everywhere() {
        let p = page("<x>", "/approvals", Some("\"m\""), "");
        assert!(p.contains("&lt;x&gt;") && p.contains("&quot;m&quot;"));
        let f = button_form("/a", "t\"", &[("name", "<b>")], "Go", "ok");
        assert!(f.contains("value=\"&lt;b&gt;\"") && f.contains("value=\"t&quot;\""));
        let d = diff("--- a\n+++ b\n-old <i>\n+new\n ctx");
        assert!(
            d.contains("<span class=\"del\">-old &lt;i&gt;</span>"),
            "{d}"
        );
        assert!(!p.contains("<script"));
    }
}
