//! Which tools each commit changed, remembered per commit, so that `tool_history` on a long
//! history reads a memo instead of comparing 10,000-entry `tools/` trees on every call.
//!
//! What a commit changed never changes (it is a function of the commit and its parents), so
//! the memo is never invalid: it only lacks commits. Each call walks from HEAD to the commits
//! the memo already knows, diffs just the new ones, and answers from the memo. The memo lives
//! in this process and in `.toolsmith/history-v1.bin` (gitignored, outside git; a missing or
//! unreadable file only means "rebuild"), written whole and renamed into place.
//!
//! A commit "changed" a tool when the tool's entry under `tools/` differs from its entry in
//! every parent (a merge that took one side's version unchanged did not change it), or, for a
//! root commit, when the tool exists.

use super::HistoryError;
use crate::git::CommitInfo;
use crate::index::TOOLS_DIR;
use gix::ObjectId;
use gix::bstr::ByteSlice;
use std::collections::{BinaryHeap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

const MAGIC: &[u8; 8] = b"TSHIST1\n";
const FILE: &str = "history-v1.bin";

#[derive(Debug, Clone)]
struct Node {
    id: ObjectId,
    /// Committer time, seconds.
    time: i64,
    parents: Vec<u32>,
    /// Indices into `Memo::names`.
    touched: Vec<u32>,
}

#[derive(Debug, Default, Clone)]
struct Memo {
    nodes: Vec<Node>,
    by_id: HashMap<ObjectId, u32>,
    names: Vec<String>,
    name_ids: HashMap<String, u32>,
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

    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.nodes.len() * 48);
        out.extend_from_slice(MAGIC);
        let u32s = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
        u32s(&mut out, self.names.len() as u32);
        for n in &self.names {
            u32s(&mut out, n.len() as u32);
            out.extend_from_slice(n.as_bytes());
        }
        u32s(&mut out, self.nodes.len() as u32);
        for node in &self.nodes {
            out.extend_from_slice(node.id.as_bytes());
            out.extend_from_slice(&node.time.to_le_bytes());
            u32s(&mut out, node.parents.len() as u32);
            for p in &node.parents {
                u32s(&mut out, *p);
            }
            u32s(&mut out, node.touched.len() as u32);
            for t in &node.touched {
                u32s(&mut out, *t);
            }
        }
        out
    }

    /// Parse a memo file; None when it is not one (or is damaged): the caller rebuilds.
    fn decode(bytes: &[u8]) -> Option<Memo> {
        let mut r = Reader { bytes, at: 0 };
        if r.take(8)? != MAGIC {
            return None;
        }
        let mut memo = Memo::default();
        for _ in 0..r.u32()? {
            let len = r.u32()? as usize;
            let name = std::str::from_utf8(r.take(len)?).ok()?.to_string();
            memo.name_id(&name);
        }
        let count = r.u32()? as usize;
        memo.nodes.reserve(count.min(bytes.len() / 32));
        for i in 0..count {
            let id = ObjectId::try_from(r.take(20)?).ok()?;
            let time = i64::from_le_bytes(r.take(8)?.try_into().ok()?);
            let mut parents = Vec::new();
            for _ in 0..r.u32()? {
                let p = r.u32()?;
                // Parents are always stored before their children.
                if p as usize >= i {
                    return None;
                }
                parents.push(p);
            }
            let mut touched = Vec::new();
            for _ in 0..r.u32()? {
                let t = r.u32()?;
                if t as usize >= memo.names.len() {
                    return None;
                }
                touched.push(t);
            }
            memo.by_id.insert(id, i as u32);
            memo.nodes.push(Node {
                id,
                time,
                parents,
                touched,
            });
        }
        (r.at == bytes.len()).then_some(memo)
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
}

/// Memos of this process, per toolbox root.
fn memos() -> &'static Mutex<HashMap<PathBuf, Arc<Mutex<Memo>>>> {
    static MEMOS: OnceLock<Mutex<HashMap<PathBuf, Arc<Mutex<Memo>>>>> = OnceLock::new();
    MEMOS.get_or_init(Default::default)
}

fn memo_path(root: &Path) -> PathBuf {
    root.join(".toolsmith").join(FILE)
}

/// A commit not yet in the memo: its parents (ids) and its `tools/` tree.
struct Fresh {
    id: ObjectId,
    time: i64,
    parents: Vec<ObjectId>,
    tools_tree: Option<ObjectId>,
}

/// The `tools/` tree of a commit, read through a small cache of root trees.
fn tools_tree_of(repo: &gix::Repository, tree: ObjectId) -> Result<Option<ObjectId>, HistoryError> {
    let root = repo.find_tree(tree).map_err(err)?;
    let found = root
        .decode()
        .map_err(err)?
        .entries
        .iter()
        .find(|e| e.filename == TOOLS_DIR.as_bytes() && e.mode.is_tree())
        .map(|e| e.oid.to_owned());
    Ok(found)
}

