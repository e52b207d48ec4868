//! A referenced local path (a direct reference's file or directory): its content digest, and
//! the copy that hashes exactly what it copies, so a file swapped after a person allowed it is
//! not the file allowed.

use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The most files of a referenced directory, and the most bytes of a referenced file or
/// directory, that are read.
const MAX_FILES: usize = 20_000;
const MAX_BYTES: u64 = 512 << 20;
/// Directories of a referenced tree left out of its digest and its copy (version-control and
/// interpreter caches, installed packages).
const SKIPPED: &[&str] = &[".git", ".hg", ".svn", "__pycache__", "node_modules"];

/// Why a referenced path could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is a symbolic link or a special file, which is not followed")]
    Link { path: PathBuf },
    #[error("{path} holds more than {MAX_FILES} files or {} MiB", MAX_BYTES >> 20)]
    TooLarge { path: PathBuf },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> PathError + '_ {
    move |source| PathError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A referenced path's content, piece by piece (the digest and the copy are made from the
/// same walk).
trait Sink {
    fn dir(&mut self, rel: &Path) -> std::io::Result<()>;
    fn file(&mut self, rel: &Path, executable: bool, from: &mut dyn Read) -> std::io::Result<u64>;
}

/// Walk `path` (a file or a directory, symbolic links refused), feeding `sink`; the digest of
/// what was read: `sha256:HEX` of a file's bytes (as `sha256sum` prints it), `tree-sha256:HEX`
/// of a directory (each entry's relative path, kind, mode and bytes, in name order).
fn walk(path: &Path, sink: &mut dyn Sink) -> Result<String, PathError> {
    let md = std::fs::symlink_metadata(path).map_err(io_err(path))?;
    let mut h = Sha256::new();
    if md.is_file() {
        let mut f = std::fs::File::open(path).map_err(io_err(path))?;
        if md.len() > MAX_BYTES {
            return Err(PathError::TooLarge {
                path: path.to_path_buf(),
            });
        }
        let mut hashing = Hashing {
            inner: &mut f,
            hash: &mut h,
        };
        let name = path.file_name().map(PathBuf::from).unwrap_or_default();
        sink.file(&name, is_exec(&md), &mut hashing)
            .map_err(io_err(path))?;
        return Ok(format!("sha256:{}", hex::encode(h.finalize())));
    }
    if !md.is_dir() {
        return Err(PathError::Link {
            path: path.to_path_buf(),
        });
    }
    h.update(b"toolsmith-tree-1\0");
    let (mut files, mut bytes) = (0usize, 0u64);
    let walker = walkdir::WalkDir::new(path)
        .follow_links(false)
        .sort_by_file_name()
        .min_depth(1)
        .into_iter()
        .filter_entry(|e| !(e.file_type().is_dir() && SKIPPED.iter().any(|s| e.file_name() == *s)));
    for entry in walker {
        let entry = entry.map_err(|e| PathError::Io {
            path: path.to_path_buf(),
            source: e.into(),
        })?;
        let rel = entry.path().strip_prefix(path).unwrap_or(entry.path());
        let rel_text = rel.to_string_lossy().replace('\\', "/");
        let ft = entry.file_type();
        files += 1;
        if files > MAX_FILES {
            return Err(PathError::TooLarge {
                path: path.to_path_buf(),
            });
        }
        if ft.is_dir() {
            h.update(format!("D {rel_text}\0").as_bytes());
            sink.dir(rel).map_err(io_err(entry.path()))?;
        } else if ft.is_file() {
            let md = entry.metadata().map_err(|e| PathError::Io {
                path: entry.path().to_path_buf(),
                source: e.into(),
            })?;
            bytes += md.len();
            if bytes > MAX_BYTES {
                return Err(PathError::TooLarge {
                    path: path.to_path_buf(),
                });
            }
            let exec = is_exec(&md);
            h.update(format!("F {rel_text}\0{}\0{}\0", u8::from(exec), md.len()).as_bytes());
            let mut f = std::fs::File::open(entry.path()).map_err(io_err(entry.path()))?;
            let mut hashing = Hashing {
                inner: &mut f,
                hash: &mut h,
            };
            let n = sink
                .file(rel, exec, &mut hashing)
                .map_err(io_err(entry.path()))?;
            if n != md.len() {
                return Err(PathError::Io {
                    path: entry.path().to_path_buf(),
                    source: std::io::Error::other("the file changed while it was read"),
                });
            }
        } else {
            return Err(PathError::Link {
                path: entry.path().to_path_buf(),
            });
        }
    }
    Ok(format!("tree-sha256:{}", hex::encode(h.finalize())))
}

