//! Telling the person that a tool waits, through the MCP client (the call's host, so both
//! protocol eras work: a 2025 `elicitation/create` request, a 2026 input-required round).
//!
//! The client is driven by the AI (an agent loop, an auto-accepting harness), so its answer
//! never approves: an accepted elicitation only means the person was told. The person approves
//! where the client has no hand — `toolsmith approve` in a terminal, or the console
//! (`toolsmith console`), whose pages need a session the person opened from their terminal.
//! When a console runs, the question is a URL-mode elicitation with the console's approvals
//! page (the link holds no credential), and the call waits for the decision made there
//! (`wait`: with progress notifications, ended by the decision, a change of the tool or the
//! console stopping); else a form that says how to approve. Declining denies this version (it
//! then runs with the defaults), which takes nothing the AI could want. Only the personal
//! setting `[approvals] elicitation` (off by default) lets a form answer approve the kinds it
//! names. A missing secret is asked for the same way (`secret`): the console's Secrets page,
//! or how to set it. No form asks for a secret value.

use super::{Decision, Gate, Item, Record, request};
use crate::call::host::{Ask, Host, Wants};
use crate::index::Tool;
use serde_json::{Value, json};

/// The choice "approve for this version" (remembered on this machine).
pub const THIS_VERSION: &str = "this version";
/// The choice "approve for this call only" (nothing remembered).
pub const THIS_CALL: &str = "this call only";

pub enum Answer {
    /// Approved (for this version, recorded, or for this call only).
    Approved,
    /// Declined (recorded as a denial of this version).
    Denied,
    /// No answer: the client cannot ask, or the person cancelled.
    Unanswered,
}

/// What changed since the person's last decision, in one line (the full diff is shown by
/// `toolsmith pending`).
pub fn changed_since(gate: &Gate<'_>, name: &str, r: &Record) -> String {
    let when = crate::personal::rfc3339(r.at);
    let Some(commit) = &r.approved_commit else {
        return format!("a person decided on an earlier version on {when}; the tool changed since");
    };
    let short: String = commit.chars().take(8).collect();
    match crate::versions::diff_tool(gate.toolbox, name, commit, "HEAD") {
        Ok(d) if !d.files.is_empty() => format!(
            "changed since the version approved on {when} (commit {short}): {}",
            d.files
                .iter()
                .map(|f| format!("{} {}", f.status, f.path))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => format!(
            "changed since the version approved on {when} (commit {short}); `toolsmith pending` shows the diff"
        ),
    }
}

/// Lines of a changed tool's diff shown in the form (the rest: `toolsmith pending`).
const DIFF_LINES: usize = 60;

/// The unified diff since the last approved version, cut to `DIFF_LINES`.
pub fn diff_since(gate: &Gate<'_>, name: &str, r: &Record) -> Option<String> {
    let commit = r.approved_commit.as_deref()?;
    let d = crate::versions::diff_tool(gate.toolbox, name, commit, "HEAD").ok()?;
    let lines: Vec<&str> = d.unified.lines().collect();
    let mut out = lines[..lines.len().min(DIFF_LINES)].join("\n");
    if lines.len() > DIFF_LINES {
        out.push_str(&format!(
            "\n… {} more lines (`toolsmith pending` shows them all)",
            lines.len() - DIFF_LINES
        ));
    }
    (!out.is_empty()).then_some(out)
}

/// A few lines about the code the person is asked to trust.
fn summary(dir: &std::path::Path, tool: &Tool) -> String {
    let m = &tool.manifest;
    let what = match m.kind {
        crate::manifest::Kind::Wasm => format!(
            "a WebAssembly module ({} bytes, built from src/)",
            std::fs::metadata(dir.join(m.artifact())).map_or(0, |md| md.len())
        ),
        _ => {
            let entry = m.run.entry.as_deref().unwrap_or("main");
            let lines = std::fs::read_to_string(dir.join(entry)).map_or(0, |s| s.lines().count());
            let deps = m.dependencies.pip.len() + m.dependencies.npm.len();
            format!(
                "a {} script ({entry}, {lines} lines, {deps} package dependencies)",
                m.run.language.as_deref().unwrap_or("shell"),
            )
        }
    };
    let hash = m
        .hashes
        .source
        .as_deref()
        .or(m.hashes.artifact.as_deref())
        .unwrap_or("unhashed");
    format!("{what}; {}; content {hash}", m.summary())
}

/// What the person is asked about.
pub struct Question<'a> {
    pub name: &'a str,
    /// The tool's directory.
    pub dir: &'a std::path::Path,
    pub tool: &'a Tool,
    pub items: &'a [Item],
    /// The content hash the answer binds to.
    pub content: &'a str,
    /// What changed since the last decision (one line), and the diff.
    pub changed: Option<&'a str>,
    pub diff: Option<String>,
}

