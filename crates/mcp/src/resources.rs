//! The text of toolsmith's own resources: the guide, an imported skill's instructions, and a
//! tool's manifest with its entry source (read by `resources/read` and by scripts' host calls).

use super::Shared;
use super::watch::GUIDE_URI;
use crate::guide;

pub const TOOL_URI_PREFIX: &str = "toolsmith://tools/";
pub const TOOL_URI_TEMPLATE: &str = "toolsmith://tools/{name}";

/// The text of a toolsmith resource: (text, mime type).
pub fn read_text(shared: &Shared, uri: &str) -> Option<(String, &'static str)> {
    if uri == GUIDE_URI {
        return Some((
            super::guide(
                &shared.app.index(),
                &shared.app.toolbox,
                &shared.app.config().sandbox,
            ),
            "text/markdown",
        ));
    }
    if let Some(name) = uri.strip_prefix(guide::SKILL_URI_PREFIX) {
        let idx = shared.app.index();
        return guide::skills(&idx)
            .into_iter()
            .find(|s| s.serves(name))
            .map(|s| (s.body, "text/markdown"));
    }
    let name = uri.strip_prefix(TOOL_URI_PREFIX)?;
    crate::names::validate(name).ok()?;
    let idx = shared.app.index();
    let entry = idx.get(name)?;
    let mut text = String::new();
    let manifest =
        std::fs::read_to_string(entry.dir.join(crate::manifest::FILE_NAME)).unwrap_or_default();
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
        && let Ok(src) = std::fs::read_to_string(entry.dir.join(entry_file))
    {
        text.push_str(&format!("\n# tools/{name}/{entry_file}\n\n```\n{src}```\n"));
    }
    Some((text, "text/markdown"))
}