/// Whether a file is executable; never on Windows (no such bit: the hash is the same there
/// for every file).
fn is_exec(md: &std::fs::Metadata) -> bool {
    toolsmith_platform::executable(md).unwrap_or(false)
}

/// A reader that hashes what passes through it.
struct Hashing<'a> {
    inner: &'a mut dyn Read,
    hash: &'a mut Sha256,
}

impl Read for Hashing<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
}

struct Discard;

impl Sink for Discard {
    fn dir(&mut self, _: &Path) -> std::io::Result<()> {
        Ok(())
    }
    fn file(&mut self, _: &Path, _: bool, from: &mut dyn Read) -> std::io::Result<u64> {
        std::io::copy(from, &mut std::io::sink())
    }
}

/// The digest of what `path` holds now (see `walk`).
pub fn digest(path: &Path) -> Result<String, PathError> {
    walk(path, &mut Discard)
}

struct CopyTo<'a>(&'a Path);

impl Sink for CopyTo<'_> {
    fn dir(&mut self, rel: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(self.0.join(rel))
    }
    fn file(&mut self, rel: &Path, executable: bool, from: &mut dyn Read) -> std::io::Result<u64> {
        let dest = self.0.join(rel);
        if let Some(p) = dest.parent() {
            std::fs::create_dir_all(p)?;
        }
        let mut out = std::fs::File::create(&dest)?;
        let n = std::io::copy(from, &mut out)?;
        out.flush()?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = if executable { 0o755 } else { 0o644 };
            std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(mode))?;
        }
        let _ = executable;
        Ok(n)
    }
}

/// Copy `path` into the directory `into` (a file keeps its name; a directory's content goes
/// into `into` itself); the digest of exactly what was copied, and the copy's path.
pub fn copy(path: &Path, into: &Path) -> Result<(String, PathBuf), PathError> {
    std::fs::create_dir_all(into).map_err(io_err(into))?;
    let digest = walk(path, &mut CopyTo(into))?;
    let copied = if path.is_dir() {
        into.to_path_buf()
    } else {
        into.join(path.file_name().unwrap_or_default())
    };
    Ok((digest, copied))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digest_covers_names_modes_and_bytes_and_the_copy_matches_it() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("pkg");
        std::fs::create_dir_all(d.join("src/__pycache__")).unwrap();
        std::fs::write(d.join("src/a.py"), "A = 1\n").unwrap();
        std::fs::write(d.join("src/__pycache__/a.pyc"), "cache").unwrap();
        std::fs::write(d.join("pyproject.toml"), "[project]\n").unwrap();
        let first = digest(&d).unwrap();
        assert!(first.starts_with("tree-sha256:"));
        let (copied, at) = copy(&d, &tmp.path().join("copy")).unwrap();
        assert_eq!(copied, first);
        assert!(at.join("src/a.py").exists() && !at.join("src/__pycache__").exists());
        std::fs::write(d.join("src/__pycache__/a.pyc"), "other cache").unwrap();
        assert_eq!(digest(&d).unwrap(), first, "caches are left out");
        std::fs::write(d.join("src/a.py"), "A = 2\n").unwrap();
        assert_ne!(digest(&d).unwrap(), first);
        let f = tmp.path().join("x.whl");
        std::fs::write(&f, "abc").unwrap();
        assert_eq!(
            digest(&f).unwrap(),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc/passwd", d.join("link")).unwrap();
            assert!(matches!(digest(&d), Err(PathError::Link { .. })));
        }
    }
}
