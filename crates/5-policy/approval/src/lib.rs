//! The approval gate: no capability beyond the defaults without a person's approval on this
//! machine.
//!
//! Every call of a stored tool passes `admit` (from `App::run_tool_at`). A tool that asks for
//! nothing beyond the defaults (`request::requested` is empty) runs at once. Otherwise the
//! person's decision for the tool's *exact content* (`content_hash`: the requests, tool.toml,
//! source, lockfiles, artifact) decides: approved → the manifest as written, plus the values of
//! its declared secrets; denied → the defaults only (with a warning); none → the person is told
//! through MCP elicitation when the client supports it (`ask`: the console's link, or how to
//! approve; declining denies), and the call is refused with what waits and how to approve it.
//! An answer through the MCP client never approves (the AI drives that client), except for
//! the kinds of grant the person's own setting `[approvals] elicitation` names. Decisions are
//! made with `toolsmith approve`/`deny` or in the console (`status::decide`), live in the
//! personal directory (`store`), never in git; no meta-tool writes them.
//!
//! Calls from a build's or registration's work directory (examples before the commit) run
//! with the defaults, unless the same content is already approved. After the call, `Call`
//! redacts secret values from the output, logs and errors, and appends the call to the audit
//! log.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The crates below, under the names the code map gives them.
use toolsmith_audit as audit;
use toolsmith_call as call;
use toolsmith_deps as deps;
use toolsmith_error as error;
use toolsmith_git as git;
use toolsmith_hashing as hashing;
use toolsmith_index as index;
use toolsmith_manifest as manifest;
use toolsmith_names as names;
use toolsmith_personal as personal;
use toolsmith_platform as platform;
use toolsmith_secrets as secrets;
use toolsmith_toolbox as toolbox;
use toolsmith_versions as versions;

mod admitted;
mod ask;
mod host;
pub mod references;
pub mod request;
pub mod status;
pub mod store;
mod wait;

pub use admitted::Call;
pub use host::Redacting;
pub use request::{Item, requested};
pub use status::{DecideError, Status};
pub use store::{Decision, Record, Store};

use crate::call::Granted;
use crate::call::host::Host;
use crate::index::{Origin, Tool};
use crate::secrets::{Redactor, SecretEnv};
use crate::toolbox::Toolbox;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Instant;
use thiserror::Error;

/// Why the gate stopped a call.
#[derive(Debug, Error)]
pub enum GateError {
    /// The tool asks for what no person approved for this version.
    #[error(
        "tool {name:?} was not run: it asks for what a person has not approved on this machine: {}{}",
        waiting.join("; "),
        changed.as_ref().map(|c| format!(" ({c})")).unwrap_or_default()
    )]
    Pending {
        /// The tool.
        name: String,
        /// What waits for approval, in words.
        waiting: Vec<String>,
        /// Set when an earlier version was approved: what changed since.
        changed: Option<String>,
    },
    /// A secret the tool declares has no value here.
    #[error("tool {name:?} needs the secret {secret}, which is not set on this machine")]
    MissingSecret {
        /// The tool.
        name: String,
        /// The secret's name.
        secret: String,
    },
    /// A granted path would include toolsmith's private directory.
    #[error(
        "tool {name:?} was not run: its {what} access to {path} would include toolsmith's private directory ({personal}), where approvals and secret values are kept"
    )]
    Private {
        /// The tool.
        name: String,
        /// `read` or `write`.
        what: &'static str,
        /// The path it asks for.
        path: String,
        /// The private directory.
        personal: String,
    },
    /// The approvals or secrets cannot be read (fail closed).
    #[error(
        "tool {name:?} was not run: the approvals or secrets of this machine cannot be read: {message}"
    )]
    Unreadable {
        /// The tool.
        name: String,
        /// Why.
        message: String,
        /// The private directory.
        dir: std::path::PathBuf,
    },
    /// A call's error as the gate passes it on: secret values replaced, and a note when the
    /// call ran with fewer grants than its tool asks for.
    #[error("{message}")]
    Rewritten {
        /// The message, redacted.
        message: String,
        /// Its hint, redacted.
        hint: Option<String>,
    },
}

