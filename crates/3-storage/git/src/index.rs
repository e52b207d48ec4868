//! Locks, the index file, and editing trees.

use super::*;

// ---------------------------------------------------------------------------------------------
// Locks and the index
// ---------------------------------------------------------------------------------------------

/// Take `index.lock` like git does; it is removed again when dropped without commit.
pub(super) fn lock_index(index_path: &Path) -> Result<gix::lock::File, GitError> {
    gix::lock::File::acquire_to_update_resource(
        index_path,
        gix::lock::acquire::Fail::AfterDurationWithBackoff(INDEX_LOCK_TIMEOUT),
        None,
        0,
    )
    .map_err(|source| GitError::Lock {
        path: index_path.with_file_name("index.lock"),
        source,
    })
}

/// Read the index fresh from disk (not gix's shared snapshot), or start an empty one.
pub(super) fn read_index(
    repo: &gix::Repository,
    workdir: &Path,
    index_path: &Path,
) -> Result<gix::index::File, GitError> {
    if index_path.exists() {
        repo.open_index().ctx(workdir, || {
            format!("read the index {}", index_path.display())
        })
    } else {
        Ok(gix::index::File::from_state(
            gix::index::State::new(repo.object_hash()),
            index_path.to_owned(),
        ))
    }
}

/// Make the index entries under `prefixes` exactly `added`. Entries that are an ancestor of a
/// `populated` prefix (a file where the tree editor now put a directory) are dropped too.
/// Returns `false` if the entries already were `added`, stat data included, so that the index
/// need not be written.
pub(super) fn replace_index_entries(
    index: &mut gix::index::File,
    prefixes: &[String],
    populated: &[String],
    added: &[AddedFile],
) -> bool {
    let covered = |path: &BStr| {
        let Ok(path) = path.to_str() else {
            return false;
        };
        prefixes.iter().any(|p| is_ancestor_or_self(p, path))
            || populated.iter().any(|p| is_ancestor_or_self(path, p))
    };
    let mut old: Vec<_> = index
        .entries()
        .iter()
        .filter_map(|e| {
            let path = e.path(index);
            covered(path).then(|| (path.to_owned(), e.id, e.mode, e.stat, e.stage()))
        })
        .collect();
    let mut new: Vec<_> = added
        .iter()
        .map(|f| {
            (
                f.path.clone(),
                f.id,
                index_mode(f.kind),
                f.stat,
                gix::index::entry::Stage::Unconflicted,
            )
        })
        .collect();
    old.sort_by(|a, b| a.0.cmp(&b.0));
    new.sort_by(|a, b| a.0.cmp(&b.0));
    if old == new {
        return false;
    }

    index.remove_entries(|_, path, _| covered(path));
    for f in added {
        index.dangerously_push_entry(
            f.stat,
            f.id,
            gix::index::entry::Flags::empty(),
            index_mode(f.kind),
            f.path.as_bstr(),
        );
    }
    index.sort_entries();
    true
}

pub(super) fn index_mode(kind: EntryKind) -> gix::index::entry::Mode {
    match kind {
        EntryKind::BlobExecutable => gix::index::entry::Mode::FILE_EXECUTABLE,
        _ => gix::index::entry::Mode::FILE,
    }
}

/// Write `index` into the held `index.lock` (buffered) and move it into place. The cache-tree
/// extension is dropped first: gix writes it as-is, and a stale one corrupts later git commits.
pub(super) fn write_index(
    repo: &gix::Repository,
    workdir: &Path,
    index: &mut gix::index::File,
    lock: gix::lock::File,
) -> Result<(), GitError> {
    let lock_path = lock.lock_path().to_owned();
    index.remove_tree();
    let skip_hash = repo
        .config_snapshot()
        .boolean("index.skipHash")
        .unwrap_or(false);
    let mut out = BufWriter::with_capacity(64 * 1024, lock);
    index
        .write_to(
            &mut out,
            gix::index::write::Options {
                extensions: Default::default(),
                skip_hash,
            },
        )
        .ctx(workdir, || {
            format!("write the index to {}", lock_path.display())
        })?;
    let lock = out.into_inner().map_err(|e| GitError::Io {
        action: "flush",
        path: lock_path.clone(),
        source: e.into_error(),
    })?;
    lock.commit().map_err(|e| GitError::Io {
        action: "move the new index into place from",
        path: lock_path,
        source: e.error,
    })?;
    Ok(())
}

/// Edits a tree with gix's plumbing editor.
///
/// gix's high-level `tree::Editor::write` checks that *every* entry of every written tree
/// exists in the object database – one lookup (a `stat` for loose objects) per entry, ~10 ms
/// for a `tools/` tree with 1,000 tools. Here entries either come from an existing tree or are
/// blobs just written, so only the names of added files are validated (in [`FileAdder`]).
pub(super) struct TreeEditor<'repo> {
    pub(super) repo: &'repo gix::Repository,
    pub(super) workdir: &'repo Path,
    pub(super) inner: gix::objs::tree::Editor<'repo>,
}

impl<'repo> TreeEditor<'repo> {
    pub(super) fn new(
        repo: &'repo gix::Repository,
        workdir: &'repo Path,
        base: ObjectId,
    ) -> Result<Self, GitError> {
        let inner = repo
            .edit_tree(base)
            .ctx(workdir, || format!("start editing tree {base}"))?
            .detach();
        Ok(TreeEditor {
            repo,
            workdir,
            inner,
        })
    }

    pub(super) fn remove(&mut self, rela: &str) -> Result<(), GitError> {
        self.inner
            .remove(rela.split('/'))
            .ctx(self.workdir, || format!("remove {rela} from the tree"))?;
        Ok(())
    }

    pub(super) fn upsert(&mut self, file: &AddedFile) -> Result<(), GitError> {
        self.inner
            .upsert(file.path.split_str("/"), file.kind, file.id)
            .ctx(self.workdir, || format!("add {} to the tree", file.path))?;
        Ok(())
    }

    /// Write all changed trees; returns the root tree id.
    pub(super) fn write(&mut self, what: &str) -> Result<ObjectId, GitError> {
        let repo = self.repo;
        self.inner
            .write(|tree| repo.write_object(tree).map(|id| id.detach()))
            .ctx(self.workdir, || format!("write {what}"))
    }
}
