//! Content hashes of tool directories: the source hash (source files + lockfile) and the
//! artifact hash, written into tool.toml as "sha256:<hex>".

#![deny(missing_docs)]
#![forbid(unsafe_code)]

use sha2::{Digest, Sha256};
use std::path::Path;

/// Names never part of a tool's source: build outputs, environments, caches (the one list,
/// kept in `names`).
pub const IGNORED_NAMES: &[&str] = toolsmith_names::RESERVED_DIRS;

/// Every entry under a tool directory, sorted by name, not descending into ignored
/// directories (build outputs, environments, caches): the one walk of a tool's files.
pub fn walk_tool_dir(dir: &Path) -> impl Iterator<Item = walkdir::Result<walkdir::DirEntry>> {
    walkdir::WalkDir::new(dir)
        .min_depth(1)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let n = e.file_name().to_string_lossy();
            !(e.file_type().is_dir() && IGNORED_NAMES.contains(&n.as_ref()))
        })
}

/// "sha256:<hex>" of bytes.
pub fn sha256_bytes(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// "sha256:<hex>" of a file's contents.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    Ok(sha256_bytes(&std::fs::read(path)?))
}

/// The source hash of a tool directory: every regular file except tool.toml, the artifact
/// and ignored directories, sorted by relative path, each as (path, NUL, length, contents).
/// Independent of file times, so a clone of the toolbox hashes the same.
pub fn source_hash(dir: &Path, artifact: Option<&str>) -> std::io::Result<String> {
    let mut files = Vec::new();
    let walker = walk_tool_dir(dir);
    for entry in walker {
        let entry = entry.map_err(std::io::Error::other)?;
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(dir)
            .map_err(std::io::Error::other)?;
        let rel = rel.to_string_lossy().replace('\\', "/");
        if rel == toolsmith_names::MANIFEST_FILE || Some(rel.as_str()) == artifact {
            continue;
        }
        files.push(rel);
    }
    files.sort();
    let mut h = Sha256::new();
    for rel in files {
        let bytes = std::fs::read(dir.join(&rel))?;
        h.update(rel.as_bytes());
        h.update([0]);
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    Ok(format!("sha256:{}", hex::encode(h.finalize())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, bytes: &[u8]) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }

    #[test]
    fn the_source_hash_covers_the_source_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        write(dir, "main.py", b"print(1)\n");
        write(dir, "lib/util.py", b"x = 1\n");
        let base = source_hash(dir, Some("tool.wasm")).unwrap();
        assert!(
            base.starts_with("sha256:") && base.len() == 7 + 64,
            "{base}"
        );

        // tool.toml, the artifact and reserved directories (environments, build outputs) are
        // not source: changing them keeps the hash.
        write(dir, toolsmith_names::MANIFEST_FILE, b"name = \"t\"\n");
        write(dir, "tool.wasm", b"\0asm");
        for reserved in IGNORED_NAMES {
            write(dir, &format!("{reserved}/x"), b"anything");
        }
        assert_eq!(source_hash(dir, Some("tool.wasm")).unwrap(), base);

        // A source file's content, its name or a new file changes it.
        write(dir, "lib/util.py", b"x = 2\n");
        let edited = source_hash(dir, Some("tool.wasm")).unwrap();
        assert_ne!(edited, base);
        write(dir, "lib/util.py", b"x = 1\n");
        assert_eq!(source_hash(dir, Some("tool.wasm")).unwrap(), base);
        write(dir, "extra.py", b"");
        assert_ne!(source_hash(dir, Some("tool.wasm")).unwrap(), base);
    }

    #[test]
    fn where_one_file_ends_and_the_next_begins_is_part_of_the_hash() {
        let a = tempfile::tempdir().unwrap();
        write(a.path(), "a", b"xy");
        write(a.path(), "b", b"z");
        let b = tempfile::tempdir().unwrap();
        write(b.path(), "a", b"x");
        write(b.path(), "b", b"yz");
        assert_ne!(
            source_hash(a.path(), None).unwrap(),
            source_hash(b.path(), None).unwrap()
        );
        assert_eq!(
            sha256_bytes(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
