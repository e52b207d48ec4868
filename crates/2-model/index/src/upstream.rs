//! The tools of MCP server entries (`kind = "mcp"`): the listing of each entry's server, cached
//! outside git in `.toolsmith/mcp/<entry>.json` (derived data: written when the server was
//! last asked, read here), and the toolsmith tools made from it, `<entry>__<tool>`.
//!
//! A server's tool list is untrusted input. A tool is left out, with the reason kept on the
//! entry, when its name is not an MCP tool name or makes a toolsmith name past 64 characters,
//! when its description, title or any text in its schemas holds an invisible or bidirectional
//! character, or when a schema is not an object schema, is larger than 64 KiB or does not
//! compile. A description is cut at `MAX_DESCRIPTION` characters and shown quoted, as what
//! the server says, never as toolsmith's words. So are the name, version and instructions the
//! server gives itself (`Listing::says_it_is`, `Listing::shown_instructions`); a name that
//! reads as toolsmith is not shown at all.

use super::Tool;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use toolsmith_manifest::{self as manifest, Annotations, Manifest, UPSTREAM_SEPARATOR};
use toolsmith_names as names;

/// Where listings are cached, under the toolbox root (git-ignored).
pub const CACHE_DIR: &str = ".toolsmith/mcp";
/// The listing format this build reads and writes.
pub const FORMAT: u32 = 1;
/// Longest upstream description kept, in characters (every `tools/list` carries it).
pub const MAX_DESCRIPTION: usize = 1024;
/// Most tools taken from one server.
pub const MAX_TOOLS: usize = 500;
/// Longest server instructions kept, in characters.
pub const MAX_INSTRUCTIONS: usize = 4096;

/// The cached listing of one entry's server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Listing {
    /// The version of this file's format.
    pub format: u32,
    /// The sha256 of the entry's tool.toml the server ran with when it was listed: another
    /// one means the listing may be stale (it is shown until the server is asked again).
    pub manifest: String,
    /// When it was listed (seconds since the epoch).
    pub listed_at: u64,
    /// What the server said it is when it was initialised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerInfo>,
    /// The server's instructions (the server's own words: shown labelled, never as
    /// toolsmith's), cut at `MAX_INSTRUCTIONS`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// The server's tools as MCP lists them (`name`, `description`, `inputSchema`, ...).
    pub tools: Vec<Value>,
}

/// What the server says it is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerInfo {
    /// Its name.
    pub name: String,
    /// Its version ("" when it gave none).
    #[serde(default)]
    pub version: String,
}

/// Which server tool a derived tool calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    /// The MCP entry (its directory under `tools/`).
    pub entry: String,
    /// The tool's name on that server.
    pub tool: String,
}

/// The cache file of an entry's listing.
pub fn cache_path(root: &Path, entry: &str) -> PathBuf {
    root.join(CACHE_DIR).join(format!("{entry}.json"))
}

/// The sha256 of an entry's tool.toml (what a listing records).
pub fn manifest_hash(dir: &Path) -> String {
    std::fs::read(dir.join(manifest::FILE_NAME))
        .map(|b| toolsmith_hashing::sha256_bytes(&b))
        .unwrap_or_default()
}

/// The cached listing of `entry`, if there is a readable one.
pub fn read(root: &Path, entry: &str) -> Option<Listing> {
    let text = std::fs::read_to_string(cache_path(root, entry)).ok()?;
    serde_json::from_str::<Listing>(&text)
        .ok()
        .filter(|l| l.format == FORMAT)
}

/// The name of `tool` of `entry` as a toolsmith tool.
pub fn tool_name(entry: &str, tool: &str) -> String {
    format!("{entry}{UPSTREAM_SEPARATOR}{tool}")
}

/// One server tool as MCP lists it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Listed {
    name: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    input_schema: Option<Map<String, Value>>,
    #[serde(default)]
    output_schema: Option<Map<String, Value>>,
    #[serde(default)]
    annotations: Option<ListedAnnotations>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ListedAnnotations {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    read_only_hint: Option<bool>,
    #[serde(default)]
    destructive_hint: Option<bool>,
    #[serde(default)]
    idempotent_hint: Option<bool>,
    #[serde(default)]
    open_world_hint: Option<bool>,
}

