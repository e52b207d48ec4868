//! The index: every tool directory of a toolbox, parsed, with broken ones kept and explained.
//!
//! Invariant: the index is a pure function of the files under `tools/`; it never writes the
//! tree (the one file it writes is its own record of use, `.toolsmith/usage.json`, outside
//! git: `rank`). A broken manifest becomes a `Broken` entry and never hides the others. Re-indexing one tool
//! reads only that tool's directory; a full refresh re-reads only tools whose files changed
//! (by size and modification time).
//!
//! An MCP server entry (`kind = "mcp"`) also brings the tools of its server, `<entry>__<tool>`,
//! from its cached listing (`upstream`, outside git): entries of their own whose directory is
//! the entry's, re-read with it. The index is then a pure function of the tree and those
//! listings.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod callee;
pub mod rank;
pub mod schema;
mod search;
pub mod upstream;

pub use callee::{Callee, Origin};
pub use search::{
    Doc, FIELDS, LexicalHit, SearchIndex, embedding_text, field_names, name_words, text_key,
    tokens, words,
};

use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;
use toolsmith_error::Hint;
use toolsmith_manifest::{self as manifest, Diagnostic, Manifest, Severity};
use toolsmith_names as names;

/// The directory under a toolbox root that holds the tools.
pub const TOOLS_DIR: &str = "tools";

/// A tool that parsed and validated.
#[derive(Debug, Clone)]
pub struct Tool {
    /// Its `tool.toml`, parsed and validated.
    pub manifest: Manifest,
    /// The input schema, resolved from `input_schema` or `input_schema_file` (an empty object
    /// schema when the tool declares none).
    pub input_schema: manifest::Schema,
    /// The output schema, if declared.
    pub output_schema: Option<manifest::Schema>,
    /// What validation found that does not stop the tool (shown by `get_tool` and the CLI).
    pub warnings: Vec<Diagnostic>,
    /// `input_schema` compiled (on the first call, then kept with the entry).
    pub validator: schema::CompiledSchema,
    /// The server tool this tool calls, for a tool of an MCP entry (`<entry>__<tool>`).
    pub upstream: Option<upstream::Upstream>,
}

/// The state of one tool directory.
#[derive(Debug, Clone)]
pub enum Status {
    /// It parsed and validated.
    Ok(Box<Tool>),
    /// It did not: why, located (file, line, field).
    Broken(Vec<Diagnostic>),
}

/// One directory under `tools/`.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The directory name (the tool name when valid).
    pub name: String,
    /// The tool directory.
    pub dir: PathBuf,
    /// Whether it is a tool, or why not.
    pub status: Status,
    /// The MCP entry this tool comes from (a tool of its server); None for a directory.
    pub parent: Option<String>,
    fingerprint: Fingerprint,
}

impl Entry {
    /// The tool, when it parsed and validated.
    pub fn tool(&self) -> Option<&Tool> {
        match &self.status {
            Status::Ok(t) => Some(t),
            Status::Broken(_) => None,
        }
    }

    /// Why it is broken (empty for a tool).
    pub fn errors(&self) -> &[Diagnostic] {
        match &self.status {
            Status::Ok(_) => &[],
            Status::Broken(d) => d,
        }
    }
}

/// Size and mtime of the files an entry was built from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Fingerprint(Vec<(u64, Option<SystemTime>)>);

fn stat(path: &Path) -> (u64, Option<SystemTime>) {
    match std::fs::metadata(path) {
        Ok(m) => (m.len(), m.modified().ok()),
        Err(_) => (u64::MAX, None),
    }
}

/// The index of one toolbox.
#[derive(Debug, Clone, Default)]
pub struct Index {
    root: PathBuf,
    /// Shared, so a copy of the index (a writer while readers hold a snapshot) copies
    /// pointers, not 10,000 parsed manifests.
    entries: BTreeMap<String, Arc<Entry>>,
    /// The search tokens of this version of the entries, built on first use; dropped by any
    /// change.
    search: std::sync::OnceLock<Arc<SearchIndex>>,
}

