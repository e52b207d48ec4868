//! Which tools each commit changed, remembered per commit, so that `tool_history` on a long
//! history reads a memo instead of comparing 10,000-entry `tools/` trees on every call.
//!
//! What a commit changed never changes (it is a function of the commit and its parents), so
//! the memo is never invalid: it only lacks commits. Each call walks from HEAD to the commits
//! the memo already knows, compares just the new ones, and answers from the memo. The memo
//! lives in this process and on disk (`file`: authenticated, outside git; a missing, damaged
//! or foreign file only means "rebuild"). The one fact that can change is a shallow clone's
//! boundary: a commit read without its parents counts as a root, so when a parent appears
//! (`git fetch --unshallow`) the memo is dropped and rebuilt.
//!
//! Building it for a fresh clone reads every commit's `tools/` tree once, in history order,
//! through a delta cache (each tree is then one delta applied to the previous one), and
//! compares consecutive trees by their bytes (`listing`); long stretches are split across the
//! cores. A server builds it in the background at start (`prepare`).
//!
//! A commit "changed" a tool when the tool's entry under `tools/` differs from its entry in
//! every parent (a merge that took one side's version unchanged did not change it), or, for a
//! root commit, when the tool exists.

mod file;
mod listing;

use super::HistoryError;
use crate::git::CommitInfo;
use crate::index::TOOLS_DIR;
use crate::toolbox::Toolbox;
use gix::ObjectId;
use gix::bstr::ByteSlice;
use listing::Listing;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::sync::{Mutex, OnceLock};

/// Delta-cache budget of one reading thread, bytes.
const PACK_CACHE: usize = 24 << 20;
/// Fewer new commits than this are read on one thread.
const PARALLEL_FROM: usize = 2_000;
/// Listings kept per thread (a merge needs its parents' trees).
const LISTINGS: usize = 4;

/// Commits with their parents and changed tools, parents stored before children. Lists are
/// flattened (`*_at[i]..*_at[i + 1]`) so 100,000 commits take a few megabytes.
#[derive(Debug, Clone)]
struct Memo {
    ids: Vec<ObjectId>,
    /// Committer time, seconds.
    times: Vec<i64>,
    parent_at: Vec<u32>,
    parents: Vec<u32>,
    touched_at: Vec<u32>,
    /// Indices into `names`.
    touched: Vec<u32>,
    by_id: HashMap<ObjectId, u32>,
    names: Vec<String>,
    name_ids: HashMap<String, u32>,
    /// Commits whose parents were missing when read (a shallow clone's boundary).
    boundary: Vec<u32>,
}

impl Default for Memo {
    fn default() -> Memo {
        Memo {
            ids: Vec::new(),
            times: Vec::new(),
            parent_at: vec![0],
            parents: Vec::new(),
            touched_at: vec![0],
            touched: Vec::new(),
            by_id: HashMap::new(),
            names: Vec::new(),
            name_ids: HashMap::new(),
            boundary: Vec::new(),
        }
    }
}

fn err(message: impl std::fmt::Display) -> HistoryError {
    HistoryError::Scan {
        message: message.to_string(),
    }
}

impl Memo {
    fn name_id(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.name_ids.get(name) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(name.to_string());
        self.name_ids.insert(name.to_string(), i);
        i
    }

    fn push(&mut self, id: ObjectId, time: i64, parents: &[u32], touched: &[u32]) -> u32 {
        let i = self.ids.len() as u32;
        self.ids.push(id);
        self.times.push(time);
        self.parents.extend_from_slice(parents);
        self.parent_at.push(self.parents.len() as u32);
        self.touched.extend_from_slice(touched);
        self.touched_at.push(self.touched.len() as u32);
        self.by_id.insert(id, i);
        i
    }

    fn parents_of(&self, i: u32) -> &[u32] {
        let i = i as usize;
        &self.parents[self.parent_at[i] as usize..self.parent_at[i + 1] as usize]
    }

    fn touched_of(&self, i: u32) -> &[u32] {
        let i = i as usize;
        &self.touched[self.touched_at[i] as usize..self.touched_at[i + 1] as usize]
    }
}

/// This process's memo of one toolbox (its `state`), loaded from disk when first locked.
#[derive(Default)]
struct Shared(OnceLock<Mutex<Memo>>);

/// A commit not yet in the memo: its parents (ids) and its `tools/` tree.
struct Fresh {
    id: ObjectId,
    time: i64,
    parents: Vec<ObjectId>,
    tools_tree: Option<ObjectId>,
}

