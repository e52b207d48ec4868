//! Where each stored tool stands on this machine: what it asks beyond the defaults, the content
//! hash an approval would bind to, and the person's last decision. `toolsmith pending`,
//! `approve`, `deny` and the console's approvals page all read it here.

use super::{Decision, Gate, Item, Record, content_hash, requested};
use crate::index::{Index, Tool};

/// One tool's request and its state on this machine.
#[derive(Debug, Clone)]
pub struct Status {
    /// The tool.
    pub name: String,
    /// What it asks beyond the defaults.
    pub items: Vec<Item>,
    /// The content hash a decision made now binds to.
    pub content: String,
    /// The last decision recorded for the tool (maybe for another version).
    pub record: Option<Record>,
}

impl Status {
    /// The decision for this very version, if any.
    pub fn decided(&self) -> Option<Decision> {
        self.record
            .as_ref()
            .filter(|r| r.content == self.content)
            .map(|r| r.decision)
    }

    /// The request, one line per capability.
    pub fn lines(&self) -> Vec<String> {
        super::request::lines(&self.items)
    }
}

/// The state of `tool` (None when it asks for nothing beyond the defaults).
pub fn status(gate: &Gate<'_>, tool: &Tool) -> std::io::Result<Option<Status>> {
    let name = tool.manifest.name.clone();
    let items = requested(&tool.manifest);
    if items.is_empty() {
        return Ok(None);
    }
    let dir = gate.toolbox.tools_dir().join(&name);
    let content = content_hash(&dir, tool, &items)?;
    let record = gate.store().get(&name)?;
    Ok(Some(Status {
        name,
        items,
        content,
        record,
    }))
}

/// Every stored tool whose current version waits for a decision.
pub fn pending(gate: &Gate<'_>, index: &Index) -> std::io::Result<Vec<Status>> {
    let mut out = Vec::new();
    for t in index.tools() {
        if let Some(s) = status(gate, t)?
            && s.decided().is_none()
        {
            out.push(s);
        }
    }
    Ok(out)
}

/// The unified diff since the last approved version (empty when there was none).
pub fn diff_since_approved(gate: &Gate<'_>, s: &Status) -> String {
    let Some(commit) = s.record.as_ref().and_then(|r| r.approved_commit.clone()) else {
        return String::new();
    };
    match crate::versions::diff_tool(gate.toolbox, &s.name, &commit, "HEAD") {
        Ok(d) => d.unified,
        Err(e) => format!("(no diff: {e})"),
    }
}

/// Why a decision was not recorded.
#[derive(Debug, thiserror::Error)]
pub enum DecideError {
    /// Nothing to approve.
    #[error("{name} asks for nothing beyond the defaults: there is nothing to approve")]
    NothingAsked {
        /// The tool.
        name: String,
    },
    /// The tool changed between being shown and the decision.
    #[error(
        "{name} changed since it was shown (the version shown was {shown}, it is now {current}): nothing was recorded"
    )]
    Changed {
        /// The tool.
        name: String,
        /// The content hash shown.
        shown: String,
        /// The content hash now.
        current: String,
    },
    /// It asks for an environment variable no approval can grant (`manifest::env`).
    #[error("{name} cannot be approved: {why}")]
    Refused {
        /// The tool.
        name: String,
        /// The refusal, naming the variable and why.
        why: String,
    },
    /// The decisions file could not be read or written.
    #[error("cannot read or record the decision: {0}")]
    Io(#[from] std::io::Error),
}

impl crate::error::Hint for DecideError {
    fn hint(&self) -> Option<String> {
        Some(match self {
            DecideError::NothingAsked { .. } => {
                "it runs with the default grants (no network, no environment, its own scratch directory)".into()
            }
            DecideError::Changed { name, .. } => format!(
                "review the new version (`toolsmith pending`, or reload the console) and decide again on {name}"
            ),
            DecideError::Refused { .. } => crate::manifest::env::HINT.into(),
            DecideError::Io(_) => "check the files of the private directory (mode 0700/0600, owned by you)".into(),
        })
    }
}

/// Record a person's decision about `tool`'s current version. With `shown`, the content hash
/// of the version the person reviewed: refused when the tool changed since.
pub fn decide(
    gate: &Gate<'_>,
    tool: &Tool,
    shown: Option<&str>,
    decision: Decision,
    via: &str,
) -> Result<Status, DecideError> {
    let name = tool.manifest.name.clone();
    let Some(s) = status(gate, tool)? else {
        return Err(DecideError::NothingAsked { name });
    };
    // A variable that steers a loader or an interpreter is never granted (the manifest's
    // validation refuses it first; this holds should one get past it).
    let refused = s.items.iter().find_map(|i| match i {
        Item::Env { name } | Item::Secret { name } => crate::manifest::env::refusal(name),
        _ => None,
    });
    if let Some(why) = refused.filter(|_| decision == Decision::Approved) {
        return Err(DecideError::Refused { name, why });
    }
    if let Some(shown) = shown
        && shown != s.content
    {
        return Err(DecideError::Changed {
            name,
            shown: shown.to_string(),
            current: s.content.clone(),
        });
    }
    gate.decide(&name, &s.content, &s.items, decision, via)?;
    Ok(s)
}

/// One secret's name, whether a value is set, and the tools that declare it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SecretUsage {
    /// The secret's name.
    pub name: String,
    /// Whether a value is set on this machine.
    pub set: bool,
    /// The tools that declare it.
    pub tools: Vec<String>,
}

/// Every secret set here or declared by a tool of `index`: its name, whether it is set, and
/// the tools that declare it (never a value).
pub fn secrets_listing(
    store: &crate::secrets::Store,
    index: &Index,
) -> Result<Vec<SecretUsage>, crate::secrets::SecretError> {
    let set = store.names()?;
    let mut names: std::collections::BTreeMap<String, Vec<String>> =
        set.iter().map(|n| (n.clone(), Vec::new())).collect();
    for t in index.tools() {
        for s in t.manifest.secrets.keys() {
            names
                .entry(s.clone())
                .or_default()
                .push(t.manifest.name.clone());
        }
    }
    Ok(names
        .into_iter()
        .map(|(name, tools)| SecretUsage {
            set: set.contains(&name),
            name,
            tools,
        })
        .collect())
}
