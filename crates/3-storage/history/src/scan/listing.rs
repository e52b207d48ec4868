//! A `tools/` tree as raw bytes with the offset of every entry, and the names of the entries
//! that differ between two such trees, found without parsing the parts they share.
//!
//! Consecutive commits of a long history change one or two of 10,000 entries. Comparing the
//! bytes of two trees from both ends finds the differing region at memory speed; the entry
//! offsets of the older tree (a `Listing`) say where that region's entries begin, so only
//! those are parsed, and the newer tree's offsets are the older ones with the middle replaced
//! and the rest shifted. The result is exactly an entry-by-entry comparison in git's tree order
//! (the tests compare it with `git log`).

use gix::ObjectId;
use gix::bstr::ByteSlice;
use std::cmp::Ordering;

/// The bytes of a tree that does not parse.
#[derive(Debug)]
pub(super) struct Malformed;

/// A tree's bytes and the offset of each of its entries.
#[derive(Debug, Default, Clone)]
pub(super) struct Listing {
    /// The tree's id; None for "no `tools/` tree" (an empty listing).
    pub id: Option<ObjectId>,
    pub data: Vec<u8>,
    pub starts: Vec<u32>,
}

/// One entry: `<mode> <name>\0<oid>`.
#[derive(Clone, Copy)]
struct Entry<'a> {
    mode: &'a [u8],
    name: &'a [u8],
    oid: &'a [u8],
    end: usize,
}

impl Entry<'_> {
    /// The mode as a number (`40000` and `040000` are the same mode).
    fn mode_value(&self) -> u32 {
        self.mode.iter().fold(0u32, |v, d| {
            v.wrapping_mul(8)
                .wrapping_add(u32::from(d.wrapping_sub(b'0')))
        })
    }

    fn is_tree(&self) -> bool {
        self.mode_value() & 0o170000 == 0o040000
    }
}

fn entry_at(data: &[u8], at: usize, hash_len: usize) -> Result<Entry<'_>, Malformed> {
    let rest = data.get(at..).ok_or(Malformed)?;
    let space = rest.find_byte(b' ').ok_or(Malformed)?;
    let nul = space + 1 + rest[space + 1..].find_byte(0).ok_or(Malformed)?;
    let end = at + nul + 1 + hash_len;
    if end > data.len() || space == 0 || nul == space + 1 {
        return Err(Malformed);
    }
    Ok(Entry {
        mode: &rest[..space],
        name: &rest[space + 1..nul],
        oid: &data[at + nul + 1..end],
        end,
    })
}

/// git's tree order: names compared as if a tree's name ended in `/`.
fn tree_order(a: &Entry<'_>, b: &Entry<'_>) -> Ordering {
    let n = a.name.len().min(b.name.len());
    match a.name[..n].cmp(&b.name[..n]) {
        Ordering::Equal => {}
        other => return other,
    }
    let next = |e: &Entry<'_>| match e.name.get(n) {
        Some(c) => *c,
        None if e.is_tree() => b'/',
        None => 0,
    };
    next(a).cmp(&next(b))
}

/// How many leading bytes `a` and `b` share.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    for chunk in [256usize, 8, 1] {
        while i + chunk <= n && a[i..i + chunk] == b[i..i + chunk] {
            i += chunk;
        }
    }
    i
}

/// How many trailing bytes `a` and `b` share.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (la, lb) = (a.len(), b.len());
    let mut i = 0;
    for chunk in [256usize, 8, 1] {
        while i + chunk <= n && a[la - i - chunk..la - i] == b[lb - i - chunk..lb - i] {
            i += chunk;
        }
    }
    i
}

fn offset(at: usize) -> Result<u32, Malformed> {
    u32::try_from(at).map_err(|_| Malformed)
}

impl Listing {
    /// Parse every entry of `data`; `names` receives each entry's name.
    pub fn parse(
        id: Option<ObjectId>,
        data: Vec<u8>,
        hash_len: usize,
        mut names: impl FnMut(&[u8]),
    ) -> Result<Listing, Malformed> {
        let mut starts = Vec::with_capacity(data.len() / 32);
        let mut at = 0;
        while at < data.len() {
            let e = entry_at(&data, at, hash_len)?;
            names(e.name);
            starts.push(offset(at)?);
            at = e.end;
        }
        Ok(Listing { id, data, starts })
    }