impl crate::error::Hint for GateError {
    fn hint(&self) -> Option<String> {
        match self {
            GateError::Pending { name, .. } => Some(format!(
                "only a person can approve this, in their own terminal, never the AI or its MCP client: `toolsmith console` opens a page in the browser with what waits (its source and the diff since the last approved version) to approve or deny; or `toolsmith pending` shows it, `toolsmith approve {name}` approves this version, `toolsmith deny {name}` denies it (the tool then runs with the default grants). Then call the tool again"
            )),
            GateError::MissingSecret { secret, .. } => Some(format!(
                "a person sets it in a terminal with `toolsmith secret set {secret}` (the value is read without echo and never stored in git), or on the Secrets page of `toolsmith console`; then call the tool again"
            )),
            GateError::Unreadable { dir, .. } => Some(format!(
                "check the files under {} (they must be readable by you)",
                dir.display()
            )),
            GateError::Rewritten { hint, .. } => hint.clone(),
            GateError::Private { name, .. } => Some(format!(
                "declare a narrower path in tools/{name}/tool.toml, or keep the private directory elsewhere (TOOLSMITH_DATA)"
            )),
        }
    }
}

/// The content an approval binds to: what the tool requests, its tool.toml (which records the
/// artifact's sha256, checked by the WASM runner on every load) and its source and lockfiles
/// as they are on disk (the source hash).
pub fn content_hash(dir: &Path, tool: &Tool, items: &[Item]) -> std::io::Result<String> {
    use sha2::{Digest, Sha256};
    let m = &tool.manifest;
    let mut h = Sha256::new();
    h.update(b"toolsmith-approval-1\0");
    h.update(serde_json::to_vec(items).map_err(std::io::Error::other)?);
    h.update([0]);
    h.update(std::fs::read(dir.join(crate::manifest::FILE_NAME))?);
    h.update([0]);
    let artifact = (m.kind == crate::manifest::Kind::Wasm).then(|| m.artifact());
    h.update(crate::hashing::source_hash(dir, artifact)?.as_bytes());
    Ok(format!("sha256:{}", hex::encode(h.finalize())))
}

/// Where the gate reads and writes: the toolbox and this person's private directory.
pub struct Gate<'a> {
    /// The toolbox whose tools are called.
    pub toolbox: &'a Toolbox,
    /// This person's private directory (decisions, secrets, the audit log).
    pub personal: &'a Path,
    /// Directories tools may be granted (`Config::roots`).
    pub roots: &'a [PathBuf],
    /// How long a call waits for the person's decision in the console once the client
    /// opened its link (`Config::approval_wait_secs`).
    pub wait: std::time::Duration,
}

impl Gate<'_> {
    /// The decisions recorded for this toolbox.
    pub fn store(&self) -> Store {
        Store::new(self.personal, self.toolbox.root())
    }

    fn head(&self) -> Option<String> {
        crate::git::resolve(self.toolbox.root(), "HEAD").ok()
    }

    /// Record a person's decision for the tool's current content.
    pub fn decide(
        &self,
        name: &str,
        content: &str,
        items: &[Item],
        decision: Decision,
        via: &str,
    ) -> std::io::Result<()> {
        self.store().put(
            name,
            Record {
                decision,
                content: content.to_string(),
                requested: request::lines(items),
                at: crate::personal::now_secs(),
                via: via.to_string(),
                commit: self.head(),
                approved_commit: None,
            },
        )?;
        audit::Log::new(self.personal).append(&audit::Entry::decision(
            self.toolbox.root(),
            name,
            match decision {
                Decision::Approved => "approved",
                Decision::Denied => "denied",
            },
            via,
            request::lines(items),
        ));
        Ok(())
    }
}

/// Where a stored tool stands, for `get_tool`: what it requests and whether a person approved
/// this version on this machine (`not needed`, `pending`, `approved`, `denied`).
pub fn describe(gate: &Gate<'_>, tool: &Tool) -> Value {
    let name = &tool.manifest.name;
    let items = requested(&tool.manifest);
    if items.is_empty() {
        return serde_json::json!({"state": "not needed", "requested": []});
    }
    let dir = gate.toolbox.tools_dir().join(name);
    let state = match (content_hash(&dir, tool, &items), gate.store().get(name)) {
        (Ok(c), Ok(Some(r))) if r.content == c => match r.decision {
            Decision::Approved => "approved",
            Decision::Denied => "denied",
        },
        (Ok(_), Ok(_)) => "pending",
        _ => "unknown",
    };
    serde_json::json!({
        "state": state,
        "requested": request::lines(&items),
        "how": format!("only the person approves, outside the MCP client: `toolsmith console` or `toolsmith approve {name}` in their terminal"),
    })
}

