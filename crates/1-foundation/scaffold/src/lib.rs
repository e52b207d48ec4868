//! Scaffolds for new tools: the `templates/` directory, compiled in, rendered for a name.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

use include_dir::{Dir, include_dir};

static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../../templates");

/// The template languages available.
pub fn languages() -> Vec<&'static str> {
    let mut v: Vec<&str> = TEMPLATES
        .dirs()
        .filter_map(|d| d.path().file_name()?.to_str())
        .collect();
    v.sort();
    v
}

/// The files of a template with `{{name}}` and `{{description}}` filled in: (relative path,
/// contents, executable). None when there is no such template.
pub fn render(lang: &str, name: &str, description: &str) -> Option<Vec<(String, Vec<u8>, bool)>> {
    let dir = TEMPLATES.get_dir(lang)?;
    let mut out = Vec::new();
    collect(dir, dir.path(), name, description, &mut out);
    out.sort();
    Some(out)
}

fn collect(
    dir: &Dir<'static>,
    base: &std::path::Path,
    name: &str,
    description: &str,
    out: &mut Vec<(String, Vec<u8>, bool)>,
) {
    for f in dir.files() {
        let rel = f
            .path()
            .strip_prefix(base)
            .unwrap_or(f.path())
            .to_string_lossy()
            .replace('\\', "/");
        let contents = match std::str::from_utf8(f.contents()) {
            Ok(text) => text
                .replace("{{name}}", name)
                .replace("{{description}}", &description.replace('"', "\\\""))
                .into_bytes(),
            Err(_) => f.contents().to_vec(),
        };
        let executable = rel.ends_with(".sh");
        out.push((rel, contents, executable));
    }
    for d in dir.dirs() {
        collect(d, base, name, description, out);
    }
}