/// The description a derived tool shows: the server's words, cut and quoted, labelled with
/// the entry they come from.
pub fn shown_description(entry: &str, text: &str) -> String {
    let text = text.trim();
    let cut: String = if text.chars().count() > MAX_DESCRIPTION {
        let mut s: String = text.chars().take(MAX_DESCRIPTION).collect();
        s.push('…');
        s
    } else {
        text.to_string()
    };
    let quoted = serde_json::to_string(&cut).unwrap_or_default();
    format!("MCP server {entry}: {quoted}")
}

/// Longest server name shown, in characters.
pub const MAX_SERVER_NAME: usize = 128;
/// Longest server version shown, in characters.
pub const MAX_SERVER_VERSION: usize = 64;

/// Words a server says of itself (its name, version or instructions), as toolsmith shows
/// them: as data, quoted, cut at `max` characters — or refused, with why, when they hold an
/// invisible or bidirectional character (they could show a reader something else than what
/// is there), as a tool's description is.
pub fn quoted_words(text: &str, max: usize) -> Result<String, String> {
    if let Some((pos, c)) = names::find_invisible(text) {
        return Err(format!(
            "it holds the invisible or control character U+{:04X} at position {pos}",
            c as u32
        ));
    }
    let mut cut: String = text.trim().chars().take(max).collect();
    if text.trim().chars().count() > max {
        cut.push('…');
    }
    Ok(serde_json::to_string(&cut).unwrap_or_default())
}

impl Listing {
    /// What the server of `entry` says it is (name and version), labelled as its words; or
    /// why that is not shown. None when it said nothing.
    pub fn says_it_is(&self, entry: &str) -> Option<String> {
        let s = self.server.as_ref()?;
        let name = quoted_words(&s.name, MAX_SERVER_NAME).and_then(|n| {
            if names::reads_as(&s.name).contains(&names::reads_as("toolsmith")) {
                Err("it names itself toolsmith, which only toolsmith is".into())
            } else {
                Ok(n)
            }
        });
        let version = quoted_words(&s.version, MAX_SERVER_VERSION);
        Some(match (name, version) {
            (Ok(n), Ok(v)) => format!("MCP server {entry} says it is {n}, version {v}"),
            (Err(why), _) => format!("MCP server {entry}'s name for itself is not shown: {why}"),
            (_, Err(why)) => format!("MCP server {entry}'s version is not shown: {why}"),
        })
    }

    /// The server's instructions, labelled and quoted as its words; or why they are not shown.
    pub fn shown_instructions(&self, entry: &str) -> Option<String> {
        let text = self.instructions.as_deref()?;
        Some(match quoted_words(text, MAX_INSTRUCTIONS) {
            Ok(q) => format!("MCP server {entry} says: {q}"),
            Err(why) => format!("MCP server {entry}'s instructions are not shown: {why}"),
        })
    }
}

/// The first string anywhere in `v` with an invisible or bidirectional character.
fn invisible_in(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => names::find_invisible(s).map(|(pos, c)| {
            format!(
                "the text {:?} holds the invisible or control character U+{:04X} at position {pos}",
                s.chars().take(40).collect::<String>(),
                c as u32
            )
        }),
        Value::Array(a) => a.iter().find_map(invisible_in),
        Value::Object(o) => o
            .iter()
            .find_map(|(k, x)| invisible_in(&Value::String(k.clone())).or_else(|| invisible_in(x))),
        _ => None,
    }
}

/// Check an upstream schema: an object schema, bounded, compiling.
fn check_schema(what: &str, s: &Map<String, Value>, input: bool) -> Result<(), String> {
    let size = serde_json::to_string(s).map(|t| t.len()).unwrap_or(0);
    if size > manifest::MAX_SCHEMA_BYTES {
        return Err(format!(
            "its {what} is {size} bytes; the limit is {}",
            manifest::MAX_SCHEMA_BYTES
        ));
    }
    match s.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        None if !input => {}
        _ => return Err(format!("its {what} is not an object schema")),
    }
    if let Some(why) = invisible_in(&Value::Object(s.clone())) {
        return Err(format!("its {what}: {why}"));
    }
    jsonschema::validator_for(&Value::Object(s.clone()))
        .map(|_| ())
        .map_err(|e| format!("its {what} is not a valid JSON Schema: {e}"))
}