/// The `tools/` tree of a commit's root tree.
fn tools_tree_of(
    repo: &gix::Repository,
    tree: ObjectId,
    buf: &mut Vec<u8>,
) -> Result<Option<ObjectId>, HistoryError> {
    use gix::prelude::Find;
    let data = repo
        .objects
        .try_find(&tree, buf)
        .map_err(err)?
        .ok_or_else(|| err(format!("tree {tree} is missing")))?;
    for entry in gix::objs::TreeRefIter::from_bytes(data.data, repo.object_hash()) {
        let entry = entry.map_err(|_| err(format!("tree {tree} does not decode")))?;
        if entry.filename == TOOLS_DIR.as_bytes() {
            return Ok(entry.mode.is_tree().then(|| entry.oid.to_owned()));
        }
    }
    Ok(None)
}

/// A repository handle for reading many trees: with a delta cache, so a tree stored as a
/// delta of the one read before costs one delta.
fn reader(repo: &gix::Repository) -> gix::Repository {
    let mut repo = repo.clone();
    repo.objects.set_pack_cache(|| {
        Box::new(gix::odb::pack::cache::lru::MemoryCappedHashmap::new(
            PACK_CACHE,
        ))
    });
    repo
}

/// The tools each commit of `order` changed (names, in the order of `order`), reading the
/// trees in that order with a few recent listings at hand.
fn changes(
    repo: &gix::Repository,
    fresh: &[Fresh],
    order: &[usize],
    tools_of: &HashMap<ObjectId, Option<ObjectId>>,
) -> Result<Vec<Vec<Vec<u8>>>, HistoryError> {
    use gix::prelude::Find;
    let repo = reader(repo);
    let hash_len = repo.object_hash().len_in_bytes();
    let malformed = |id: Option<ObjectId>| err(format!("tree {id:?} (tools/) does not decode"));
    let mut cache: VecDeque<Listing> = VecDeque::new();
    let mut spare: Vec<u8> = Vec::new();
    let read = |id: ObjectId, buf: &mut Vec<u8>| -> Result<(), HistoryError> {
        let kind = repo
            .objects
            .try_find(&id, buf)
            .map_err(err)?
            .ok_or_else(|| err(format!("tree {id} is missing")))?
            .kind;
        if kind != gix::object::Kind::Tree {
            return Err(err(format!("{id} is a {kind}, not a tree")));
        }
        Ok(())
    };
    let mut out = Vec::with_capacity(order.len());
    for &i in order {
        let f = &fresh[i];
        let parent_trees: Vec<Option<ObjectId>> = f
            .parents
            .iter()
            .map(|p| {
                tools_of
                    .get(p)
                    .copied()
                    .ok_or_else(|| err(format!("parent {p} of {} was not read", f.id)))
            })
            .collect::<Result<_, _>>()?;
        if parent_trees.contains(&f.tools_tree) {
            // Identical to a parent's tools/: nothing changed.
            out.push(Vec::new());
            continue;
        }
        let mut data = std::mem::take(&mut spare);
        data.clear();
        if let Some(id) = f.tools_tree {
            read(id, &mut data)?;
        }
        let mut touched: Option<Vec<Vec<u8>>> = None;
        let mut new_starts = None;
        if parent_trees.is_empty() {
            let mut all = Vec::new();
            let l = Listing::parse(f.tools_tree, data, hash_len, |n| all.push(n.to_vec()))
                .map_err(|_| malformed(f.tools_tree))?;
            data = l.data;
            new_starts = Some(l.starts);
            touched = Some(all);
        }
        for pt in &parent_trees {
            let at = match cache.iter().position(|l| l.id == *pt) {
                Some(at) => at,
                None => {
                    let mut pdata = Vec::new();
                    if let Some(id) = pt {
                        read(*id, &mut pdata)?;
                    }
                    let l =
                        Listing::parse(*pt, pdata, hash_len, |_| {}).map_err(|_| malformed(*pt))?;
                    cache.push_back(l);
                    cache.len() - 1
                }
            };
            let mut d = Vec::new();
            let starts = cache[at]
                .diff(&data, hash_len, &mut d)
                .map_err(|_| malformed(f.tools_tree))?;
            new_starts.get_or_insert(starts);
            touched = Some(match touched {
                None => d,
                Some(t) => t.into_iter().filter(|n| d.contains(n)).collect(),
            });
        }
        let mut touched = touched.unwrap_or_default();
        touched.sort();
        touched.dedup();
        out.push(touched);
        cache.push_back(Listing {
            id: f.tools_tree,
            data,
            starts: new_starts.unwrap_or_default(),
        });
        while cache.len() > LISTINGS {
            if let Some(old) = cache.pop_front() {
                spare = old.data;
            }
        }
    }
    Ok(out)
}

