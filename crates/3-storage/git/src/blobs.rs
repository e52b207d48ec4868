//! Turning work-tree files into blobs, honouring ignore rules and attributes.

use super::*;

// ---------------------------------------------------------------------------------------------
// Turning work-tree files into blobs
// ---------------------------------------------------------------------------------------------

/// A work-tree file written to the object database.
pub(super) struct AddedFile {
    /// Repo-relative path.
    pub(super) path: BString,
    pub(super) kind: EntryKind,
    pub(super) id: ObjectId,
    pub(super) stat: gix::index::entry::Stat,
}

/// Writes work-tree files as blobs, deciding what is ignored like git does.
pub(super) struct FileAdder<'repo> {
    pub(super) repo: &'repo gix::Repository,
    pub(super) workdir: &'repo Path,
    pub(super) excludes: gix::AttributeStack<'repo>,
    pub(super) filters: gix::filter::Pipeline<'repo>,
}

impl<'repo> FileAdder<'repo> {
    pub(super) fn new(
        repo: &'repo gix::Repository,
        workdir: &'repo Path,
        index: &gix::index::State,
    ) -> Result<Self, GitError> {
        let excludes = repo
            .excludes(
                index,
                None,
                gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
            )
            .ctx(workdir, || {
                "load the ignore rules (.gitignore, info/exclude)".into()
            })?;
        // Like `repo.filter_pipeline()`, but with our freshly read index instead of a second read.
        let filters = repo
            .attributes_only(
                index,
                gix::worktree::stack::state::attributes::Source::WorktreeThenIdMapping,
            )
            .and_then(|attributes| gix::filter::Pipeline::new(repo, attributes.detach()))
            .ctx(workdir, || "load the filter rules (.gitattributes)".into())?;
        Ok(FileAdder {
            repo,
            workdir,
            excludes,
            filters,
        })
    }

    pub(super) fn is_excluded(&mut self, rela: &str, is_dir: bool) -> Result<bool, GitError> {
        let mode = if is_dir {
            gix::index::entry::Mode::DIR
        } else {
            gix::index::entry::Mode::FILE
        };
        let platform = self
            .excludes
            .at_entry(rela, Some(mode))
            .ctx(self.workdir, || format!("check whether {rela} is ignored"))?;
        Ok(platform.is_excluded())
    }

    /// All committable files under `prefix`, or none if the directory is missing or ignored.
    /// With `source`, the files are read from that directory instead of `<workdir>/<prefix>`
    /// (a staged copy that will be renamed into place), but named and filtered as if they
    /// were at `prefix`.
    pub(super) fn scan_prefix(
        &mut self,
        prefix: &str,
        source: Option<&Path>,
        index: &gix::index::State,
    ) -> Result<Vec<AddedFile>, GitError> {
        // Every ancestor of the prefix must be a real directory (not a symlink) and not ignored.
        let mut ancestor = String::new();
        let components: Vec<&str> = prefix.split('/').collect();
        for (i, component) in components.iter().enumerate() {
            let last = i + 1 == components.len();
            if !ancestor.is_empty() {
                ancestor.push('/');
            }
            ancestor.push_str(component);
            let abs = match source {
                Some(src) if last => src.to_path_buf(),
                _ => self.workdir.join(&ancestor),
            };
            let meta = match std::fs::symlink_metadata(&abs) {
                Ok(meta) => meta,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
                Err(err) => return Err(io_err("inspect", abs)(err)),
            };
            if meta.file_type().is_symlink() {
                return Err(GitError::Symlink { path: abs });
            }
            if !meta.is_dir() {
                if ancestor == prefix {
                    return Err(GitError::NotADirectory { path: abs });
                }
                // A file where a parent directory of the prefix would be: nothing lives below.
                return Ok(Vec::new());
            }
            if self.is_excluded(&ancestor, true)? {
                return Ok(Vec::new());
            }
        }
        let mut out = Vec::new();
        let abs = source
            .map(Path::to_path_buf)
            .unwrap_or_else(|| self.workdir.join(prefix));
        self.scan_dir(prefix, &abs, index, &mut out)?;
        Ok(out)
    }

