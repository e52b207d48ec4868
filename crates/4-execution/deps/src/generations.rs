//! A tool's environments come in generations: `<env dir>/<eco>-<16 hex>/`, each built once in
//! a directory of its own and never changed after its marker is written. A new lockfile (a
//! registration asking for other packages, a pull) gets a new generation beside the old ones,
//! so no process of an approved version ever sees its environment rewritten under it — a
//! staged registration of another version (whose packages the AI chose) installs elsewhere.
//! Old generations are removed, never edited: a process still using one loses files, it never
//! gets new ones.

use std::path::{Path, PathBuf};

/// Generations kept besides the one in use (the previous version's, for a rollback or a call
/// still running).
const KEPT: usize = 2;

/// The generations of `subdir` (`py`, `node`) under `envd`, newest first.
pub fn list(envd: &Path, subdir: &str) -> Vec<PathBuf> {
    let prefix = format!("{subdir}-");
    let Ok(entries) = std::fs::read_dir(envd) else {
        return Vec::new();
    };
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.strip_prefix(&prefix).is_some_and(is_id))
        })
        .filter_map(|e| {
            let md = e.metadata().ok().filter(|md| md.is_dir())?;
            Some((md.modified().ok()?, e.path()))
        })
        .collect();
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    found.into_iter().map(|(_, p)| p).collect()
}

fn is_id(s: &str) -> bool {
    s.len() == 16 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A new generation's path (not created).
pub fn fresh(envd: &Path, subdir: &str) -> std::io::Result<PathBuf> {
    Ok(envd.join(format!("{subdir}-{}", crate::platform::random_hex(8)?)))
}

/// Remove the generations of `subdir` other than `keep` and the `KEPT` newest others, and the
/// environment of the layout before generations (`<envd>/<subdir>`, rewritten in place).
pub fn prune(envd: &Path, subdir: &str, keep: &Path) {
    let legacy = envd.join(subdir);
    if legacy.is_dir() {
        let _ = std::fs::remove_dir_all(&legacy);
    }
    for old in list(envd, subdir)
        .into_iter()
        .filter(|g| g != keep)
        .skip(KEPT)
    {
        if let Err(e) = std::fs::remove_dir_all(&old) {
            tracing::debug!(dir = %old.display(), error = %e, "an old environment stays");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generations_are_listed_newest_first_and_old_ones_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let envd = tmp.path();
        let mut made = Vec::new();
        for _ in 0..5 {
            let g = fresh(envd, "py").unwrap();
            std::fs::create_dir_all(&g).unwrap();
            made.push(g);
            std::thread::sleep(std::time::Duration::from_millis(15));
        }
        std::fs::create_dir_all(envd.join("py")).unwrap();
        std::fs::create_dir_all(envd.join("node-0123456789abcdef")).unwrap();
        std::fs::create_dir_all(envd.join("py-notanid")).unwrap();
        let listed = list(envd, "py");
        assert_eq!(listed, made.iter().rev().cloned().collect::<Vec<_>>());
        // The oldest is the one in use: it stays, with the two newest.
        prune(envd, "py", &made[0]);
        assert_eq!(
            list(envd, "py"),
            vec![made[4].clone(), made[3].clone(), made[0].clone()]
        );
        assert!(
            !envd.join("py").exists(),
            "the old layout's environment goes"
        );
        assert!(envd.join("node-0123456789abcdef").exists() && envd.join("py-notanid").exists());
    }
}