/// The toolsmith tools made from `listing` for the entry `entry` (its parsed tool), and the
/// tools left out with the reason for each.
pub fn derive(entry: &Tool, listing: &Listing) -> (Vec<Tool>, Vec<String>) {
    let m = &entry.manifest;
    let only = m.mcp.as_ref().map(|s| s.tools.clone()).unwrap_or_default();
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for raw in listing.tools.iter().take(MAX_TOOLS) {
        let listed: Listed = match serde_json::from_value(raw.clone()) {
            Ok(l) => l,
            Err(e) => {
                skipped.push(format!("a tool the server listed is malformed: {e}"));
                continue;
            }
        };
        if !only.is_empty() && !only.contains(&listed.name) {
            continue;
        }
        match derive_one(&m.name, m, listed) {
            Ok(t) => out.push(t),
            Err(why) => skipped.push(why),
        }
    }
    if listing.tools.len() > MAX_TOOLS {
        skipped.push(format!(
            "the server lists {} tools; only the first {MAX_TOOLS} are taken",
            listing.tools.len()
        ));
    }
    (out, skipped)
}

fn derive_one(entry: &str, m: &Manifest, listed: Listed) -> Result<Tool, String> {
    let upstream = listed.name.clone();
    let shown = upstream.escape_debug().to_string();
    names::validate_upstream(&upstream).map_err(|e| format!("tool {shown:?}: {e}"))?;
    let name = tool_name(entry, &upstream);
    if name.len() > names::MAX_NAME_LEN {
        return Err(format!(
            "tool {shown:?}: `{name}` would be longer than {} characters",
            names::MAX_NAME_LEN
        ));
    }
    let fail = |why: String| format!("tool {shown:?}: {why}");
    let mut texts = Vec::new();
    texts.extend(listed.description.clone());
    texts.extend(listed.title.clone());
    if let Some(a) = &listed.annotations {
        texts.extend(a.title.clone());
    }
    for t in &texts {
        if let Some(why) = invisible_in(&Value::String(t.clone())) {
            return Err(fail(why));
        }
    }
    let input = listed.input_schema.unwrap_or_else(|| {
        let mut o = Map::new();
        o.insert("type".into(), Value::String("object".into()));
        o
    });
    check_schema("input schema", &input, true).map_err(fail)?;
    if let Some(o) = &listed.output_schema {
        check_schema("output schema", o, false).map_err(fail)?;
    }
    let said = listed
        .description
        .as_deref()
        .filter(|d| !d.trim().is_empty())
        .or(listed.title.as_deref())
        .unwrap_or(upstream.as_str());
    let a = listed.annotations.unwrap_or_default();
    let cap = |t: Option<String>| t.map(|t| t.chars().take(128).collect::<String>());
    let mut manifest = m.clone();
    manifest.name = name;
    manifest.description = shown_description(entry, said);
    manifest.annotations = Annotations {
        title: cap(listed.title.or(a.title)),
        read_only: a.read_only_hint,
        destructive: a.destructive_hint,
        idempotent: a.idempotent_hint,
        open_world: a.open_world_hint,
    };
    manifest.pinned = false;
    manifest.examples.clear();
    let input = Arc::new(input);
    let output = listed.output_schema.map(Arc::new);
    manifest.input_schema = Some(Arc::clone(&input));
    manifest.input_schema_file = None;
    manifest.output_schema = output.clone();
    manifest.output_schema_file = None;
    if !manifest.tags.iter().any(|t| t == "mcp") {
        manifest.tags.push("mcp".into());
    }
    if !manifest.tags.iter().any(|t| t == entry) {
        manifest.tags.push(entry.to_string());
    }
    Ok(Tool {
        manifest,
        input_schema: input,
        output_schema: output,
        warnings: Vec::new(),
        validator: Default::default(),
        upstream: Some(Upstream {
            entry: entry.to_string(),
            tool: upstream,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry() -> Tool {
        let text = "name = \"srv\"\ndescription = \"d\"\nkind = \"mcp\"\n[mcp]\ncommand = \"x\"\n";
        let m = toolsmith_manifest::parse(Path::new("tool.toml"), None, text)
            .expect("parses")
            .manifest;
        Tool {
            input_schema: Arc::new(Map::new()),
            output_schema: None,
            manifest: m,
            warnings: vec![],
            validator: Default::default(),
            upstream: None,
        }
    }

    #[test]
    fn a_servers_words_about_itself_are_checked_and_quoted() {
        let l = |name: &str, version: &str, instructions: &str| Listing {
            server: Some(ServerInfo {
                name: name.into(),
                version: version.into(),
            }),
            instructions: Some(instructions.into()),
            ..Default::default()
        };
        let ok = l("weather", "1.2", "Call \"forecast\" first.");
        assert_eq!(
            ok.says_it_is("w").unwrap(),
            "MCP server w says it is \"weather\", version \"1.2\""
        );
        assert_eq!(
            ok.shown_instructions("w").unwrap(),
            "MCP server w says: \"Call \\\"forecast\\\" first.\""
        );
        let bad = l("toolsmith\u{E0041}\u{E0042}", "1.0\u{202E}", "hi\u{200B}");
        let said = bad.says_it_is("p").unwrap();
        assert!(
            said.contains("not shown") && said.contains("U+E0041"),
            "{said}"
        );
        assert!(!said.contains("toolsmith\u{E0041}"));
        let said = l("weather", "1.0\u{202E}", "").says_it_is("p").unwrap();
        assert!(
            said.contains("version is not shown") && said.contains("U+202E"),
            "{said}"
        );
        let said = l("Tооlsmith", "1", "").says_it_is("p").unwrap();
        assert!(said.contains("names itself toolsmith"), "{said}");
        assert!(bad.shown_instructions("p").unwrap().contains("U+200B"));
        let long = l(&"n".repeat(500), "1", &"i".repeat(10_000));
        assert!(long.says_it_is("p").unwrap().chars().count() < MAX_SERVER_NAME + 60);
        assert!(long.shown_instructions("p").unwrap().chars().count() < MAX_INSTRUCTIONS + 40);
    }

    #[test]
    fn untrusted_listings_are_checked_cut_and_quoted() {
        let long = "a".repeat(MAX_DESCRIPTION + 50);
        let listing = Listing {
            format: FORMAT,
            tools: vec![
                json!({"name": "get-sum", "description": "Adds \"two\" numbers", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}),
                json!({"name": "bidi", "description": "safe \u{202e}txet", "inputSchema": {"type": "object"}}),
                json!({"name": "hidden", "description": "ok", "inputSchema": {"type": "object", "properties": {"x": {"description": "zero\u{200b}width"}}}}),
                json!({"name": "bad name", "inputSchema": {"type": "object"}}),
                json!({"name": "notobj", "inputSchema": {"type": "string"}}),
                json!({"name": "long", "description": long, "inputSchema": {"type": "object"}}),
                json!({"name": "x".repeat(70), "inputSchema": {"type": "object"}}),
            ],
            ..Default::default()
        };
        let (tools, skipped) = derive(&entry(), &listing);
        let names: Vec<&str> = tools.iter().map(|t| t.manifest.name.as_str()).collect();
        assert_eq!(names, ["srv__get-sum", "srv__long"], "{skipped:?}");
        assert_eq!(skipped.len(), 5, "{skipped:?}");
        assert_eq!(
            tools[0].manifest.description,
            "MCP server srv: \"Adds \\\"two\\\" numbers\""
        );
        assert_eq!(tools[0].manifest.annotations.read_only, Some(true));
        assert_eq!(
            tools[0].upstream,
            Some(Upstream {
                entry: "srv".into(),
                tool: "get-sum".into()
            })
        );
        assert!(tools[1].manifest.description.chars().count() < MAX_DESCRIPTION + 40);
        assert!(skipped.iter().any(|s| s.contains("U+202E")), "{skipped:?}");
        assert!(skipped.iter().any(|s| s.contains("U+200B")), "{skipped:?}");
    }
}
