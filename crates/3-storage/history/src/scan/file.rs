//! The memo on disk: `.toolsmith/history-v2.bin`, authenticated with a key of this person on
//! this machine, so a memo written by anyone else (edited in the work tree, copied from another
//! machine along with the toolbox) is never read: it is rebuilt from git.
//!
//! Layout: magic, HMAC-SHA256 of the body, body (names, then per commit its id, committer
//! time, parents and changed tools as indices, then the shallow-boundary commits). A file that
//! is missing, older, damaged or not authentic reads as "no memo".

use super::Memo;
use gix::ObjectId;
use hmac::Mac;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"TSHIST2\n";
pub(super) const FILE: &str = "history-v2.bin";
/// Earlier formats, removed when the current one is written.
const OLD_FILES: &[&str] = &["history-v1.bin"];
const KEY_FILE: &str = "history-memo.key";

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

pub(super) fn path(root: &Path) -> PathBuf {
    root.join(".toolsmith").join(FILE)
}

/// This machine's memo key in the personal directory, created on first use; None when it
/// cannot be read or made (the memo then lives in memory only).
fn key(personal: &Path) -> Option<[u8; 32]> {
    let path = personal.join(KEY_FILE);
    if let Some(k) = std::fs::read(&path).ok().and_then(|b| b.try_into().ok()) {
        return Some(k);
    }
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).ok()?;
    match crate::personal::write_private(&path, &key) {
        Ok(()) => Some(key),
        Err(e) => {
            tracing::debug!(error = %e, path = %path.display(), "no history memo key; the memo stays in memory");
            None
        }
    }
}

fn mac(key: &[u8; 32], body: &[u8]) -> HmacSha256 {
    let mut mac = <HmacSha256 as Mac>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(body);
    mac
}

/// The memo of `root` on disk, when there is an authentic one (under the key in `personal`).
pub(super) fn load(root: &Path, personal: &Path) -> Option<Memo> {
    let bytes = std::fs::read(path(root)).ok()?;
    let rest = bytes.strip_prefix(MAGIC)?;
    if rest.len() < 32 {
        return None;
    }
    let (tag, body) = rest.split_at(32);
    let key = key(personal)?;
    if mac(&key, body).verify_slice(tag).is_err() {
        tracing::info!(file = %path(root).display(), "the history memo was not written here; rebuilding it");
        return None;
    }
    decode(body)
}

/// Write the memo whole and rename it into place; a failure only costs a rebuild later.
pub(super) fn save(root: &Path, personal: &Path, memo: &Memo) {
    let Some(key) = key(personal) else { return };
    let path = path(root);
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let body = encode(memo);
    let tag: [u8; 32] = mac(&key, &body).finalize().into_bytes().into();
    let mut out = Vec::with_capacity(MAGIC.len() + 32 + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&tag);
    out.extend_from_slice(&body);
    let _ = crate::platform::write_atomic(&path, &out, crate::platform::Atomic::CACHE);
    for old in OLD_FILES {
        let _ = std::fs::remove_file(dir.join(old));
    }
}

fn encode(memo: &Memo) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + memo.ids.len() * 40);
    let u32s = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
    u32s(&mut out, memo.names.len() as u32);
    for n in &memo.names {
        u32s(&mut out, n.len() as u32);
        out.extend_from_slice(n.as_bytes());
    }
    u32s(&mut out, memo.ids.len() as u32);
    for i in 0..memo.ids.len() {
        out.extend_from_slice(memo.ids[i].as_bytes());
        out.extend_from_slice(&memo.times[i].to_le_bytes());
        for list in [memo.parents_of(i as u32), memo.touched_of(i as u32)] {
            u32s(&mut out, list.len() as u32);
            for v in list {
                u32s(&mut out, *v);
            }
        }
    }
    u32s(&mut out, memo.boundary.len() as u32);
    for b in &memo.boundary {
        u32s(&mut out, *b);
    }
    out
}

/// Parse a memo body; None when it is not one: the caller rebuilds.
fn decode(bytes: &[u8]) -> Option<Memo> {
    let mut r = Reader { bytes, at: 0 };
    let mut memo = Memo::default();
    for _ in 0..r.u32()? {
        let len = r.u32()? as usize;
        let name = std::str::from_utf8(r.take(len)?).ok()?.to_string();
        memo.name_id(&name);
    }
    let count = r.u32()? as usize;
    let mut parents = Vec::new();
    let mut touched = Vec::new();
    for i in 0..count {
        let id = ObjectId::try_from(r.take(20)?).ok()?;
        let time = i64::from_le_bytes(r.take(8)?.try_into().ok()?);
        parents.clear();
        for _ in 0..r.u32()? {
            let p = r.u32()?;
            // Parents are always stored before their children.
            if p as usize >= i {
                return None;
            }
            parents.push(p);
        }
        touched.clear();
        for _ in 0..r.u32()? {
            let t = r.u32()?;
            if t as usize >= memo.names.len() {
                return None;
            }
            touched.push(t);
        }
        if memo.by_id.contains_key(&id) {
            return None;
        }
        memo.push(id, time, &parents, &touched);
    }
    for _ in 0..r.u32()? {
        let b = r.u32()?;
        if b as usize >= memo.ids.len() {
            return None;
        }
        memo.boundary.push(b);
    }
    (r.at == bytes.len()).then_some(memo)
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