/// Bring `memo` up to HEAD: read the commits it lacks and what each changed. Returns HEAD's
/// index (None for an unborn branch) and whether the memo grew.
fn update(memo: &mut Memo, repo: &gix::Repository) -> Result<(Option<u32>, bool), HistoryError> {
    let head = match repo.head_id() {
        Ok(id) => id.detach(),
        Err(_) => return Ok((None, false)),
    };
    // A boundary commit whose parents arrived since was counted as a root: start over.
    let unshallowed = memo.boundary.iter().any(|&b| {
        repo.find_commit(memo.ids[b as usize])
            .map(|c| c.parent_ids().any(|p| repo.has_object(p)))
            .unwrap_or(false)
    });
    if unshallowed {
        tracing::info!("the history memo predates a deeper fetch; rebuilding it");
        *memo = Memo::default();
    }
    if let Some(&i) = memo.by_id.get(&head) {
        return Ok((Some(i), unshallowed));
    }
    let started = std::time::Instant::now();
    // The commits the memo lacks, newest first.
    let mut fresh: Vec<Fresh> = Vec::new();
    let mut queued: HashSet<ObjectId> = HashSet::new();
    let mut stack = vec![head];
    queued.insert(head);
    // Parents missing from the object database (a shallow clone's boundary) end the walk
    // there, like a root commit.
    let mut missing: HashSet<ObjectId> = HashSet::new();
    let mut buf = Vec::new();
    while let Some(id) = stack.pop() {
        let commit = match repo.find_commit(id) {
            Ok(c) => c,
            Err(_) if id != head => {
                missing.insert(id);
                continue;
            }
            Err(e) => return Err(err(e)),
        };
        let parents: Vec<ObjectId> = commit.parent_ids().map(|p| p.detach()).collect();
        let time = commit.time().map_err(err)?.seconds;
        let tree = commit.tree_id().map_err(err)?.detach();
        fresh.push(Fresh {
            id,
            time,
            parents: parents.clone(),
            tools_tree: tools_tree_of(repo, tree, &mut buf)?,
        });
        for p in parents {
            if !memo.by_id.contains_key(&p) && queued.insert(p) {
                stack.push(p);
            }
        }
    }
    let mut boundary: HashSet<ObjectId> = HashSet::new();
    for f in &mut fresh {
        let before = f.parents.len();
        f.parents.retain(|p| !missing.contains(p));
        if f.parents.len() < before {
            boundary.insert(f.id);
        }
    }
    // The tools/ tree of every commit involved: the fresh ones and their known parents.
    let mut tools_of: HashMap<ObjectId, Option<ObjectId>> =
        fresh.iter().map(|f| (f.id, f.tools_tree)).collect();
    for f in &fresh {
        for p in &f.parents {
            if !tools_of.contains_key(p) {
                let c = repo.find_commit(*p).map_err(err)?;
                let t = tools_tree_of(repo, c.tree_id().map_err(err)?.detach(), &mut buf)?;
                tools_of.insert(*p, t);
            }
        }
    }
    let order = parents_first(&fresh);
    let threads = if order.len() < PARALLEL_FROM {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
    };
    let chunk = order.len().div_ceil(threads).max(1);
    let touched: Vec<Vec<Vec<u8>>> = if threads == 1 {
        changes(repo, &fresh, &order, &tools_of)?
    } else {
        let parts = std::thread::scope(|s| {
            let handles: Vec<_> = order
                .chunks(chunk)
                .map(|part| {
                    let (fresh, tools_of) = (&fresh, &tools_of);
                    let repo = repo.clone();
                    s.spawn(move || changes(&repo, fresh, part, tools_of))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(err("a history reader panicked")))
                })
                .collect::<Vec<_>>()
        });
        let mut all = Vec::with_capacity(order.len());
        for part in parts {
            all.extend(part?);
        }
        all
    };
    let mut parents = Vec::new();
    let mut names = Vec::new();
    for (&i, changed) in order.iter().zip(touched) {
        let f = &fresh[i];
        names.clear();
        for n in changed {
            names.push(memo.name_id(&n.to_str_lossy()));
        }
        parents.clear();
        for p in &f.parents {
            let at = memo
                .by_id
                .get(p)
                .copied()
                .ok_or_else(|| err(format!("parent {p} of {} was not read", f.id)))?;
            parents.push(at);
        }
        let at = memo.push(f.id, f.time, &parents, &names);
        if boundary.contains(&f.id) {
            memo.boundary.push(at);
        }
    }
    if order.len() >= PARALLEL_FROM {
        drop((fresh, tools_of));
        crate::platform::release_free_memory();
        tracing::info!(
            commits = order.len(),
            threads,
            seconds = started.elapsed().as_secs_f64(),
            "history memo: read the commits it lacked"
        );
    }
    let head_idx = memo
        .by_id
        .get(&head)
        .copied()
        .ok_or_else(|| err("HEAD was not read"))?;
    Ok((Some(head_idx), true))
}

