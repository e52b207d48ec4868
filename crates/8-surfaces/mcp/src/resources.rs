//! The text of toolsmith's own resources: the guide, an imported skill's instructions, and a
//! tool's manifest with its entry source (read by `resources/read` and by scripts' host calls),
//! all through the toolbox's `trust::View`.

use super::Shared;
use super::watch::GUIDE_URI;
use crate::guide;

pub const TOOL_URI_PREFIX: &str = "toolsmith://tools/";
pub const TOOL_URI_TEMPLATE: &str = "toolsmith://tools/{name}";

/// The text of a toolsmith resource: (text, mime type). Read through the toolbox's view: a
/// held tool's resource says it is held, and a held skill has none.
pub fn read_text(shared: &Shared, uri: &str) -> Option<(String, &'static str)> {
    let view = shared.app.view();
    if uri == GUIDE_URI {
        return Some((
            super::guide(&view, &shared.app.toolbox, &shared.app.config().sandbox),
            "text/markdown",
        ));
    }
    if let Some(name) = uri.strip_prefix(guide::SKILL_URI_PREFIX) {
        return guide::skills(&view)
            .into_iter()
            .find(|s| s.serves(name))
            .map(|s| (s.body, "text/markdown"));
    }
    let name = uri.strip_prefix(TOOL_URI_PREFIX)?;
    crate::names::validate(name).ok()?;
    let entry = match view.get(name)? {
        crate::trust::Shown::Open(o) => o,
        crate::trust::Shown::Held(w) => {
            return Some((format!("# tools/{name}\n\n{}\n", w.note()), "text/markdown"));
        }
    };
    let mut text = String::new();
    let manifest =
        std::fs::read_to_string(entry.dir().join(crate::manifest::FILE_NAME)).unwrap_or_default();
    text.push_str(&format!(
        "# tools/{name}/tool.toml\n\n```toml\n{manifest}```\n"
    ));
    if let Some(t) = entry.tool()
        && let Some(entry_file) =
            t.manifest
                .run
                .entry
                .as_deref()
                .or(if t.manifest.kind == crate::manifest::Kind::Wasm {
                    Some("src/main.rs")
                } else {
                    None
                })
        && let Ok(src) = std::fs::read_to_string(entry.dir().join(entry_file))
    {
        text.push_str(&format!("\n# tools/{name}/{entry_file}\n\n```\n{src}```\n"));
    }
    Some((text, "text/markdown"))
}