    pub(super) fn scan_dir(
        &mut self,
        rela_dir: &str,
        abs_dir: &Path,
        index: &gix::index::State,
        out: &mut Vec<AddedFile>,
    ) -> Result<(), GitError> {
        let abs_dir = abs_dir.to_path_buf();
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(&abs_dir).map_err(io_err("read directory", &abs_dir))? {
            let entry = entry.map_err(io_err("read directory", &abs_dir))?;
            let file_type = entry.file_type().map_err(io_err("inspect", entry.path()))?;
            let name = entry
                .file_name()
                .into_string()
                .map_err(|name| GitError::InvalidPath {
                    path: format!("{rela_dir}/{}", name.to_string_lossy()),
                    reason: "file names must be valid UTF-8",
                })?;
            entries.push((name, file_type));
        }
        // Sorted traversal keeps the ignore stack's directory pushes/pops minimal and the
        // order of work deterministic.
        entries.sort_by(|a, b| a.0.cmp(&b.0));

        for (name, file_type) in entries {
            let rela = format!("{rela_dir}/{name}");
            if name == ".git" {
                return Err(GitError::NestedRepository { path: abs_dir });
            }
            if file_type.is_dir() {
                if self.is_excluded(&rela, true)? {
                    continue;
                }
                self.scan_dir(&rela, &abs_dir.join(&name), index, out)?;
            } else if self.is_excluded(&rela, false)? {
                continue;
            } else if file_type.is_symlink() {
                return Err(GitError::Symlink {
                    path: abs_dir.join(&name),
                });
            } else if file_type.is_file() {
                out.push(self.add_file(&rela, &abs_dir.join(&name), index)?);
            }
            // Fifos, sockets and devices are skipped, as git does.
        }
        Ok(())
    }

    /// Write the regular file at `abs`, to be committed at `rela` (repo-relative), as a blob,
    /// after clean filters. The stat data is taken *before* reading, so a concurrent change
    /// shows up as modified (it stays valid when a parent directory is renamed).
    pub(super) fn add_file(
        &mut self,
        rela: &str,
        abs: &Path,
        index: &gix::index::State,
    ) -> Result<AddedFile, GitError> {
        use gix::filter::plumbing::pipeline::convert::ToGitOutcome;

        for component in rela.split('/') {
            gix::validate::path::component(component.into(), None, PROTECT_OPTIONS).map_err(
                |_| GitError::InvalidPath {
                    path: rela.to_owned(),
                    reason: "git does not allow this file name (see core.protectNTFS)",
                },
            )?;
        }
        let abs = abs.to_path_buf();
        let meta =
            gix::index::fs::Metadata::from_path_no_follow(&abs).map_err(io_err("inspect", &abs))?;
        if meta.is_symlink() {
            return Err(GitError::Symlink { path: abs });
        }
        if !meta.is_file() {
            return Err(GitError::InvalidPath {
                path: rela.to_owned(),
                reason: "not a regular file",
            });
        }
        let stat = gix::index::entry::Stat::from_fs(&meta).map_err(|err| GitError::Io {
            action: "read the modification time of",
            path: abs.clone(),
            source: std::io::Error::other(err),
        })?;
        let kind = if meta.is_executable() {
            EntryKind::BlobExecutable
        } else {
            EntryKind::Blob
        };

        let file = std::fs::File::open(&abs).map_err(io_err("open", &abs))?;
        let repo = self.repo;
        let workdir = self.workdir;
        let converted = self
            .filters
            .convert_to_git(file, Path::new(rela), index)
            .ctx(workdir, || {
                format!("apply .gitattributes filters to {rela}")
            })?;
        let id = match converted {
            ToGitOutcome::Unchanged(file) => repo.write_blob_stream(file),
            ToGitOutcome::Buffer(buf) => repo.write_blob(buf),
            ToGitOutcome::Process(read) => repo.write_blob_stream(read),
        }
        .ctx(workdir, || format!("store {rela} as a blob"))?
        .detach();

        Ok(AddedFile {
            path: rela.into(),
            kind,
            id,
            stat,
        })
    }
}
