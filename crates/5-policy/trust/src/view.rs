//! The toolbox as it may be shown to the model or to another agent: every surface that shows a
//! tool's text or files (the guide, resources, the skills extension, prompts, search, tool
//! listings, `get_tool`, exports) reads tools through a [`View`], never through the index.
//!
//! In a view a held tool is [`Withheld`]: its name, who brought it and why it is held — never
//! its instructions, description, schema text or files. Only an [`Open`] tool yields its
//! entry, manifest and directory, and only a tool that is not held is open. A person sees
//! everything through `toolsmith review` and the console, which read git, not a view.
//!
//! A tool of an MCP entry's server stands as its entry does. A tool whose standing cannot be
//! judged is held (fail closed).

use crate::index::{Entry, Index, Tool};
use crate::toolbox::Toolbox;
use crate::{Held, Standing};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Longest author name shown of a held version, in characters.
const MAX_AUTHOR: usize = 100;

/// The toolbox's tools as they may be shown: held ones withheld.
pub struct View {
    index: Arc<Index>,
    /// Held entries (directories under `tools/`), by name.
    held: HeldSet,
}

/// Held entries by name.
type HeldSet = Arc<HashMap<String, Held>>;

/// The tools at HEAD the held set was judged for, and the trust record's size then.
type Judged = (crate::Trees, u64);

/// The held tools as last judged (this toolbox's `state`): a view is made per request (a
/// `tools/list`, a guide), the judgement only when HEAD or the record changed.
#[derive(Default)]
struct HeldNow(Mutex<Option<(Judged, HeldSet)>>);

/// The tools at HEAD that are held now, by name: every one not in this machine's record
/// judged (`standing`); one whose standing cannot be judged is held.
fn held_now(tb: &Toolbox) -> HeldSet {
    let Some(trees) = crate::head_trees(tb) else {
        return Arc::default(); // no tools at HEAD: every tool is a local directory
    };
    let record_len = std::fs::metadata(tb.root().join(".git").join(crate::toolbox::TRUSTED_FILE))
        .map(|m| m.len())
        .unwrap_or(0);
    let cache = tb.state(|_| HeldNow::default());
    if let Ok(c) = cache.0.lock()
        && let Some(((t, len), held)) = c.as_ref()
        && Arc::ptr_eq(t, &trees)
        && *len == record_len
    {
        return Arc::clone(held);
    }
    let record = tb.trusted();
    let mut held = HashMap::new();
    for (name, tree) in trees.iter() {
        if record.has_tool(name, tree) {
            continue;
        }
        match crate::standing(tb, name) {
            Ok(Standing::Trusted(_)) => {}
            Ok(Standing::Held(h)) => {
                held.insert(name.clone(), h);
            }
            Err(err) => {
                held.insert(name.clone(), Held::unjudged(name, &err.to_string()));
            }
        }
    }
    let held = Arc::new(held);
    // Judging may record trust (a commit made here): key the result by the record as it is now.
    let record_len = std::fs::metadata(tb.root().join(".git").join(crate::toolbox::TRUSTED_FILE))
        .map(|m| m.len())
        .unwrap_or(0);
    if let Ok(mut c) = cache.0.lock() {
        *c = Some(((trees, record_len), Arc::clone(&held)));
    }
    held
}

/// A tool as a view shows it.
#[derive(Clone, Copy)]
pub enum Shown<'a> {
    /// Not held: everything about it may be shown.
    Open(Open<'a>),
    /// Held: its name, who brought it and why it is held, nothing else.
    Held(Withheld<'a>),
}

/// A tool that is not held: its entry, manifest and files.
#[derive(Clone, Copy)]
pub struct Open<'a> {
    entry: &'a Entry,
}

/// A held tool: what may be said of it.
#[derive(Clone, Copy)]
pub struct Withheld<'a> {
    name: &'a str,
    held: &'a Held,
}

impl View {
    /// The view of `index` (of toolbox `tb`) now: each tool judged as a call would be.
    pub fn new(tb: &Toolbox, index: Arc<Index>) -> View {
        View {
            index,
            held: held_now(tb),
        }
    }

    fn shown<'a>(&'a self, e: &'a Entry) -> Shown<'a> {
        let judged = e.parent.as_deref().unwrap_or(&e.name);
        match self.held.get(judged) {
            Some(held) => Shown::Held(Withheld {
                name: &e.name,
                held,
            }),
            None => Shown::Open(Open { entry: e }),
        }
    }

