//! Fetch a repository into a temporary bare clone (gix; the git CLI for http(s), which this
//! build's gix has no transport for) and read a directory of it at one commit, refusing
//! symlinks, submodules, unsafe names and oversized files.

use super::{MAX_FILE_BYTES, MAX_FILES, MAX_TOOL_BYTES, ShareError};
use crate::history::FileAt;
use gix::bstr::ByteSlice;
use gix::objs::tree::EntryKind;
use std::sync::atomic::AtomicBool;

/// A fetched repository, pinned to one commit; removed from disk on drop.
pub struct Fetched {
    _tmp: tempfile::TempDir,
    repo: gix::Repository,
    /// The URL as given to git.
    pub url: String,
    /// The full commit id the ref resolved to.
    pub commit: String,
}

fn fetch_err(url: &str, e: impl std::fmt::Display) -> ShareError {
    ShareError::Fetch {
        url: url.to_string(),
        message: e.to_string(),
    }
}

/// Clone `url` (bare, into a temporary directory) and resolve `reference` (a branch, tag or
/// commit id; None for the remote's HEAD) to a commit.
pub fn fetch(url: &str, reference: Option<&str>) -> Result<Fetched, ShareError> {
    if url.starts_with('-') {
        return Err(fetch_err(url, "a URL must not start with '-'"));
    }
    let tmp = tempfile::Builder::new()
        .prefix("toolsmith-import-")
        .tempdir()
        .map_err(|e| fetch_err(url, format!("cannot create a temporary directory: {e}")))?;
    let dest = tmp.path().join("repo.git");
    let lower = url.to_ascii_lowercase();
    let repo = if lower.starts_with("http://") || lower.starts_with("https://") {
        // This build of gix has no http transport (it would cost a TLS stack in the build):
        // the git CLI fetches, gix reads.
        let out = std::process::Command::new("git")
            .args(["clone", "--bare", "--quiet", "--no-tags", "--", url])
            .arg(&dest)
            .env("GIT_TERMINAL_PROMPT", "0")
            .output()
            .map_err(|e| fetch_err(url, format!("cannot run git: {e}")))?;
        if !out.status.success() {
            return Err(fetch_err(url, String::from_utf8_lossy(&out.stderr).trim()));
        }
        // Tags too, so that `ref` may name one.
        let _ = std::process::Command::new("git")
            .arg("-C")
            .arg(&dest)
            .args(["fetch", "--quiet", "--", url, "+refs/tags/*:refs/tags/*"])
            .env("GIT_TERMINAL_PROMPT", "0")
            .output();
        gix::open(&dest).map_err(|e| fetch_err(url, e))?
    } else {
        let mut prepare = gix::prepare_clone_bare(url, &dest).map_err(|e| fetch_err(url, e))?;
        let (repo, _) = prepare
            .fetch_only(gix::progress::Discard, &AtomicBool::new(false))
            .map_err(|e| fetch_err(url, e))?;
        repo
    };
    let commit = resolve(&repo, url, reference)?;
    Ok(Fetched {
        _tmp: tmp,
        repo,
        url: url.to_string(),
        commit,
    })
}

fn resolve(
    repo: &gix::Repository,
    url: &str,
    reference: Option<&str>,
) -> Result<String, ShareError> {
    let candidates: Vec<String> = match reference {
        // A remote HEAD may point to an unborn branch (a bare repository pushed to on
        // another branch): fall back to main, master, then the only branch there is.
        None => {
            let mut c: Vec<String> = ["HEAD", "refs/heads/main", "refs/heads/master"]
                .map(String::from)
                .to_vec();
            if let Ok(refs) = repo.references()
                && let Ok(branches) = refs.local_branches()
            {
                let names: Vec<String> = branches
                    .filter_map(Result::ok)
                    .map(|r| r.name().as_bstr().to_string())
                    .collect();
                if names.len() == 1 {
                    c.extend(names);
                }
            }
            c
        }
        Some(r) => vec![
            format!("refs/heads/{r}"),
            format!("refs/remotes/origin/{r}"),
            format!("refs/tags/{r}"),
            r.to_string(),
        ],
    };
    for c in &candidates {
        if let Ok(id) = repo.rev_parse_single(c.as_str())
            && let Ok(commit) = id.object().and_then(|o| o.peel_to_commit())
        {
            return Ok(commit.id.to_hex().to_string());
        }
    }
    Err(ShareError::UnknownRef {
        url: url.to_string(),
        reference: reference.unwrap_or("HEAD").to_string(),
    })
}