/// The names of entries that differ between two `tools/` trees (either may be absent).
fn differing(
    repo: &gix::Repository,
    a: Option<ObjectId>,
    b: Option<ObjectId>,
    out: &mut Vec<String>,
) -> Result<(), HistoryError> {
    if a == b {
        return Ok(());
    }
    let data = |id: Option<ObjectId>| -> Result<Vec<u8>, HistoryError> {
        match id {
            Some(id) => Ok(repo.find_tree(id).map_err(err)?.detach().data),
            None => Ok(Vec::new()),
        }
    };
    let (da, db) = (data(a)?, data(b)?);
    let mut ia = gix::objs::TreeRefIter::from_bytes(&da, repo.object_hash()).peekable();
    let mut ib = gix::objs::TreeRefIter::from_bytes(&db, repo.object_hash()).peekable();
    // Both are in git's tree order; for the entries under tools/ (directories, or stray
    // files) compare by name, which is what tells one tool from another.
    loop {
        let (ea, eb) = match (ia.peek(), ib.peek()) {
            (None, None) => break,
            (Some(Err(_)), _) | (_, Some(Err(_))) => {
                return Err(err("a tools/ tree does not decode"));
            }
            (Some(Ok(x)), Some(Ok(y))) => (Some(*x), Some(*y)),
            (Some(Ok(x)), None) => (Some(*x), None),
            (None, Some(Ok(y))) => (None, Some(*y)),
        };
        let order = match (ea, eb) {
            (Some(x), Some(y)) => x.filename.cmp(y.filename),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        match order {
            std::cmp::Ordering::Equal => {
                let (x, y) = (ea.expect("peeked"), eb.expect("peeked"));
                if x.oid != y.oid || x.mode != y.mode {
                    out.push(x.filename.to_str_lossy().into_owned());
                }
                ia.next();
                ib.next();
            }
            std::cmp::Ordering::Less => {
                out.push(ea.expect("peeked").filename.to_str_lossy().into_owned());
                ia.next();
            }
            std::cmp::Ordering::Greater => {
                out.push(eb.expect("peeked").filename.to_str_lossy().into_owned());
                ib.next();
            }
        }
    }
    Ok(())
}

/// Bring `memo` up to HEAD: read the commits it lacks and what each changed. Returns HEAD's
/// index, or None for an unborn branch.
fn update(memo: &mut Memo, repo: &gix::Repository) -> Result<(Option<u32>, bool), HistoryError> {
    let head = match repo.head_id() {
        Ok(id) => id.detach(),
        Err(_) => return Ok((None, false)),
    };
    if let Some(&i) = memo.by_id.get(&head) {
        return Ok((Some(i), false));
    }
    // The commits the memo lacks, newest first.
    let mut fresh: Vec<Fresh> = Vec::new();
    let mut queued: std::collections::HashSet<ObjectId> = std::collections::HashSet::new();
    let mut stack = vec![head];
    queued.insert(head);
    // Parents missing from the object database (a shallow clone's boundary) end the walk
    // there, like a root commit.
    let mut missing: std::collections::HashSet<ObjectId> = std::collections::HashSet::new();
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
            tools_tree: tools_tree_of(repo, tree)?,
        });
        for p in parents {
            if !memo.by_id.contains_key(&p) && queued.insert(p) {
                stack.push(p);
            }
        }
    }
    for f in &mut fresh {
        f.parents.retain(|p| !missing.contains(p));
    }
    // Parents first, so every node's parents are stored before it.
    let tools_of: HashMap<ObjectId, Option<ObjectId>> =
        fresh.iter().map(|f| (f.id, f.tools_tree)).collect();
    let mut known_tools: HashMap<ObjectId, Option<ObjectId>> = HashMap::new();
    let mut done: std::collections::HashSet<ObjectId> = std::collections::HashSet::new();
    let mut order: Vec<usize> = Vec::with_capacity(fresh.len());
    let index_of: HashMap<ObjectId, usize> =
        fresh.iter().enumerate().map(|(i, f)| (f.id, i)).collect();
    // Iterative post-order over the fresh commits.
    for start in 0..fresh.len() {
        if done.contains(&fresh[start].id) {
            continue;
        }
        let mut stack = vec![(start, false)];
        while let Some((i, expanded)) = stack.pop() {
            let id = fresh[i].id;
            if done.contains(&id) {
                continue;
            }
            if expanded {
                done.insert(id);
                order.push(i);
                continue;
            }
            stack.push((i, true));
            for p in &fresh[i].parents {
                if let Some(&pi) = index_of.get(p)
                    && !done.contains(p)
                {
                    stack.push((pi, false));
                }
            }
        }
    }
    for i in order {
        let f = &fresh[i];
        let mut parent_trees = Vec::new();
        for p in &f.parents {
            let t = match tools_of.get(p) {
                Some(t) => *t,
                None => match known_tools.get(p) {
                    Some(t) => *t,
                    None => {
                        let c = repo.find_commit(*p).map_err(err)?;
                        let t = tools_tree_of(repo, c.tree_id().map_err(err)?.detach())?;
                        known_tools.insert(*p, t);
                        t
                    }
                },
            };
            parent_trees.push(t);
        }
        let touched: Vec<String> = if parent_trees.is_empty() {
            let mut all = Vec::new();
            differing(repo, f.tools_tree, None, &mut all)?;
            all
        } else {
            let mut common: Option<Vec<String>> = None;
            for pt in &parent_trees {
                let mut d = Vec::new();
                differing(repo, f.tools_tree, *pt, &mut d)?;
                common = Some(match common {
                    None => d,
                    Some(c) => c.into_iter().filter(|n| d.contains(n)).collect(),
                });
                if common.as_ref().is_some_and(Vec::is_empty) {
                    break;
                }
            }
            common.unwrap_or_default()
        };
        let touched = touched.iter().map(|n| memo.name_id(n)).collect();
        let parents = f
            .parents
            .iter()
            .map(|p| {
                memo.by_id
                    .get(p)
                    .copied()
                    .ok_or_else(|| err(format!("parent {p} of {} was not read", f.id)))
            })
            .collect::<Result<Vec<u32>, _>>()?;
        let idx = memo.nodes.len() as u32;
        memo.by_id.insert(f.id, idx);
        memo.nodes.push(Node {
            id: f.id,
            time: f.time,
            parents,
            touched,
        });
    }
    let head_idx = memo
        .by_id
        .get(&head)
        .copied()
        .ok_or_else(|| err("HEAD was not read"))?;
    Ok((Some(head_idx), true))
}