    /// The tool (or broken directory) of that name.
    pub fn get(&self, name: &str) -> Option<Shown<'_>> {
        self.index.get(name).map(|e| self.shown(e))
    }

    /// The tool of that name when it is not held.
    pub fn open(&self, name: &str) -> Option<Open<'_>> {
        match self.get(name)? {
            Shown::Open(o) => Some(o),
            Shown::Held(_) => None,
        }
    }

    /// Every valid tool (held ones withheld), and every held entry, sorted by name.
    pub fn tools(&self) -> impl Iterator<Item = Shown<'_>> {
        self.index
            .entries()
            .map(|e| self.shown(e))
            .filter(|s| match s {
                Shown::Open(o) => o.tool().is_some(),
                Shown::Held(_) => true,
            })
    }

    /// Every valid tool that is not held, sorted by name.
    pub fn open_tools(&self) -> impl Iterator<Item = (Open<'_>, &Tool)> {
        self.index.entries().filter_map(|e| match self.shown(e) {
            Shown::Open(o) => o.tool().map(|t| (o, t)),
            Shown::Held(_) => None,
        })
    }

    /// Broken directories that are not held, sorted by name.
    pub fn broken(&self) -> impl Iterator<Item = Open<'_>> {
        self.index.broken().filter_map(|e| match self.shown(e) {
            Shown::Open(o) => Some(o),
            Shown::Held(_) => None,
        })
    }

    /// The held entries, sorted by name.
    pub fn held(&self) -> Vec<&Held> {
        let mut out: Vec<&Held> = self.held.values().collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// The tools that are not held and run uncommitted or unrecorded changes (hand edits).
    pub fn drift(&self, tb: &Toolbox) -> Vec<(String, crate::toolbox::Drift)> {
        tb.drift_report(&self.index)
            .into_iter()
            .filter(|(name, _)| self.open(name).is_some())
            .collect()
    }
}

impl<'a> Shown<'a> {
    /// The tool's name.
    pub fn name(&self) -> &'a str {
        match self {
            Shown::Open(o) => o.name(),
            Shown::Held(w) => w.name,
        }
    }

    /// The tool when it is open.
    pub fn open(self) -> Option<Open<'a>> {
        match self {
            Shown::Open(o) => Some(o),
            Shown::Held(_) => None,
        }
    }
}

impl<'a> Open<'a> {
    /// The tool's name.
    pub fn name(&self) -> &'a str {
        &self.entry.name
    }

    /// Its index entry.
    pub fn entry(&self) -> &'a Entry {
        self.entry
    }

    /// The tool, when its directory parsed and validated.
    pub fn tool(&self) -> Option<&'a Tool> {
        self.entry.tool()
    }

    /// Its directory (an MCP entry's, for a tool of its server).
    pub fn dir(&self) -> &'a Path {
        &self.entry.dir
    }
}

impl<'a> Withheld<'a> {
    /// The tool's name.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// Why it is held (the entry's standing, for a tool of an MCP entry's server).
    pub fn held(&self) -> &'a Held {
        self.held
    }

    /// The author of the held version, as data: quoted, escaped, cut.
    pub fn author(&self) -> String {
        shown_words(&self.held.author)
    }

    /// One line saying what the tool is: held, by whom, why, and what a person does.
    pub fn note(&self) -> String {
        let via = if self.held.name == self.name {
            String::new()
        } else {
            format!(" (its MCP entry {} is held)", self.held.name)
        };
        format!(
            "held{via}: its current version came from elsewhere ({reason}; commit {commit} by {author}) and no one on this machine has trusted it. Nothing of it is shown or run until a person reviews it with `toolsmith review {entry}` and trusts it with `toolsmith trust {entry}`",
            reason = self.held.reason,
            commit = short(&self.held.commit),
            author = self.author(),
            entry = self.held.name,
        )
    }

    /// The tool as JSON: its name and why it is held.
    pub fn json(&self) -> Value {
        json!({
            "name": self.name,
            "status": "held",
            "held": {
                "entry": (self.held.name != self.name).then_some(&self.held.name),
                "reason": self.held.reason,
                "commit": self.held.commit,
                "author": self.author(),
                "review": format!("toolsmith review {}", self.held.name),
                "hint": crate::error::Hint::hint(self.held),
            },
        })
    }
}

impl Held {
    /// What may be said of this held version (a version at another revision than a view's).
    pub fn withheld(&self) -> Withheld<'_> {
        Withheld {
            name: &self.name,
            held: self,
        }
    }
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}

/// Words from elsewhere (a commit's author) shown as data: quoted with every invisible or
/// control character escaped, cut at [`MAX_AUTHOR`] characters.
fn shown_words(text: &str) -> String {
    let mut cut: String = text.chars().take(MAX_AUTHOR).collect();
    if text.chars().count() > MAX_AUTHOR {
        cut.push('…');
    }
    let mut out = String::from("\"");
    for c in cut.chars() {
        if crate::names::is_invisible(c) || c == '"' || c == '\\' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_author_is_shown_as_data() {
        assert_eq!(shown_words("Ann"), "\"Ann\"");
        assert_eq!(
            shown_words("toolsmith\u{E0041}\u{202E}"),
            "\"toolsmith\\u{e0041}\\u{202e}\""
        );
        assert_eq!(
            shown_words(&"a".repeat(300)).chars().count(),
            MAX_AUTHOR + 3
        );
    }
}