    /// The names of the entries that differ between this tree and `new` (present in one only,
    /// or with another object or mode), pushed to `out` in tree order (a name can appear
    /// twice when a file became a directory); returns the entry offsets of `new`.
    pub fn diff(
        &self,
        new: &[u8],
        hash_len: usize,
        out: &mut Vec<Vec<u8>>,
    ) -> Result<Vec<u32>, Malformed> {
        let old = &self.data[..];
        let (la, lb) = (old.len(), new.len());
        let p = common_prefix(old, new);
        if p == la && p == lb {
            return Ok(self.starts.clone());
        }
        // Bytes past the prefix that both end with (never overlapping the prefix).
        let s = common_suffix(&old[p..], &new[p..]);
        // The entry holding the first differing byte, and every entry before it, are where
        // they were: parsing is deterministic and sees the same bytes up to there.
        let mut j = self
            .starts
            .partition_point(|&at| at as usize <= p)
            .saturating_sub(1);
        let mut x = self.starts.get(j).map_or(0, |&at| at as usize);
        let mut y = x;
        let mut starts = Vec::with_capacity(self.starts.len() + 4);
        starts.extend_from_slice(&self.starts[..j]);
        loop {
            let (ra, rb) = (la - x, lb - y);
            if ra == rb && ra <= s {
                // Both at an entry boundary with identical rest: the same entries, shifted.
                let (shift_up, by) = if y >= x {
                    (true, y - x)
                } else {
                    (false, x - y)
                };
                for &at in &self.starts[j..] {
                    let at = at as usize;
                    starts.push(offset(if shift_up { at + by } else { at - by })?);
                }
                return Ok(starts);
            }
            let ea = if x < la {
                Some(entry_at(old, x, hash_len)?)
            } else {
                None
            };
            let eb = if y < lb {
                Some(entry_at(new, y, hash_len)?)
            } else {
                None
            };
            let order = match (&ea, &eb) {
                (None, None) => return Ok(starts),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (Some(a), Some(b)) => tree_order(a, b),
            };
            match (order, ea, eb) {
                (Ordering::Less, Some(a), _) => {
                    out.push(a.name.to_vec());
                    x = a.end;
                    j += 1;
                }
                (Ordering::Greater, _, Some(b)) => {
                    out.push(b.name.to_vec());
                    starts.push(offset(y)?);
                    y = b.end;
                }
                (Ordering::Equal, Some(a), Some(b)) => {
                    if a.oid != b.oid || a.mode_value() != b.mode_value() {
                        out.push(a.name.to_vec());
                    }
                    starts.push(offset(y)?);
                    x = a.end;
                    y = b.end;
                    j += 1;
                }
                _ => unreachable!("the order was computed from the entries present"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: usize = 20;

    fn tree(entries: &[(&str, &str, u8)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (mode, name, oid) in entries {
            out.extend_from_slice(mode.as_bytes());
            out.push(b' ');
            out.extend_from_slice(name.as_bytes());
            out.push(0);
            out.extend_from_slice(&[*oid; H]);
        }
        out
    }

    /// The plain entry-by-entry comparison the fast one must equal.
    fn slow(a: &[u8], b: &[u8]) -> Vec<Vec<u8>> {
        let la = Listing::parse(None, a.to_vec(), H, |_| {}).unwrap();
        let lb = Listing::parse(None, b.to_vec(), H, |_| {}).unwrap();
        let ea: Vec<Entry<'_>> = la
            .starts
            .iter()
            .map(|&s| entry_at(a, s as usize, H).unwrap())
            .collect();
        let eb: Vec<Entry<'_>> = lb
            .starts
            .iter()
            .map(|&s| entry_at(b, s as usize, H).unwrap())
            .collect();
        let (mut i, mut k, mut out) = (0, 0, Vec::new());
        while i < ea.len() || k < eb.len() {
            let o = match (ea.get(i), eb.get(k)) {
                (Some(x), Some(y)) => tree_order(x, y),
                (Some(_), None) => Ordering::Less,
                _ => Ordering::Greater,
            };
            match o {
                Ordering::Less => {
                    out.push(ea[i].name.to_vec());
                    i += 1;
                }
                Ordering::Greater => {
                    out.push(eb[k].name.to_vec());
                    k += 1;
                }
                Ordering::Equal => {
                    if ea[i].oid != eb[k].oid || ea[i].mode_value() != eb[k].mode_value() {
                        out.push(ea[i].name.to_vec());
                    }
                    i += 1;
                    k += 1;
                }
            }
        }
        out
    }

    fn check(a: &[(&str, &str, u8)], b: &[(&str, &str, u8)]) {
        let (ta, tb) = (tree(a), tree(b));
        let old = Listing::parse(None, ta.clone(), H, |_| {}).unwrap();
        let mut out = Vec::new();
        let starts = old.diff(&tb, H, &mut out).unwrap();
        assert_eq!(out, slow(&ta, &tb), "{a:?} -> {b:?}");
        let parsed = Listing::parse(None, tb, H, |_| {}).unwrap();
        assert_eq!(starts, parsed.starts, "{a:?} -> {b:?}");
    }

    #[test]
    fn equals_an_entry_by_entry_comparison() {
        let base: Vec<(&str, &str, u8)> = vec![
            ("40000", "a", 1),
            ("40000", "b", 2),
            ("40000", "c", 3),
            ("100644", "d.txt", 4),
            ("40000", "e", 5),
        ];
        let cases: Vec<Vec<(&str, &str, u8)>> = vec![
            base.clone(),
            vec![],
            vec![
                ("40000", "a", 1),
                ("40000", "b", 9),
                ("40000", "c", 3),
                ("100644", "d.txt", 4),
                ("40000", "e", 5),
            ],
            vec![
                ("40000", "a", 9),
                ("40000", "b", 2),
                ("40000", "c", 3),
                ("100644", "d.txt", 4),
                ("40000", "e", 5),
            ],
            vec![
                ("40000", "a", 1),
                ("40000", "b", 2),
                ("40000", "c", 3),
                ("100644", "d.txt", 4),
                ("40000", "e", 9),
            ],
            vec![
                ("40000", "a", 1),
                ("40000", "c", 3),
                ("100644", "d.txt", 4),
                ("40000", "e", 5),
            ],
            vec![
                ("40000", "a", 1),
                ("40000", "b", 2),
                ("40000", "bb", 7),
                ("40000", "c", 3),
                ("100644", "d.txt", 4),
                ("40000", "e", 5),
            ],
            vec![
                ("40000", "a", 1),
                ("40000", "b", 2),
                ("40000", "c", 3),
                ("100644", "d.txt", 4),
                ("40000", "e", 5),
                ("40000", "f", 5),
            ],
            vec![
                ("40000", "0", 1),
                ("40000", "a", 1),
                ("40000", "b", 2),
                ("40000", "c", 3),
                ("100644", "d.txt", 4),
                ("40000", "e", 5),
            ],
            // The same object under another mode; a file that became a directory.
            vec![
                ("40000", "a", 1),
                ("100755", "b", 2),
                ("40000", "c", 3),
                ("40000", "d.txt", 4),
                ("40000", "e", 5),
            ],
            // Two changes far apart, and equal neighbours that look alike.
            vec![
                ("40000", "a", 2),
                ("40000", "b", 2),
                ("40000", "c", 3),
                ("100644", "d.txt", 4),
                ("40000", "e", 4),
            ],
            // Same mode written with a leading zero: not a change.
            vec![
                ("040000", "a", 1),
                ("40000", "b", 2),
                ("40000", "c", 3),
                ("100644", "d.txt", 4),
                ("40000", "e", 5),
            ],
        ];
        for a in &cases {
            for b in &cases {
                check(a, b);
            }
        }
    }

    #[test]
    fn a_file_sorts_before_a_directory_of_a_longer_prefix() {
        // git order: "a.b" (file) < "a" (tree, as "a/") < "a0".
        check(
            &[("100644", "a.b", 1), ("40000", "a", 2), ("40000", "a0", 3)],
            &[("100644", "a.b", 1), ("40000", "a", 4), ("40000", "a0", 3)],
        );
        check(
            &[("100644", "a.b", 1), ("40000", "a0", 3)],
            &[("100644", "a.b", 1), ("40000", "a", 4), ("40000", "a0", 3)],
        );
    }

    #[test]
    fn a_truncated_tree_is_malformed() {
        let t = tree(&[("40000", "a", 1)]);
        assert!(Listing::parse(None, t[..t.len() - 1].to_vec(), H, |_| {}).is_err());
        assert!(Listing::parse(None, b"40000 a".to_vec(), H, |_| {}).is_err());
    }
}