impl Index {
    /// Index the toolbox at `root` from scratch.
    pub fn build(root: &Path) -> Index {
        let mut index = Index {
            root: root.to_path_buf(),
            entries: BTreeMap::new(),
            search: Default::default(),
        };
        let dirs = list_tool_dirs(root);
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(8);
        let chunk = dirs.len().div_ceil(threads).max(64);
        let entries: Vec<Entry> = std::thread::scope(|s| {
            let handles: Vec<_> = dirs
                .chunks(chunk)
                .map(|part| {
                    s.spawn(move || {
                        part.iter()
                            .flat_map(|(n, d)| load_all(n, d))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .collect()
        });
        index.insert_all(entries);
        index
    }

    /// Insert loaded entries; a tool of an MCP entry never takes the place of a directory.
    fn insert_all(&mut self, entries: Vec<Entry>) {
        for e in entries {
            if e.parent.is_some()
                && self
                    .entries
                    .get(&e.name)
                    .is_some_and(|x| x.parent.is_none())
            {
                continue;
            }
            self.entries.insert(e.name.clone(), Arc::new(e));
        }
    }

    /// Drop the tools of the MCP entry `name`.
    fn remove_derived(&mut self, name: &str) -> bool {
        let before = self.entries.len();
        self.entries
            .retain(|_, e| e.parent.as_deref() != Some(name));
        before != self.entries.len()
    }

    /// An index of only the named tool directories (those that exist and are valid names):
    /// a quick partial view while the whole toolbox is still being indexed.
    pub fn build_only(root: &Path, names: &[String]) -> Index {
        let mut index = Index {
            root: root.to_path_buf(),
            entries: BTreeMap::new(),
            search: Default::default(),
        };
        for name in names {
            if names::validate(name).is_err() {
                continue;
            }
            let dir = root.join(TOOLS_DIR).join(name);
            if dir.is_dir() {
                index.insert_all(load_all(name, &dir));
            }
        }
        index
    }

    /// The lexical search index of these entries (built on the first call after a change).
    pub fn search_index(&self) -> &SearchIndex {
        self.search_index_shared()
    }

    /// The same, shared (the embedding worker keeps it while it embeds).
    pub fn search_index_shared(&self) -> &Arc<SearchIndex> {
        self.search
            .get_or_init(|| Arc::new(SearchIndex::build(self)))
    }

    /// The toolbox root this index describes.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Re-read one tool directory (or drop it when it is gone). Returns true when the entry changed.
    pub fn reindex_tool(&mut self, name: &str) -> bool {
        // Hidden directories are toolsmith's in-flight writes; `..`/separators are not tools.
        if name.is_empty() || name.starts_with('.') || name.contains(['/', '\\']) {
            return false;
        }
        let dir = self.root.join(TOOLS_DIR).join(name);
        if !dir.is_dir() {
            let removed = self.entries.get(name).is_some_and(|e| e.parent.is_none())
                && self.entries.remove(name).is_some();
            let derived = self.remove_derived(name);
            if removed || derived {
                self.search = Default::default();
            }
            return removed || derived;
        }
        let mut fresh = load_all(name, &dir);
        let main = fresh.remove(0);
        let changed = self.entries.get(name).is_none_or(|old| {
            old.parent.is_some() || old.fingerprint != main.fingerprint || !same_status(old, &main)
        });
        // An unchanged entry stays as it is (with its compiled input schema).
        if changed {
            self.remove_derived(name);
            self.entries.insert(name.to_string(), Arc::new(main));
            self.insert_all(fresh);
            self.search = Default::default();
        }
        changed
    }

    /// Bring the whole index up to date, re-reading only directories whose files changed.
    /// Returns the names of entries that were added, changed or removed.
    pub fn refresh(&mut self) -> Vec<String> {
        let dirs = list_tool_dirs(&self.root);
        let mut changed = Vec::new();
        let present: std::collections::BTreeSet<&String> = dirs.iter().map(|(n, _)| n).collect();
        let gone: Vec<String> = self
            .entries
            .iter()
            .filter(|(k, e)| e.parent.is_none() && !present.contains(k))
            .map(|(k, _)| k.clone())
            .collect();
        for name in gone {
            self.entries.remove(&name);
            self.remove_derived(&name);
            self.search = Default::default();
            changed.push(name);
        }
        for (name, dir) in &dirs {
            let up_to_date = self
                .entries
                .get(name)
                .is_some_and(|e| e.parent.is_none() && e.fingerprint == fingerprint(dir, e));
            if !up_to_date && self.reindex_tool(name) {
                changed.push(name.clone());
            }
        }
        changed.sort();
        changed
    }

    /// All entries, sorted by name.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.values().map(|e| &**e)
    }

    /// Valid tools, sorted by name.
    pub fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.entries.values().filter_map(|e| e.tool())
    }

    /// Broken entries, sorted by name.
    pub fn broken(&self) -> impl Iterator<Item = &Entry> {
        // (A tool of an MCP entry is never broken: a server tool that does not check out is
        // left out, with the reason on its entry.)
        self.entries
            .values()
            .map(|e| &**e)
            .filter(|e| matches!(e.status, Status::Broken(_)))
    }

    /// The entry of that name, broken or not.
    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.entries.get(name).map(|e| &**e)
    }

    /// The tool of that name, when it is one.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.entries.get(name).and_then(|e| e.tool())
    }

