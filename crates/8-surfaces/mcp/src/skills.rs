//! The MCP skills extension (`io.modelcontextprotocol/skills`, SEP-2640, the stable revision
//! in github.com/modelcontextprotocol/ext-skills): the imported Agent Skills of the toolbox as
//! `skills/list` / `skills/get` entries (verbatim front matter, every file with its sha256
//! digest and size) and their files as `skill://<name>/<path>` resources, read with
//! `resources/read`. No `resources/directory/read` (`directoryRead` is not declared).
//!
//! What is served is what the skill brought (`share::skills::own_files`): toolsmith's own files
//! in the tool directory are left out, so are hidden files and skills past the spec's limits
//! (512 files, 16 MiB). A skill whose front matter `name` is not an Agent Skills name is not
//! served (its final URI segment must equal that name). A skill held by trust (an unsigned
//! sync arrival) is not served either: the skills come from the toolbox's `trust::View`. Every read re-reads the file and answers only for paths
//! in the skill's manifest.

use super::Shared;
use crate::share::skills::{front_matter, own_files, skill_name};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    GetSkillResult, ListSkillsResult, ReadResourceResult, Resource, ResourceContents, Skill,
    SkillFrontmatter, SkillResource, SkillResources,
};
use std::path::PathBuf;

pub const URI_SCHEME: &str = "skill://";

/// One served skill: its entry and the directory its files are read from.
struct Served {
    skill: Skill,
    dir: PathBuf,
    files: Vec<String>,
}

/// The skills served, ordered by URI.
fn served(shared: &Shared) -> Vec<Served> {
    let view = shared.app.view();
    let mut out: Vec<Served> = Vec::new();
    // The skills of the view: a held skill is not among them.
    for s in crate::guide::skills(&view) {
        let Some(entry) = s.tools.first().and_then(|first| view.open(first)) else {
            continue;
        };
        let first = entry.name();
        let dir = entry.dir().to_path_buf();
        let Ok(text) = std::fs::read_to_string(dir.join("SKILL.md")) else {
            continue;
        };
        let mut fm = match front_matter(&text) {
            Ok(fm) => fm,
            Err(why) => {
                tracing::info!(tool = %first, "not served as a skill: {why}");
                continue;
            }
        };
        let (Some(name), Some(description)) = (
            fm.remove("name")
                .and_then(|v| v.as_str().map(str::to_owned)),
            fm.remove("description")
                .and_then(|v| v.as_str().map(str::to_owned)),
        ) else {
            continue;
        };
        if skill_name(&name) != name || out.iter().any(|o| o.skill.frontmatter.name == name) {
            tracing::info!(skill = %name, "not served as a skill: not an Agent Skills name, or a second skill of that name");
            continue;
        }
        let Some(files) = own_files(&dir) else {
            tracing::info!(skill = %name, "not served as a skill: past 512 files or 16 MiB");
            continue;
        };
        let mut resources = Vec::new();
        for rel in &files {
            if let Ok(bytes) = std::fs::read(dir.join(rel)) {
                resources.push(SkillResource::from_bytes(
                    format!("{URI_SCHEME}{name}/{rel}"),
                    &bytes,
                ));
            }
        }
        let mut frontmatter = SkillFrontmatter::new(name.clone(), description);
        frontmatter.extra = fm;
        out.push(Served {
            skill: Skill::new(
                format!("{URI_SCHEME}{name}/SKILL.md"),
                frontmatter,
                SkillResources::Files(resources),
            ),
            dir,
            files,
        });
    }
    out.sort_by(|a, b| a.skill.uri.cmp(&b.skill.uri));
    out
}

/// `skills/list`: every skill on one page.
pub fn list(shared: &Shared) -> ListSkillsResult {
    ListSkillsResult::with_all_items(served(shared).into_iter().map(|s| s.skill).collect())
}

/// `skills/get`; -32602 when no skill has that SKILL.md URI.
pub fn get(shared: &Shared, uri: &str) -> Result<GetSkillResult, McpError> {
    served(shared)
        .into_iter()
        .find(|s| s.skill.uri == uri)
        .map(|s| GetSkillResult::new(s.skill))
        .ok_or_else(|| {
            McpError::invalid_params(
                format!("no skill {uri}; skills/list names the skills served here"),
                None,
            )
        })
}

/// The SKILL.md of every skill, for `resources/list`.
pub fn resources(shared: &Shared) -> Vec<Resource> {
    served(shared)
        .into_iter()
        .map(|s| {
            Resource::new(s.skill.uri.clone(), s.skill.frontmatter.name.clone())
                .with_description(s.skill.frontmatter.description.clone())
                .with_mime_type("text/markdown")
        })
        .collect()
}

/// `resources/read` of a `skill://` URI; None when it is not a file of a served skill.
pub fn read(shared: &Shared, uri: &str) -> Option<ReadResourceResult> {
    let rest = uri.strip_prefix(URI_SCHEME)?;
    let (name, rel) = rest.split_once('/')?;
    let s = served(shared)
        .into_iter()
        .find(|s| s.skill.frontmatter.name == name)?;
    if !s.files.iter().any(|f| f == rel) {
        return None;
    }
    let bytes = std::fs::read(s.dir.join(rel)).ok()?;
    let contents = match String::from_utf8(bytes) {
        Ok(text) if !text.contains('\0') => {
            let mime = if rel.ends_with(".md") {
                "text/markdown"
            } else {
                "text/plain"
            };
            ResourceContents::text(text, uri).with_mime_type(mime)
        }
        Ok(text) => blob(text.into_bytes(), uri),
        Err(e) => blob(e.into_bytes(), uri),
    };
    Some(ReadResourceResult::new(vec![contents]))
}

fn blob(bytes: Vec<u8>, uri: &str) -> ResourceContents {
    use base64::Engine;
    ResourceContents::blob(base64::engine::general_purpose::STANDARD.encode(bytes), uri)
        .with_mime_type("application/octet-stream")
}
