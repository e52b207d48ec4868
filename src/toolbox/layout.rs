//! What a new toolbox contains, where the default one lives, and who commits.

use crate::git::Signature;
use include_dir::{Dir, include_dir};
use std::path::{Path, PathBuf};

/// The example toolbox, compiled into the binary so a fresh machine can be seeded.
static STORE_EXAMPLE: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/store-example");

const README: &str = "# A toolsmith toolbox

Every directory under `tools/` is one tool, described by its `tool.toml`. This repository is
managed by [toolsmith](https://github.com/) but it is plain git: edit a tool.toml in your editor,
`git log tools/NAME`, `git push` and `git pull` to share. A running `toolsmith serve` picks up
every change.
";

const GITIGNORE: &str =
    "# Built, installed and cached things: rebuilt from the committed lockfiles on demand.
target/
.venv/
node_modules/
__pycache__/
*.pyc
.toolsmith/
# toolsmith's in-flight writes (hidden directories under tools/)
/tools/.*
";

const GITATTRIBUTES: &str = "# Built artifacts are binary: never diff or merge them as text.
*.wasm binary
*.cwasm binary
";

/// The files of an empty toolbox.
pub(super) fn skeleton() -> Vec<(String, Vec<u8>)> {
    vec![
        ("README.md".into(), README.as_bytes().to_vec()),
        (".gitignore".into(), GITIGNORE.as_bytes().to_vec()),
        (".gitattributes".into(), GITATTRIBUTES.as_bytes().to_vec()),
        ("tools/.gitkeep".into(), Vec::new()),
    ]
}

/// The tool files of the example toolbox (paths relative to the toolbox root).
pub fn seed_files() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    collect(&STORE_EXAMPLE, &mut out);
    out.retain(|(p, _)| p.starts_with("tools/") && !p.contains("/target/"));
    out.sort();
    out
}

fn collect(dir: &Dir<'static>, out: &mut Vec<(String, Vec<u8>)>) {
    for f in dir.files() {
        out.push((
            f.path().to_string_lossy().replace('\\', "/"),
            f.contents().to_vec(),
        ));
    }
    for d in dir.dirs() {
        collect(d, out);
    }
}

/// The default toolbox: `$TOOLSMITH_HOME`, else `<data dir>/toolsmith` (XDG on Linux).
pub fn default_location() -> PathBuf {
    if let Some(home) = std::env::var_os("TOOLSMITH_HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(home);
    }
    dirs::data_dir()
        .unwrap_or_else(|| PathBuf::from("."))
        .join("toolsmith")
}

/// The commit identity: the repository's or user's git identity when configured, else toolsmith's.
pub(crate) fn signature(root: &Path) -> Signature {
    let from_git = |key: &str| -> Option<String> {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(["config", "--get", key])
            .output()
            .ok()?;
        let v = String::from_utf8(out.stdout).ok()?.trim().to_string();
        (!v.is_empty()).then_some(v)
    };
    static CACHE: std::sync::OnceLock<Signature> = std::sync::OnceLock::new();
    CACHE
        .get_or_init(|| Signature {
            name: from_git("user.name").unwrap_or_else(|| "toolsmith".into()),
            email: from_git("user.email").unwrap_or_else(|| "toolsmith@localhost".into()),
        })
        .clone()
}
