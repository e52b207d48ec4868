//! What a new toolbox contains, where the default one lives, and who commits.

use crate::git::Signature;
use include_dir::{Dir, include_dir};
use std::path::Path;

/// The example toolbox, compiled into the binary so a fresh machine can be seeded.
static STORE_EXAMPLE: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../../store-example");

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

/// The commit identity of the toolbox at `root`, read through gix's configuration each time
/// (no process-wide cache, so every toolbox commits with its own): `GIT_COMMITTER_*`,
/// `committer.*`, `user.*` (repository, then user and system config), else toolsmith's own.
pub(crate) fn signature(root: &Path) -> Signature {
    let fallback = || Signature {
        name: "toolsmith".into(),
        email: "toolsmith@localhost".into(),
    };
    let Ok(repo) = crate::git::open(root) else {
        return fallback();
    };
    if let Some(Ok(sig)) = repo.committer() {
        let name = sig.name.to_string();
        let email = sig.email.to_string();
        if !name.trim().is_empty() {
            return Signature { name, email };
        }
    }
    let config = repo.config_snapshot();
    let get = |key: &str| {
        config
            .string(key)
            .map(|v| v.to_string())
            .filter(|v| !v.trim().is_empty())
    };
    let f = fallback();
    Signature {
        name: get("user.name").unwrap_or(f.name),
        email: get("user.email").unwrap_or(f.email),
    }
}