/// The request in words, with the code's summary and what changed (the start of every
/// message to the person).
fn describe(q: &Question<'_>) -> String {
    let mut message = format!(
        "toolsmith: the tool \"{}\" asks for capabilities beyond the defaults.\n\nIt is {}.\n\nIt asks for:\n{}\n",
        q.name,
        summary(q.dir, q.tool),
        request::lines(q.items)
            .iter()
            .map(|l| format!("- {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    if let Some(c) = q.changed {
        message.push_str(&format!("\nThe tool {c}.\n"));
    }
    if let Some(d) = &q.diff {
        message.push_str(&format!(
            "\nWhat changed since the version you approved:\n{d}\n"
        ));
    }
    message
}

fn key(prefix: &str, q: &Question<'_>) -> String {
    format!(
        "{prefix}-{}-{}",
        q.name,
        q.content
            .trim_start_matches("sha256:")
            .get(..16)
            .unwrap_or("")
    )
}

/// Tell the person (and, only where their personal setting allows it, ask them) through the
/// client.
pub async fn person(gate: &Gate<'_>, q: &Question<'_>, host: &dyn Host) -> Answer {
    let settings = crate::personal::Settings::load(gate.personal).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "personal settings ignored: elicitation approves nothing");
        crate::personal::Settings::default()
    });
    if q.items
        .iter()
        .all(|i| settings.elicitation_approves(i.kind()))
    {
        return approve_by_form(gate, q, host).await;
    }
    if let Some(console) = crate::personal::console_address(gate.personal) {
        // None: no URL-mode elicitation here; tell it in a form.
        if let Some(answer) = in_console(gate, q, host, &console).await {
            return answer;
        }
    }
    tell_by_form(gate, q, host).await
}

/// Whether the host's refusal means "asked; the answer comes on the call's retry" (2026).
fn asked_for_retry(e: &crate::error::HostError) -> bool {
    e.message.starts_with("input required")
}

/// A URL-mode elicitation with the console's approvals page; on accept, wait for the person's
/// decision there. None when the client cannot take URL mode.
async fn in_console(
    gate: &Gate<'_>,
    q: &Question<'_>,
    host: &dyn Host,
    console: &str,
) -> Option<Answer> {
    let id = random_id();
    let message = format!(
        "{}\nOnly you can approve this, outside this chat: open the toolsmith console (the browser where you opened its login link from your terminal) and approve or deny {} there; this call waits for your decision. Decline here to run it with the default grants only.",
        describe(q),
        q.name
    );
    let ask = Ask {
        key: key("console", q),
        message,
        wants: Wants::Page {
            url: format!("{console}/approvals#tool-{}", q.name),
            id: id.clone(),
        },
    };
    match host.ask_person(ask).await {
        Ok(a) => match a.get("action").and_then(Value::as_str) {
            Some("accept") => {
                let identity = crate::platform::dir_id(q.dir);
                let waiting = super::wait::Waiting {
                    host,
                    personal: gate.personal,
                    wait: gate.wait,
                    what: format!("approve or deny {}", q.name),
                };
                let decided = || match gate.store().get(q.name) {
                    Ok(Some(r)) if r.content == q.content => Some(match r.decision {
                        Decision::Approved => Answer::Approved,
                        Decision::Denied => Answer::Denied,
                    }),
                    _ => None,
                };
                let changed = || crate::platform::dir_id(q.dir) != identity;
                match waiting.until(decided, changed).await {
                    Ok(answer) => {
                        host.elicitation_complete(&id);
                        Some(answer)
                    }
                    Err(_) => Some(Answer::Unanswered),
                }
            }
            Some("decline") => Some(record_denial(gate, q, "elicitation (declined)")),
            _ => Some(Answer::Unanswered),
        },
        Err(e) if asked_for_retry(&e) => Some(Answer::Unanswered),
        Err(e) => {
            tracing::debug!(tool = q.name, %e, "no URL-mode elicitation");
            None
        }
    }
}

/// A random id for an elicitation (16 hex digits).
fn random_id() -> String {
    crate::platform::random_hex(8)
        .unwrap_or_else(|_| format!("{:016x}", crate::personal::now_secs()))
}

fn record_denial(gate: &Gate<'_>, q: &Question<'_>, via: &str) -> Answer {
    if let Err(e) = gate.decide(q.name, q.content, q.items, Decision::Denied, via) {
        tracing::warn!(tool = q.name, error = %e, "cannot record the person's decision");
    }
    Answer::Denied
}

/// A form that tells what waits and how the person approves it; its only choice is to decline.
async fn tell_by_form(gate: &Gate<'_>, q: &Question<'_>, host: &dyn Host) -> Answer {
    let message = format!(
        "{}\nOnly you can approve this, outside this chat: run `toolsmith console` in a terminal (a page in your browser), or `toolsmith approve {name}` (`toolsmith pending` shows the diff). Then call the tool again. Decline here to run it with the default grants only; accepting changes nothing.",
        describe(q),
        name = q.name
    );
    let ask = Ask {
        key: key("tell", q),
        message,
        wants: Wants::Form(json!({"type": "object", "properties": {}})),
    };
    match host.ask_person(ask).await {
        Ok(a) if a.get("action").and_then(Value::as_str) == Some("decline") => {
            record_denial(gate, q, "elicitation (declined)")
        }
        Ok(_) => Answer::Unanswered,
        Err(why) => {
            tracing::debug!(tool = q.name, %why, "cannot tell the person through the client");
            Answer::Unanswered
        }
    }
}