/// Decide what the call of `tool` (from `dir`; what it is: `origin`, as the call's entry point
/// said) may use; ask the person when the client can. Only a stored tool's call is audited and
/// may be granted more than the defaults.
/// Returns the tool as the call runs it (its manifest holding only the granted capabilities,
/// its secrets and approved directory beside it) and the call's after-care.
pub async fn admit(
    gate: &Gate<'_>,
    origin: Origin,
    dir: &Path,
    mut tool: Tool,
    args: &Value,
    host: &dyn Host,
) -> Result<(Granted, Call), GateError> {
    let name = tool.manifest.name.clone();
    let stored = origin.is_stored();
    let unreadable = |e: &dyn std::fmt::Display| GateError::Unreadable {
        name: name.clone(),
        message: e.to_string(),
        dir: gate.personal.to_path_buf(),
    };
    let all_secrets = secrets::Store::new(gate.personal)
        .load()
        .map_err(|e| unreadable(&e))?;
    let mut call = Call {
        redactor: Redactor::new(&all_secrets),
        tool: name.clone(),
        grants: Vec::new(),
        started: Instant::now(),
        bytes_in: args.to_string().len(),
        audit: None,
        warnings: Vec::new(),
        note: None,
    };
    if stored {
        let (actor, session) = host.actor().unwrap_or_else(|| ("local".into(), None));
        call.audit = Some((
            audit::Log::new(gate.personal),
            audit::Entry::call(gate.toolbox.root(), &name, actor, session),
        ));
    }
    let items = requested(&tool.manifest);
    if items.is_empty() {
        return Ok((Granted::defaults(tool, origin), call));
    }
    // Read before the content is: a directory replaced from here on (a commit swaps in a new
    // one) is not what was hashed, and the runner stops its process before the code runs.
    let identity = crate::platform::dir_id(dir);
    let content = content_hash(dir, &tool, &items).map_err(|e| unreadable(&e))?;
    let record = gate.store().get(&name).map_err(|e| unreadable(&e))?;
    let current = record.as_ref().filter(|r| r.content == content);
    let approved = match current.map(|r| r.decision) {
        Some(Decision::Approved) => true,
        Some(Decision::Denied) => {
            call.warnings.push(format!(
                "a person denied {name} {} on this machine; it ran with the default grants only (`toolsmith approve {name}` changes that)",
                request::lines(&items).join("; ")
            ));
            false
        }
        None if !stored => {
            call.warnings.push(format!(
                "{name} ran with the default grants: {} wait for a person's approval once it is stored",
                request::lines(&items).join("; ")
            ));
            false
        }
        None => {
            let changed = record.as_ref().map(|r| ask::changed_since(gate, &name, r));
            let question = ask::Question {
                name: &name,
                dir,
                tool: &tool,
                items: &items,
                content: &content,
                changed: changed.as_deref(),
                diff: record
                    .as_ref()
                    .and_then(|r| ask::diff_since(gate, &name, r)),
            };
            match ask::person(gate, &question, host).await {
                ask::Answer::Approved => true,
                ask::Answer::Denied => {
                    call.warnings.push(format!(
                        "the person declined {}; {name} ran with the default grants only",
                        request::lines(&items).join("; ")
                    ));
                    false
                }
                ask::Answer::Unanswered => {
                    let e = GateError::Pending {
                        name: name.clone(),
                        waiting: request::lines(&items),
                        changed,
                    };
                    call.record_refusal(&e);
                    return Err(e);
                }
            }
        }
    };
    if !approved {
        call.note = Some(format!(
            "it ran with the default grants only: {} not granted",
            request::lines(&items).join("; ")
        ));
        tool.manifest = request::defaults_only(&tool.manifest);
        return Ok((Granted::defaults(tool, origin), call));
    }
    if let Err(e) = outside_private(gate.personal, gate.roots, &tool) {
        call.record_refusal(&e);
        return Err(e);
    }
    let mut env = Vec::new();
    for (secret, purpose) in &tool.manifest.secrets {
        let mut value = all_secrets.get(secret).cloned();
        if value.is_none() && ask::secret(gate, &name, secret, purpose, host).await {
            value = secrets::Store::new(gate.personal)
                .load()
                .ok()
                .and_then(|mut all| all.remove(secret));
            if let Some(v) = &value {
                call.redactor = Redactor::new(&std::collections::BTreeMap::from([(
                    secret.clone(),
                    v.clone(),
                )]))
                .merged(&call.redactor);
            }
        }
        match value {
            Some(v) => env.push((secret.clone(), v)),
            None => {
                let e = GateError::MissingSecret {
                    name: name.clone(),
                    secret: secret.clone(),
                };
                call.record_refusal(&e);
                return Err(e);
            }
        }
    }
    call.grants = request::lines(&items);
    let granted = Granted {
        tool,
        origin,
        secrets: SecretEnv::new(env),
        admitted: identity,
    };
    Ok((granted, call))
}