    /// How many entries (tools and broken directories).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is no entry at all.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

fn same_status(a: &Entry, b: &Entry) -> bool {
    match (&a.status, &b.status) {
        (Status::Ok(x), Status::Ok(y)) => {
            x.manifest == y.manifest
                && x.input_schema == y.input_schema
                && x.output_schema == y.output_schema
        }
        (Status::Broken(x), Status::Broken(y)) => x == y,
        _ => false,
    }
}

/// Directories directly under `<root>/tools`, sorted by name. Hidden entries (starting with
/// '.') are skipped: toolsmith keeps its temporary directories there.
fn list_tool_dirs(root: &Path) -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = walkdir::WalkDir::new(root.join(TOOLS_DIR))
        .min_depth(1)
        .max_depth(1)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_dir())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.into_path()))
        .filter(|(n, _)| !n.starts_with('.'))
        .collect();
    out.sort();
    out
}

/// The files an entry depends on: tool.toml plus any schema files it names (and an MCP
/// entry's cached listing).
fn fingerprint(dir: &Path, entry: &Entry) -> Fingerprint {
    let mut files = vec![dir.join(manifest::FILE_NAME)];
    if let Some(t) = entry.tool() {
        files.extend(t.manifest.input_schema_file.iter().map(|f| dir.join(f)));
        files.extend(t.manifest.output_schema_file.iter().map(|f| dir.join(f)));
        if t.manifest.kind == manifest::Kind::Mcp
            && let Some(root) = dir.parent().and_then(Path::parent)
        {
            files.push(upstream::cache_path(root, &entry.name));
        }
    }
    Fingerprint(files.iter().map(|f| stat(f)).collect())
}

fn broken(name: &str, dir: &Path, file: PathBuf, message: String, hint: &str) -> Entry {
    let d = Diagnostic {
        severity: Severity::Error,
        file,
        line: None,
        column: None,
        field: None,
        message,
        hint: Some(hint.to_string()),
    };
    let mut e = Entry {
        name: name.to_string(),
        dir: dir.to_path_buf(),
        status: Status::Broken(vec![d]),
        parent: None,
        fingerprint: Fingerprint::default(),
    };
    e.fingerprint = fingerprint(dir, &e);
    e
}

/// Read one tool directory: its entry, then (for an MCP entry) the tools of its server from
/// the cached listing.
fn load_all(name: &str, dir: &Path) -> Vec<Entry> {
    let mut main = load_entry(name, dir);
    let Status::Ok(t) = &mut main.status else {
        return vec![main];
    };
    if t.manifest.kind != manifest::Kind::Mcp {
        return vec![main];
    }
    let Some(root) = dir.parent().and_then(Path::parent) else {
        return vec![main];
    };
    let note = |message: String| Diagnostic {
        severity: Severity::Warning,
        file: upstream::cache_path(root, name),
        line: None,
        column: None,
        field: Some("mcp".into()),
        message,
        hint: None,
    };
    let Some(listing) = upstream::read(root, name) else {
        t.warnings.push(note(format!(
            "the tools of {name}'s server are not listed yet: they are once it runs (on toolsmith's start, or `call_tool {name}`)"
        )));
        return vec![main];
    };
    let (tools, skipped) = upstream::derive(t, &listing);
    t.warnings
        .extend(skipped.into_iter().map(|s| note(format!("left out: {s}"))));
    let mut out = vec![main];
    out.extend(tools.into_iter().map(|tool| Entry {
        name: tool.manifest.name.clone(),
        dir: dir.to_path_buf(),
        status: Status::Ok(Box::new(tool)),
        parent: Some(name.to_string()),
        fingerprint: Fingerprint::default(),
    }));
    out
}

