//! Tools that look like each other, from search's embeddings (`search::similar`): the
//! report's near-duplicate pairs, and the existing tools a new one resembles — what
//! `register_script`, `build_tool` and `import_tool` answer with, so the AI can update one
//! instead of adding another. Nothing is refused for it. Each finding says what differs (kind,
//! language, arguments, output) so the choice is the AI's.

use crate::app::App;
use crate::index::{Index, Tool};
use crate::trust::View;
use serde::Serialize;
use std::collections::BTreeSet;

/// A pair at least this close is a near-duplicate in the report. With the built-in
/// embeddings (and MiniLM), unrelated tools score about 0 to 0.15, related ones 0.4 to 0.6, and
/// the same job described in other words (`add`: "Add two numbers" and `sum_numbers`: "Add
/// two numbers and return their sum") about 0.8.
pub const NEAR: f32 = 0.75;
/// An existing tool at least this close to a new one is named in its answer.
pub const LOOKS_LIKE: f32 = 0.7;
/// Most similar tools an answer names.
const SIMILAR: usize = 3;

/// An existing tool like another one.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Similar {
    /// The existing tool.
    pub name: String,
    /// Cosine of the two tools' embeddings (0–1).
    pub similarity: f64,
    /// What it does (its description's first line).
    pub description: String,
    /// What differs between the two.
    pub differs: Vec<String>,
}

/// Two tools that mean the same.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Pair {
    /// One tool.
    pub a: String,
    /// The other.
    pub b: String,
    /// Cosine of their embeddings.
    pub similarity: f64,
    /// What differs between them.
    pub differs: Vec<String>,
}

fn kind(t: &Tool) -> String {
    let m = &t.manifest;
    match (&m.run.language, m.is_component()) {
        (Some(l), true) => format!("{} component ({l})", m.kind),
        (Some(l), false) => format!("{} ({l})", m.kind),
        (None, true) => format!("{} component", m.kind),
        (None, false) => m.kind.to_string(),
    }
}

fn fields(t: &Tool) -> BTreeSet<String> {
    t.input_schema
        .get("properties")
        .and_then(|p| p.as_object())
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

fn first_line(t: &Tool) -> String {
    t.manifest
        .description
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_string()
}

/// What differs between tool `a` and tool `b`, in words.
pub fn differences(a: &Tool, b: &Tool) -> Vec<String> {
    let (an, bn) = (&a.manifest.name, &b.manifest.name);
    let mut out = Vec::new();
    let (ka, kb) = (kind(a), kind(b));
    if ka != kb {
        out.push(format!("kind: {an} is {ka}, {bn} is {kb}"));
    }
    let (fa, fb) = (fields(a), fields(b));
    let only = |x: &BTreeSet<String>, y: &BTreeSet<String>| -> Vec<String> {
        x.difference(y).cloned().collect()
    };
    let (oa, ob) = (only(&fa, &fb), only(&fb, &fa));
    if !oa.is_empty() {
        out.push(format!("arguments only {an} takes: {}", oa.join(", ")));
    }
    if !ob.is_empty() {
        out.push(format!("arguments only {bn} takes: {}", ob.join(", ")));
    }
    if oa.is_empty() && ob.is_empty() {
        out.push("the same arguments".into());
    }
    match (a.output_schema.is_some(), b.output_schema.is_some()) {
        (true, false) => out.push(format!("only {an} declares an output schema")),
        (false, true) => out.push(format!("only {bn} declares an output schema")),
        _ => {}
    }
    if first_line(a) == first_line(b) {
        out.push("the same description".into());
    }
    out
}

/// Near-duplicate pairs of `index`'s tools, and a note on how they were found (or why not).
/// Held tools (`view`) are compared with none.
pub fn near_duplicates(app: &App, index: &Index, view: &View) -> (Vec<Pair>, String) {
    let si = index.search_index();
    let semantic = app.semantic();
    semantic.prepare(si);
    let Some(found) = semantic.close_pairs(si, NEAR) else {
        let why = semantic
            .unavailable()
            .unwrap_or_else(|| "semantic search is off (TOOLSMITH_EMBEDDINGS=none)".into());
        return (Vec::new(), format!("near-duplicates not looked for: {why}"));
    };
    let pairs = found
        .items
        .iter()
        .filter_map(|&(a, b, sim)| {
            let ta = open_tool(view, index, &si.docs[a as usize].name)?;
            let tb = open_tool(view, index, &si.docs[b as usize].name)?;
            Some(Pair {
                a: ta.manifest.name.clone(),
                b: tb.manifest.name.clone(),
                similarity: round(sim),
                differs: differences(ta, tb),
            })
        })
        .collect();
    let mut note = format!(
        "{} tools compared by meaning ({}), cosine ≥ {NEAR}",
        found.compared, found.source
    );
    if si.docs.len() > crate::search::similar::MAX_PAIRWISE {
        note.push_str(&format!(
            "; only the first {} of {} tools",
            crate::search::similar::MAX_PAIRWISE,
            si.docs.len()
        ));
    }
    (pairs, note)
}

/// The existing tools that look like `name` (a tool just made): closest first, at most three.
/// Empty when none is close or no embeddings are loaded (nothing is refused either way).
/// A held tool (just imported, say) is compared with none, and no held tool is named.
pub fn like(app: &App, name: &str) -> Vec<Similar> {
    let index = app.index();
    let view = app.view();
    if open_tool(&view, &index, name).is_none() {
        return Vec::new();
    }
    let si = index.search_index();
    let Some(doc) = si.docs.iter().position(|d| d.name == name) else {
        return Vec::new();
    };
    let Some(tool) = index.tool(name) else {
        return Vec::new();
    };
    let semantic = app.semantic();
    semantic.prepare(si);
    let Some(found) = semantic.nearest(si, doc as u32, LOOKS_LIKE, SIMILAR) else {
        return Vec::new();
    };
    found
        .items
        .iter()
        .filter_map(|&(d, sim)| {
            let other = open_tool(&view, &index, &si.docs[d as usize].name)?;
            Some(Similar {
                name: other.manifest.name.clone(),
                similarity: round(sim),
                description: first_line(other),
                differs: differences(tool, other),
            })
        })
        .collect()
}

/// The tool `name` when the view shows it open (not held).
fn open_tool<'a>(view: &View, index: &'a Index, name: &str) -> Option<&'a crate::index::Tool> {
    view.open(name)?;
    index.tool(name)
}

fn round(x: f32) -> f64 {
    (f64::from(x) * 1000.0).round() / 1000.0
}