/// The commits that changed tool `name`, newest first (by commit time, as `git log`), at most
/// `limit`, as commit infos.
pub fn tool_commits(
    root: &Path,
    name: &str,
    limit: usize,
) -> Result<Vec<CommitInfo>, HistoryError> {
    let mut repo = gix::open(root).map_err(err)?;
    repo.object_cache_size_if_unset(16 * 1024 * 1024);
    let shared = {
        let mut all = memos().lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(all.entry(root.to_path_buf()).or_insert_with(|| {
            let loaded = std::fs::read(memo_path(root))
                .ok()
                .and_then(|b| Memo::decode(&b))
                .unwrap_or_default();
            Arc::new(Mutex::new(loaded))
        }))
    };
    let mut memo = shared.lock().unwrap_or_else(|p| p.into_inner());
    let (head, grew) = update(&mut memo, &repo)?;
    if grew {
        save(root, &memo);
    }
    let (Some(head), Some(&want)) = (head, memo.name_ids.get(name)) else {
        return Ok(Vec::new());
    };
    // Newest first by commit time, ties in the order reached (as a date-ordered walk).
    let mut heap: BinaryHeap<(i64, std::cmp::Reverse<u64>, u32)> = BinaryHeap::new();
    let mut seen = vec![false; memo.nodes.len()];
    let mut seq = 0u64;
    heap.push((memo.nodes[head as usize].time, std::cmp::Reverse(seq), head));
    seen[head as usize] = true;
    let mut found = Vec::new();
    while let Some((_, _, i)) = heap.pop() {
        let node = &memo.nodes[i as usize];
        if node.touched.contains(&want) {
            found.push(node.id);
            if found.len() >= limit {
                break;
            }
        }
        for &p in &node.parents {
            if !seen[p as usize] {
                seen[p as usize] = true;
                seq += 1;
                heap.push((memo.nodes[p as usize].time, std::cmp::Reverse(seq), p));
            }
        }
    }
    drop(memo);
    found.into_iter().map(|id| commit_info(&repo, id)).collect()
}

fn save(root: &Path, memo: &Memo) {
    let path = memo_path(root);
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = dir.join(format!("{FILE}.{}.tmp", std::process::id()));
    if std::fs::write(&tmp, memo.encode()).is_ok() && std::fs::rename(&tmp, &path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

fn commit_info(repo: &gix::Repository, id: ObjectId) -> Result<CommitInfo, HistoryError> {
    let commit = repo.find_commit(id).map_err(err)?;
    let workdir = repo.workdir().unwrap_or_else(|| repo.git_dir());
    Ok(crate::git::commit_info(&commit, workdir)?)
}