/// Read and parse one tool directory.
fn load_entry(name: &str, dir: &Path) -> Entry {
    let file = dir.join(manifest::FILE_NAME);
    if let Err(e) = names::validate(name) {
        return broken(
            name,
            dir,
            dir.to_path_buf(),
            format!("directory name is not a valid tool name: {e}"),
            &e.hint().unwrap_or_default(),
        );
    }
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return broken(
                name,
                dir,
                file,
                "the tool directory has no tool.toml".into(),
                "add a tool.toml (fields: toolsmith://guide), or `toolsmith new NAME` to scaffold one",
            );
        }
        Err(e) => {
            return broken(
                name,
                dir,
                file,
                format!("cannot read tool.toml: {e}"),
                "check the file's permissions and encoding (UTF-8)",
            );
        }
    };
    let status = match load(dir, name, &text) {
        Ok(tool) => Status::Ok(Box::new(tool)),
        Err(diags) => Status::Broken(diags),
    };
    let mut e = Entry {
        name: name.to_string(),
        dir: dir.to_path_buf(),
        status,
        parent: None,
        fingerprint: Fingerprint::default(),
    };
    e.fingerprint = fingerprint(dir, &e);
    e
}

/// A tool from its directory and the text of its tool.toml: parsed, its schema files read
/// (each capped at `manifest::MAX_SCHEMA_BYTES`). The one loader: the index's entries and a
/// build's staged copy both come from here.
pub fn load(dir: &Path, name: &str, text: &str) -> Result<Tool, Vec<Diagnostic>> {
    let file = dir.join(manifest::FILE_NAME);
    match manifest::parse(&file, Some(name), text) {
        Ok(parsed) => resolve(dir, &file, parsed),
        Err(mut diags) => {
            if text
                .lines()
                .any(|l| l.starts_with("<<<<<<< ") || l.starts_with(">>>>>>> "))
            {
                for d in &mut diags {
                    d.hint = Some("this tool.toml holds git merge-conflict markers: resolve the conflict, then `git add` it".into());
                }
            }
            Err(diags)
        }
    }
}

/// Resolve schema files named by the manifest.
// A diagnostic is the whole point of the error path here; boxing it buys nothing.
#[allow(clippy::result_large_err)]
fn resolve(dir: &Path, file: &Path, parsed: manifest::Parsed) -> Result<Tool, Vec<Diagnostic>> {
    let m = parsed.manifest;
    let load = |field: &str, rel: &str| -> Result<Map<String, Value>, Diagnostic> {
        let path = dir.join(rel);
        let fail = |message: String| Diagnostic {
            severity: Severity::Error,
            file: file.to_path_buf(),
            line: None,
            column: None,
            field: Some(format!("{field}_file")),
            message,
            hint: Some(format!(
                "{rel} must be a JSON object schema beside tool.toml"
            )),
        };
        let text =
            std::fs::read_to_string(&path).map_err(|e| fail(format!("cannot read {rel}: {e}")))?;
        if text.len() > toolsmith_manifest::MAX_SCHEMA_BYTES {
            return Err(fail(format!(
                "{rel} is {} bytes; the limit for a schema is {}",
                text.len(),
                toolsmith_manifest::MAX_SCHEMA_BYTES
            )));
        }
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(o)) => Ok(o),
            Ok(_) => Err(fail(format!("{rel} is not a JSON object"))),
            Err(e) => Err(fail(format!("{rel} is not valid JSON: {e}"))),
        }
    };
    let input = match (&m.input_schema, &m.input_schema_file) {
        (Some(s), _) => Ok(s.clone()),
        (None, Some(f)) => load("input_schema", f).map(Arc::new),
        (None, None) => Ok(Arc::new(empty_object_schema())),
    };
    let output = match (&m.output_schema, &m.output_schema_file) {
        (Some(s), _) => Ok(Some(s.clone())),
        (None, Some(f)) => load("output_schema", f).map(|s| Some(Arc::new(s))),
        (None, None) => Ok(None),
    };
    match (input, output) {
        (Ok(input_schema), Ok(output_schema)) => Ok(Tool {
            manifest: m,
            input_schema,
            output_schema,
            warnings: parsed.warnings,
            validator: Default::default(),
            upstream: None,
        }),
        (i, o) => Err(i.err().into_iter().chain(o.err()).collect()),
    }
}

fn empty_object_schema() -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("type".into(), Value::String("object".into()));
    m
}