/// The form whose answer approves: only for the kinds the person's setting names.
async fn approve_by_form(gate: &Gate<'_>, q: &Question<'_>, host: &dyn Host) -> Answer {
    let (name, items, content) = (q.name, q.items, q.content);
    let mut message = describe(q);
    message.push_str("\nApprove it? Decline to run it with the default grants only.");
    let ask = Ask {
        key: key("approve", q),
        message,
        wants: Wants::Form(json!({
            "type": "object",
            "properties": {
                "approve_for": {
                    "type": "string",
                    "title": "Approve for",
                    "enum": [THIS_VERSION, THIS_CALL],
                    "default": THIS_VERSION
                }
            },
            "required": ["approve_for"]
        })),
    };
    let answer = match host.ask_person(ask).await {
        Ok(a) => a,
        Err(why) => {
            tracing::debug!(tool = name, %why, "cannot ask the person through the client");
            return Answer::Unanswered;
        }
    };
    let via = "elicitation (personal setting)";
    match answer.get("action").and_then(Value::as_str) {
        Some("accept") => {
            let scope = answer
                .pointer("/content/approve_for")
                .and_then(Value::as_str)
                .unwrap_or(THIS_VERSION);
            if scope == THIS_CALL {
                crate::audit::Log::new(gate.personal).append(&crate::audit::Entry::decision(
                    gate.toolbox.root(),
                    name,
                    "approved once",
                    via,
                    request::lines(items),
                ));
            } else if let Err(e) = gate.decide(name, content, items, Decision::Approved, via) {
                tracing::warn!(tool = name, error = %e, "cannot record the person's decision");
            }
            Answer::Approved
        }
        Some("decline") => record_denial(gate, q, via),
        _ => Answer::Unanswered,
    }
}

/// Tell the person that the approved tool `name` needs `secret`, which is not set. A console
/// running: a URL-mode elicitation with its Secrets page, and on accept the call waits until
/// the value is set there (or with the CLI). Else a form saying how to set it. The value never
/// passes through the client: no form asks for it, and the console's pages need the person's
/// session. True when the secret is set now.
pub async fn secret(
    gate: &Gate<'_>,
    name: &str,
    secret: &str,
    purpose: &str,
    host: &dyn Host,
) -> bool {
    let purpose = if purpose.is_empty() {
        String::new()
    } else {
        format!(" ({purpose})")
    };
    let is_set = || {
        crate::secrets::Store::new(gate.personal)
            .load()
            .is_ok_and(|all| all.contains_key(secret))
            .then_some(())
    };
    if let Some(console) = crate::personal::console_address(gate.personal) {
        let id = random_id();
        let ask = Ask {
            key: format!("secret-{secret}"),
            message: format!(
                "toolsmith: the tool \"{name}\" needs the secret {secret}{purpose}, which is not set on this machine. Only you can set it, outside this chat: on the Secrets page of the toolsmith console (the browser where you opened its login link from your terminal); this call waits for it. The value is stored by toolsmith on this machine and never passes through the AI. Decline here to leave it unset."
            ),
            wants: Wants::Page {
                url: format!("{console}/secrets#secret-{secret}"),
                id: id.clone(),
            },
        };
        match host.ask_person(ask).await {
            Ok(a) if a.get("action").and_then(Value::as_str) == Some("accept") => {
                let waiting = super::wait::Waiting {
                    host,
                    personal: gate.personal,
                    wait: gate.wait,
                    what: format!("set the secret {secret}"),
                };
                let set = waiting.until(is_set, || false).await.is_ok();
                if set {
                    host.elicitation_complete(&id);
                }
                return set;
            }
            // Declined or cancelled; or asked, with the answer on the call's retry (2026).
            Ok(_) => return false,
            Err(e) if asked_for_retry(&e) => return false,
            Err(e) => tracing::debug!(tool = name, %e, "no URL-mode elicitation"),
        }
    }
    let ask = Ask {
        key: format!("secret-tell-{secret}"),
        message: format!(
            "toolsmith: the tool \"{name}\" needs the secret {secret}{purpose}, which is not set on this machine. Only you can set it, outside this chat: run `toolsmith console` in a terminal (a page in your browser) or `toolsmith secret set {secret}`; the value is stored on this machine and never passes through the AI. Then call the tool again."
        ),
        wants: Wants::Form(json!({"type": "object", "properties": {}})),
    };
    if let Err(why) = host.ask_person(ask).await {
        tracing::debug!(tool = name, %why, "cannot tell the person through the client");
    }
    is_set().is_some()
}