/// The indices of `fresh` with every commit after its parents among them.
fn parents_first(fresh: &[Fresh]) -> Vec<usize> {
    let index_of: HashMap<ObjectId, usize> =
        fresh.iter().enumerate().map(|(i, f)| (f.id, i)).collect();
    let mut done = vec![false; fresh.len()];
    let mut order: Vec<usize> = Vec::with_capacity(fresh.len());
    // Iterative post-order; `fresh` is newest first, so walking it backwards visits the
    // oldest first and keeps linear stretches in history order.
    for start in (0..fresh.len()).rev() {
        if done[start] {
            continue;
        }
        let mut stack = vec![(start, false)];
        while let Some((i, expanded)) = stack.pop() {
            if done[i] {
                continue;
            }
            if expanded {
                done[i] = true;
                order.push(i);
                continue;
            }
            stack.push((i, true));
            for p in &fresh[i].parents {
                if let Some(&pi) = index_of.get(p)
                    && !done[pi]
                {
                    stack.push((pi, false));
                }
            }
        }
    }
    order
}

/// The toolbox's memo, up to date with HEAD, locked; written to disk when it grew. Returns
/// it with HEAD's index.
fn current<'a>(
    tb: &Toolbox,
    shared: &'a Shared,
    repo: &gix::Repository,
) -> Result<(MemoGuard<'a>, Option<u32>), HistoryError> {
    let mut memo = locked(tb, shared);
    let (head, grew) = update(&mut memo, repo)?;
    if grew {
        file::save(tb.root(), tb.personal_dir(), &memo);
    }
    Ok((memo, head))
}

type MemoGuard<'a> = std::sync::MutexGuard<'a, Memo>;

/// The toolbox's memo, locked (loaded from disk the first time).
fn locked<'a>(tb: &Toolbox, shared: &'a Shared) -> MemoGuard<'a> {
    shared
        .0
        .get_or_init(|| Mutex::new(file::load(tb.root(), tb.personal_dir()).unwrap_or_default()))
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// Like `prepare`, but when no memo exists yet (a fresh clone), `build_apart` builds it first
/// (a child process writing the memo file; true when it did) while this process's memo stays
/// locked: a `tool_history` meanwhile waits for it as it would for a build here, and the
/// memory the build takes is not this process's.
pub fn prepare_apart(tb: &Toolbox, build_apart: impl FnOnce() -> bool) -> Result<(), HistoryError> {
    {
        let shared = tb.state(|_| Shared::default());
        let mut memo = locked(tb, &shared);
        if memo.ids.is_empty()
            && !file::path(tb.root()).exists()
            && build_apart()
            && let Some(built) = file::load(tb.root(), tb.personal_dir())
        {
            *memo = built;
        }
    }
    prepare(tb)
}

/// Build or catch up the memo of `root` now (a server calls it at start, in the background,
/// so the first `tool_history` finds it ready).
pub fn prepare(tb: &Toolbox) -> Result<(), HistoryError> {
    let repo = gix::open(tb.root()).map_err(err)?;
    let shared = tb.state(|_| Shared::default());
    current(tb, &shared, &repo).map(|_| ())
}

/// The commits that changed tool `name`, newest first (by commit time, as `git log`), at most
/// `limit`, as commit infos.
pub fn tool_commits(
    tb: &Toolbox,
    name: &str,
    limit: usize,
) -> Result<Vec<CommitInfo>, HistoryError> {
    let repo = gix::open(tb.root()).map_err(err)?;
    let shared = tb.state(|_| Shared::default());
    let (memo, head) = current(tb, &shared, &repo)?;
    let (Some(head), Some(&want)) = (head, memo.name_ids.get(name)) else {
        return Ok(Vec::new());
    };
    // Newest first by commit time, ties in the order reached (as a date-ordered walk).
    let mut heap: BinaryHeap<(i64, std::cmp::Reverse<u64>, u32)> = BinaryHeap::new();
    let mut seen = vec![false; memo.ids.len()];
    let mut seq = 0u64;
    heap.push((memo.times[head as usize], std::cmp::Reverse(seq), head));
    seen[head as usize] = true;
    let mut found = Vec::new();
    while let Some((_, _, i)) = heap.pop() {
        if memo.touched_of(i).contains(&want) {
            found.push(memo.ids[i as usize]);
            if found.len() >= limit {
                break;
            }
        }
        for &p in memo.parents_of(i) {
            if !seen[p as usize] {
                seen[p as usize] = true;
                seq += 1;
                heap.push((memo.times[p as usize], std::cmp::Reverse(seq), p));
            }
        }
    }
    drop(memo);
    found.into_iter().map(|id| commit_info(&repo, id)).collect()
}

fn commit_info(repo: &gix::Repository, id: ObjectId) -> Result<CommitInfo, HistoryError> {
    let commit = repo.find_commit(id).map_err(err)?;
    let workdir = repo.workdir().unwrap_or_else(|| repo.git_dir());
    Ok(crate::git::commit_info(&commit, workdir)?)
}