/// The stored tool as a call of it would run now — its granted capabilities, its secrets,
/// the directory identity its approval holds for — decided without asking anyone and without
/// recording anything: what a server may start a process for before any call. None when a
/// call would wait for a person (no decision on this content, a missing secret) or be refused.
pub fn admitted_now(gate: &Gate<'_>, dir: &Path, mut tool: Tool) -> Option<Granted> {
    let items = requested(&tool.manifest);
    if items.is_empty() {
        return Some(Granted::defaults(tool, Origin::Stored));
    }
    let identity = crate::platform::dir_id(dir);
    let content = content_hash(dir, &tool, &items).ok()?;
    let record = gate.store().get(&tool.manifest.name).ok()??;
    if record.content != content {
        return None;
    }
    match record.decision {
        Decision::Denied => {
            tool.manifest = request::defaults_only(&tool.manifest);
            Some(Granted::defaults(tool, Origin::Stored))
        }
        Decision::Approved => {
            outside_private(gate.personal, gate.roots, &tool).ok()?;
            let all = secrets::Store::new(gate.personal).load().ok()?;
            let env = tool
                .manifest
                .secrets
                .keys()
                .map(|k| all.get(k).map(|v| (k.clone(), v.clone())))
                .collect::<Option<Vec<_>>>()?;
            Some(Granted {
                tool,
                origin: Origin::Stored,
                secrets: SecretEnv::new(env),
                admitted: identity,
            })
        }
    }
}

/// No granted path may hold the private directory (an approved `read = ["/home/me"]` must not
/// hand out every secret).
fn outside_private(personal: &Path, roots: &[PathBuf], tool: &Tool) -> Result<(), GateError> {
    let private = personal
        .canonicalize()
        .unwrap_or_else(|_| personal.to_path_buf());
    let c = &tool.manifest.capabilities;
    for (what, paths) in [("read", &c.read), ("write", &c.write)] {
        for p in paths {
            let path = Path::new(p);
            let abs = match (path.is_absolute(), roots.first()) {
                (true, _) => path.to_path_buf(),
                (false, Some(r)) => r.join(path),
                (false, None) => continue,
            };
            let abs = abs.canonicalize().unwrap_or(abs);
            if private.starts_with(&abs) || abs.starts_with(&private) {
                return Err(GateError::Private {
                    name: tool.manifest.name.clone(),
                    what,
                    path: p.clone(),
                    personal: private.display().to_string(),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::CallOutput;
    use serde_json::json;
    use std::collections::BTreeMap;

    const VALUE: &str = "tok-7f3a\"9c1e\\5b2d4680";

    fn call(personal: &Path) -> Call {
        Call {
            redactor: Redactor::new(&BTreeMap::from([("T".to_string(), VALUE.to_string())])),
            tool: "t".into(),
            grants: Vec::new(),
            started: Instant::now(),
            bytes_in: 0,
            audit: Some((
                audit::Log::new(personal),
                audit::Entry::call(personal, "t", "test".into(), None),
            )),
            warnings: Vec::new(),
            note: None,
        }
    }

    fn finish(out: CallOutput, personal: &Path) -> CallOutput {
        call(personal)
            .finish::<GateError>(Ok(out), |e| (e.to_string(), None))
            .unwrap()
    }

    #[test]
    fn a_results_text_made_from_json_holds_no_escaped_or_split_value() {
        let tmp = tempfile::tempdir().unwrap();
        // The text of JSON escapes what the value holds (`\"`, `\\`, `\n`, `\u0074`): the text
        // search alone would not see it there.
        let split = "tok-7f3a\"9c1e\n\\5b2d4680";
        let escaped = r#"{"t": "\u0074ok-7f3a\"9c1e\\5b2d4680"}"#;
        for out in [
            CallOutput::from_value(json!({"t": VALUE}), vec![]),
            CallOutput::from_value(json!({"t": split, "n": 1}), vec![]),
            CallOutput::from_stdout(escaped.as_bytes(), b""),
            CallOutput::from_stdout(
                serde_json::to_string_pretty(&json!({"t": [split]}))
                    .unwrap()
                    .as_bytes(),
                b"",
            ),
        ] {
            let o = finish(out, tmp.path());
            assert!(
                !o.text.contains("9c1e") && o.text.contains("[secret T]"),
                "{}",
                o.text
            );
            assert!(!o.structured.unwrap().to_string().contains("9c1e"));
        }
    }

    #[test]
    fn host_names_in_the_audit_log_hold_no_value() {
        let tmp = tempfile::tempdir().unwrap();
        let mut out = CallOutput::from_value(json!({}), vec![]);
        let label = hex::encode(VALUE);
        out.network = Some(toolsmith_sandbox::proxy::Seen {
            allowed: Default::default(),
            denied: [format!("{label}.evil.example")].into(),
        });
        finish(out, tmp.path());
        let log = audit::Log::new(tmp.path()).read(None, None).unwrap();
        let refused = &log[0].hosts_refused;
        assert_eq!(refused, &["[secret T].evil.example"], "{refused:?}");
    }
}
