//! Ranked keyword search over names, descriptions, tags and schema field names.
//!
//! Offline and deterministic: the same index and query always give the same order (score,
//! then name). Scores weigh where a term matched: name > tag > schema field > description.
//! Tools are tokenized once per index version into an inverted index (`SearchIndex`); a query
//! then scans the vocabulary, not the tools.

use super::Index;
use serde::Serialize;

/// One search result.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SearchHit {
    pub name: String,
    pub kind: String,
    pub summary: String,
    pub score: f64,
    /// Where the terms matched, e.g. ["name", "tag"].
    pub matched: Vec<&'static str>,
}

/// Split text into lowercase alphanumeric tokens (`word_count` → `word`, `count`), with a
/// light plural folding (`words` → `word`) so queries and names meet.
pub fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(|t| stem(&t.to_lowercase()))
        .collect()
}

fn stem(t: &str) -> String {
    if t.len() > 3
        && t.ends_with('s')
        && !t.ends_with("ss")
        && !t.ends_with("us")
        && !t.ends_with("is")
    {
        t[..t.len() - 1].to_string()
    } else {
        t.to_string()
    }
}

/// Where a token occurs, with its weight: name > tag > schema field = title > description.
const FIELDS: [(&str, f64); 5] = [
    ("name", 10.0),
    ("tag", 8.0),
    ("field", 4.0),
    ("title", 4.0),
    ("description", 3.0),
];

/// One valid tool as search reports it.
#[derive(Debug)]
struct Doc {
    name: String,
    kind: String,
    summary: String,
}

/// The tokens of every valid tool, inverted (token → the tools and fields holding it), so a
/// query scans the vocabulary once instead of tokenizing every tool. Built once per version
/// of the index (`Index::search_index`).
#[derive(Debug, Default)]
pub struct SearchIndex {
    docs: Vec<Doc>,
    /// Token → (tool, field) pairs, each pair once; a vector, as queries scan it whole.
    vocab: Vec<(String, Vec<(u32, u8)>)>,
}

impl SearchIndex {
    pub(super) fn build(index: &Index) -> SearchIndex {
        let mut si = SearchIndex::default();
        let mut vocab: std::collections::HashMap<String, Vec<(u32, u8)>> =
            std::collections::HashMap::new();
        for tool in index.tools() {
            let id = si.docs.len() as u32;
            let m = &tool.manifest;
            si.docs.push(Doc {
                name: m.name.clone(),
                kind: m.kind.to_string(),
                summary: m.summary().to_string(),
            });
            let fields: [Vec<String>; 5] = [
                tokens(&m.name),
                m.tags.iter().flat_map(|t| tokens(t)).collect(),
                m.input_field_names()
                    .iter()
                    .flat_map(|f| tokens(f))
                    .collect(),
                m.annotations
                    .title
                    .as_deref()
                    .map(tokens)
                    .unwrap_or_default(),
                tokens(&m.description),
            ];
            for (f, toks) in fields.into_iter().enumerate() {
                for t in toks {
                    let postings = vocab.entry(t).or_default();
                    if postings.last() != Some(&(id, f as u8)) {
                        postings.push((id, f as u8));
                    }
                }
            }
        }
        si.vocab = vocab.into_iter().collect();
        si.vocab.sort_by(|a, b| a.0.cmp(&b.0));
        si
    }
}

/// How well `term` matches token `t`: exact 1, prefix 0.6, substring 0.3, else 0 (the
/// factor of a field's weight).
fn match_factor(term: &str, t: &str) -> f64 {
    if t == term {
        1.0
    } else if term.len() >= 3 && t.starts_with(term) {
        0.6
    } else if term.len() >= 4 && t.contains(term) {
        0.3
    } else {
        0.0
    }
}

/// Search the index. Returns at most `limit` hits with a positive score, best first.
pub fn search(index: &Index, query: &str, limit: usize) -> Vec<SearchHit> {
    let terms = tokens(query);
    if terms.is_empty() {
        return Vec::new();
    }
    let whole = terms.join(" ");
    let whole_name = query.trim().to_lowercase();
    let si = index.search_index();
    // Per tool: the best score of each term in each field, dense (tool × term × field).
    let width = terms.len() * FIELDS.len();
    let mut best = vec![0.0f64; si.docs.len() * width];
    let mut touched: Vec<u32> = Vec::new();
    let mut seen = vec![false; si.docs.len()];
    for (ti, term) in terms.iter().enumerate() {
        for (tok, postings) in &si.vocab {
            let factor = match_factor(term, tok);
            if factor == 0.0 {
                continue;
            }
            for &(id, f) in postings {
                if !seen[id as usize] {
                    seen[id as usize] = true;
                    touched.push(id);
                }
                let s = FIELDS[f as usize].1 * factor;
                let slot = &mut best[id as usize * width + ti * FIELDS.len() + f as usize];
                if s > *slot {
                    *slot = s;
                }
            }
        }
    }
    // Scores first; strings are copied only for the hits returned.
    let mut scored: Vec<(f64, u32, Vec<&'static str>)> = touched
        .into_iter()
        .filter_map(|id| {
            let doc = &si.docs[id as usize];
            let row = &best[id as usize * width..(id as usize + 1) * width];
            let mut total = 0.0;
            let mut matched_terms = 0usize;
            let mut matched = Vec::new();
            for fields in row.chunks(FIELDS.len()) {
                let term_total: f64 = fields.iter().sum();
                for (f, s) in fields.iter().enumerate() {
                    if *s > 0.0 && !matched.contains(&FIELDS[f].0) {
                        matched.push(FIELDS[f].0);
                    }
                }
                if term_total > 0.0 {
                    matched_terms += 1;
                }
                total += term_total;
            }
            let spaced = doc.name.len() == whole.len()
                && doc
                    .name
                    .bytes()
                    .map(|b| if b == b'_' || b == b'-' { b' ' } else { b })
                    .eq(whole.bytes());
            if doc.name == whole || spaced {
                total += 50.0;
            }
            // Favour tools that match every term over tools that match one term strongly.
            let coverage = matched_terms as f64 / terms.len() as f64;
            let mut score = total * coverage * coverage;
            if doc.name == whole_name {
                score += 50.0;
            }
            let score = (score * 100.0).round() / 100.0;
            (score > 0.0).then_some((score, id, matched))
        })
        .collect();
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| si.docs[a.1 as usize].name.cmp(&si.docs[b.1 as usize].name))
    });
    scored.truncate(limit);
    scored
        .into_iter()
        .map(|(score, id, matched)| {
            let doc = &si.docs[id as usize];
            SearchHit {
                name: doc.name.clone(),
                kind: doc.kind.clone(),
                summary: doc.summary.clone(),
                score,
                matched,
            }
        })
        .collect()
}