/// Validate a repository-relative directory path given by the user.
pub(crate) fn clean_path(path: &str) -> Result<String, ShareError> {
    let bad = |reason: &str| ShareError::BadPath {
        path: path.to_string(),
        reason: reason.to_string(),
    };
    let trimmed = path.trim_matches('/');
    if path.starts_with('/') {
        return Err(bad("it must be relative to the repository root"));
    }
    for c in trimmed.split('/') {
        match c {
            "" if trimmed.is_empty() => {}
            "" | "." | ".." => {
                return Err(bad("it must not contain '.', '..' or empty components"));
            }
            c if c.eq_ignore_ascii_case(".git") || c.contains(['\\', '\0']) => {
                return Err(bad("it must not contain .git, backslashes or NUL"));
            }
            _ => {}
        }
    }
    Ok(trimmed.to_string())
}

/// One entry name of a git tree must be a single safe path component.
pub(crate) fn check_component(dir: &str, name: &[u8]) -> Result<String, ShareError> {
    let shown = join(dir, &String::from_utf8_lossy(name));
    let bad = |reason: &str| ShareError::BadPath {
        path: shown.clone(),
        reason: reason.to_string(),
    };
    let name = name
        .to_str()
        .map_err(|_| bad("the name is not valid UTF-8"))?;
    if name.is_empty() || name == "." || name == ".." {
        return Err(bad("it leaves the tool directory"));
    }
    if name.contains(['/', '\\', '\0']) || name.chars().any(crate::names::is_invisible) {
        return Err(bad(
            "the name holds a path separator, a control character or an invisible or bidirectional character",
        ));
    }
    if name.eq_ignore_ascii_case(".git") {
        return Err(bad("a .git entry would nest a repository"));
    }
    Ok(name.to_string())
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

impl Fetched {
    fn git_err(&self, what: String, e: impl std::fmt::Display) -> ShareError {
        fetch_err(&self.url, format!("{what}: {e}"))
    }

    /// The tree at `path` ("" = root) in commit `commit` (None: the fetched commit), or None.
    fn tree_at(
        &self,
        commit: Option<&str>,
        path: &str,
    ) -> Result<Option<gix::Tree<'_>>, ShareError> {
        let commit = commit.unwrap_or(&self.commit);
        let id = gix::ObjectId::from_hex(commit.as_bytes())
            .map_err(|e| self.git_err(format!("bad commit id {commit}"), e))?;
        let root = self
            .repo
            .find_commit(id)
            .and_then(|c| c.tree())
            .map_err(|e| self.git_err(format!("read commit {commit}"), e))?;
        if path.is_empty() {
            return Ok(Some(root));
        }
        let Some(entry) = root
            .lookup_entry(path.split('/').map(str::as_bytes))
            .map_err(|e| self.git_err(format!("look up {path}"), e))?
        else {
            return Ok(None);
        };
        if !entry.mode().is_tree() {
            return Ok(None);
        }
        let tree = self
            .repo
            .find_tree(entry.object_id())
            .map_err(|e| self.git_err(format!("read {path}"), e))?;
        Ok(Some(tree))
    }

    /// Whether commit `commit` exists in the fetched repository.
    pub fn has_commit(&self, commit: &str) -> bool {
        gix::ObjectId::from_hex(commit.as_bytes())
            .ok()
            .is_some_and(|id| self.repo.find_commit(id).is_ok())
    }

    /// Names of the entries directly under `path` at the fetched commit: (name, is_dir).
    pub fn list(&self, path: &str) -> Result<Vec<(String, bool)>, ShareError> {
        let Some(tree) = self.tree_at(None, path)? else {
            return Err(self.no_path(path));
        };
        let decoded = tree
            .decode()
            .map_err(|e| self.git_err(format!("decode {path}"), e))?;
        let mut out = Vec::new();
        for e in &decoded.entries {
            let name = check_component(path, e.filename)?;
            out.push((name, e.mode.is_tree()));
        }
        Ok(out)
    }

    fn no_path(&self, path: &str) -> ShareError {
        ShareError::NoSuchPath {
            url: self.url.clone(),
            commit: self.commit.clone(),
            path: path.to_string(),
        }
    }

    /// Every file under `path` at `commit` (None: the fetched commit), relative to `path`,
    /// after the safety checks; an error names the first refused entry.
    pub fn read_dir_at(&self, commit: Option<&str>, path: &str) -> Result<Vec<FileAt>, ShareError> {
        let Some(tree) = self.tree_at(commit, path)? else {
            return Err(self.no_path(path));
        };
        let mut out = Vec::new();
        self.walk(tree, path, "", &mut out)?;
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    /// The files under `path` at the fetched commit.
    pub fn read_dir(&self, path: &str) -> Result<Vec<FileAt>, ShareError> {
        self.read_dir_at(None, path)
    }

    fn walk(
        &self,
        tree: gix::Tree<'_>,
        base: &str,
        rel: &str,
        out: &mut Vec<FileAt>,
    ) -> Result<(), ShareError> {
        let decoded = tree
            .decode()
            .map_err(|e| self.git_err(format!("decode {}", join(base, rel)), e))?;
        let entries: Vec<(Vec<u8>, gix::objs::tree::EntryMode, gix::ObjectId)> = decoded
            .entries
            .iter()
            .map(|e| (e.filename.to_vec(), e.mode, e.oid.to_owned()))
            .collect();
        for (name, mode, oid) in entries {
            let name = check_component(&join(base, rel), &name)?;
            let path = join(rel, &name);
            let shown = join(base, &path);
            match mode.kind() {
                EntryKind::Tree => {
                    let sub = self
                        .repo
                        .find_tree(oid)
                        .map_err(|e| self.git_err(format!("read {shown}"), e))?;
                    self.walk(sub, base, &path, out)?;
                }
                EntryKind::Link => {
                    let target = self
                        .repo
                        .find_blob(oid)
                        .map(|b| String::from_utf8_lossy(&b.data).into_owned())
                        .unwrap_or_default();
                    return Err(ShareError::Symlink {
                        path: shown,
                        target,
                    });
                }
                EntryKind::Commit => return Err(ShareError::Submodule { path: shown }),
                EntryKind::Blob | EntryKind::BlobExecutable => {
                    let header = self
                        .repo
                        .find_header(oid)
                        .map_err(|e| self.git_err(format!("read {shown}"), e))?;
                    if header.size() > MAX_FILE_BYTES {
                        return Err(ShareError::TooLarge {
                            path: shown,
                            size: header.size(),
                            limit: MAX_FILE_BYTES,
                        });
                    }
                    let total: u64 = out.iter().map(|f| f.bytes.len() as u64).sum();
                    if total + header.size() > MAX_TOOL_BYTES {
                        return Err(ShareError::TooLarge {
                            path: if base.is_empty() {
                                "(repository root)".into()
                            } else {
                                base.to_string()
                            },
                            size: total + header.size(),
                            limit: MAX_TOOL_BYTES,
                        });
                    }
                    if out.len() >= MAX_FILES {
                        return Err(ShareError::TooManyFiles {
                            path: base.to_string(),
                            limit: MAX_FILES,
                        });
                    }
                    let bytes = self
                        .repo
                        .find_blob(oid)
                        .map_err(|e| self.git_err(format!("read {shown}"), e))?
                        .take_data();
                    out.push(FileAt {
                        path,
                        bytes,
                        executable: mode.kind() == EntryKind::BlobExecutable,
                    });
                }
            }
        }
        Ok(())
    }
}
