//! Lexical ranking: BM25F over a tool's fields, built once per index version.
//!
//! Fields and their weights: the name (split into words), the title, the tags, the input
//! schema's field names, the description, the schema fields' descriptions and the examples'
//! descriptions. Words are lowercased and stemmed (Snowball English: `counting`, `counts` →
//! `count`). A query word found nowhere is tried as a prefix of indexed words (`summ` →
//! `summary`) and, in short queries, as a typo of one (one edit up to 7 letters, two past).
//! Offline and deterministic: the same index and query give the same order (score, then name).
//! The hybrid ranking (`toolsmith_search`) fuses this list with the semantic one.

use super::Index;
use rust_stemmers::{Algorithm, Stemmer};
use serde_json::Value;
use std::collections::HashMap;

/// A tool's fields, in the order of `FIELDS`.
pub const FIELD_COUNT: usize = 7;

/// Field names (as results report them) and BM25F weights.
pub const FIELDS: [(&str, f32); FIELD_COUNT] = [
    ("name", 3.0),
    ("title", 2.0),
    ("tags", 2.0),
    ("fields", 1.0),
    ("description", 1.0),
    ("field descriptions", 0.5),
    ("examples", 0.5),
];

/// BM25 saturation and per-field length normalisation.
const K1: f32 = 1.2;
const B: f32 = 0.75;

/// How much a prefix or a typo counts against an exact word.
const PREFIX_FACTOR: f32 = 0.7;
const TYPO_FACTOR: f32 = 0.5;
/// Queries of at most this many words get typo tolerance.
const TYPO_MAX_WORDS: usize = 4;
/// Words so common in English requests that they say nothing about a tool.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "could", "do", "for", "from", "give",
    "how", "i", "in", "is", "it", "me", "my", "of", "on", "or", "please", "should", "that", "the",
    "this", "to", "want", "what", "which", "with", "would", "you", "your",
];

/// One valid tool as search reports it, with the text its embedding is made of.
#[derive(Debug)]
pub struct Doc {
    /// The tool's name.
    pub name: String,
    /// Its kind (`wasm`, `script`, `pipeline`, `mcp`...).
    pub kind: String,
    /// The first line of its description.
    pub summary: String,
    /// What the semantic ranking embeds: the name's words, title, description, tags and
    /// field names (`embedding_text`).
    pub text: String,
    /// The first 16 bytes of the text's sha256: its vector's key (computed once here, not per
    /// query).
    pub key: [u8; 16],
    /// A hash of the name's words (`name_words`): a query that is the name is found without
    /// spelling every tool's name out per query.
    name_hash: u64,
}

fn hash_words(words: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    words.hash(&mut h);
    h.finish()
}

/// The BM25F index of one version of the tools.
#[derive(Debug, Default)]
pub struct SearchIndex {
    /// The valid tools, in the order hits refer to them (`LexicalHit::doc`).
    pub docs: Vec<Doc>,
    /// Stemmed word → its postings (tool, field, count).
    terms: HashMap<String, Vec<Posting>>,
    /// Every indexed word, sorted (prefix and typo look-ups).
    sorted: Vec<String>,
    /// Words of each tool per field (for length normalisation).
    lengths: Vec<[u16; FIELD_COUNT]>,
    avg_len: [f32; FIELD_COUNT],
}

#[derive(Debug, Clone, Copy)]
struct Posting {
    doc: u32,
    field: u8,
    count: u16,
}

/// One tool ranked by the lexical model.
#[derive(Debug, Clone, PartialEq)]
pub struct LexicalHit {
    /// The tool: its place in `SearchIndex::docs`.
    pub doc: u32,
    /// Its BM25F score.
    pub score: f32,
    /// Bit i set: field i of `FIELDS` matched a query word.
    pub fields: u8,
    /// The query is the tool's name (modulo case and separators): such a tool comes first.
    pub exact_name: bool,
}

fn stemmer() -> &'static Stemmer {
    static S: std::sync::OnceLock<Stemmer> = std::sync::OnceLock::new();
    S.get_or_init(|| Stemmer::create(Algorithm::English))
}

/// Split text into words: runs of letters or digits, camelCase split (`wordCount` → `word`,
/// `count`), lowercased; not stemmed.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev: Option<char> = None;
    for c in text.chars() {
        if c.is_alphanumeric() {
            let boundary = match prev {
                Some(p) => {
                    (p.is_lowercase() && c.is_uppercase())
                        || (p.is_alphabetic() != c.is_alphabetic())
                }
                None => false,
            };
            if boundary && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            cur.extend(c.to_lowercase());
            prev = Some(c);
        } else {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev = None;
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The stemmed words of `text` (what the index holds and a query is matched with).
pub fn tokens(text: &str) -> Vec<String> {
    words(text)
        .into_iter()
        .map(|w| stemmer().stem(&w).into_owned())
        .collect()
}

/// The key of a text's vector: the first 16 bytes of its sha256.
pub fn text_key(text: &str) -> [u8; 16] {
    use sha2::Digest;
    let d = sha2::Sha256::digest(text.as_bytes());
    let mut k = [0u8; 16];
    k.copy_from_slice(&d[..16]);
    k
}

/// A tool's name as words: `word_count` → "word count".
pub fn name_words(name: &str) -> String {
    words(name).join(" ")
}

/// The properties of an input schema: (name, description), in the schema's order.
fn schema_fields(schema: &serde_json::Map<String, Value>) -> Vec<(&str, &str)> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .map(|(k, v)| {
                    let d = v.get("description").and_then(Value::as_str).unwrap_or("");
                    (k.as_str(), d)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The text a tool's embedding is made of.
pub fn embedding_text(tool: &super::Tool) -> String {
    let m = &tool.manifest;
    let mut s = name_words(&m.name);
    if let Some(t) = m
        .annotations
        .title
        .as_deref()
        .filter(|t| !t.trim().is_empty())
    {
        s.push_str(" (");
        s.push_str(t.trim());
        s.push(')');
    }
    s.push_str(": ");
    s.push_str(m.description.trim());
    if !m.tags.is_empty() {
        s.push_str(" Tags: ");
        s.push_str(&m.tags.join(", "));
        s.push('.');
    }
    let fields = schema_fields(&tool.input_schema);
    if !fields.is_empty() {
        s.push_str(" Arguments: ");
        let names: Vec<String> = fields.iter().map(|(n, _)| name_words(n)).collect();
        s.push_str(&names.join(", "));
        s.push('.');
    }
    s
}

impl SearchIndex {
    pub(super) fn build(index: &Index) -> SearchIndex {
        SearchIndex::from_tools(index.tools())
    }

    /// The index of these tools (in this order).
    pub fn from_tools<'a>(tools: impl Iterator<Item = &'a super::Tool>) -> SearchIndex {
        let mut si = SearchIndex::default();
        let mut totals = [0u64; FIELD_COUNT];
        for tool in tools {
            let id = si.docs.len() as u32;
            let m = &tool.manifest;
            let text = embedding_text(tool);
            si.docs.push(Doc {
                name: m.name.clone(),
                kind: m.kind.to_string(),
                summary: m.summary().to_string(),
                key: text_key(&text),
                text,
                name_hash: hash_words(&name_words(&m.name)),
            });
            let fields = schema_fields(&tool.input_schema);
            let join = |it: &mut dyn Iterator<Item = &str>| it.collect::<Vec<_>>().join(" ");
            let texts: [String; FIELD_COUNT] = [
                m.name.clone(),
                m.annotations.title.clone().unwrap_or_default(),
                join(&mut m.tags.iter().map(String::as_str)),
                join(&mut fields.iter().map(|f| f.0)),
                m.description.clone(),
                join(&mut fields.iter().map(|f| f.1)),
                join(&mut m.examples.iter().filter_map(|e| e.description.as_deref())),
            ];
            let mut lens = [0u16; FIELD_COUNT];
            for (f, text) in texts.iter().enumerate() {
                let toks = tokens(text);
                lens[f] = toks.len().min(u16::MAX as usize) as u16;
                totals[f] += u64::from(lens[f]);
                let mut counts: HashMap<String, u16> = HashMap::new();
                for t in toks {
                    let c = counts.entry(t).or_default();
                    *c = c.saturating_add(1);
                }
                for (t, count) in counts {
                    si.terms.entry(t).or_default().push(Posting {
                        doc: id,
                        field: f as u8,
                        count,
                    });
                }
            }
            si.lengths.push(lens);
        }
        let n = si.docs.len().max(1) as f32;
        for (avg, total) in si.avg_len.iter_mut().zip(totals) {
            *avg = (total as f32 / n).max(1.0);
        }
        si.sorted = si.terms.keys().cloned().collect();
        si.sorted.sort();
        si
    }

    /// Number of tools indexed.
    /// How many tools are indexed.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether no tool is indexed.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Indexed words a query word stands for, with how much each counts: the word itself;
    /// else the words it begins (3 letters or more); else, when `typos`, the words one or two
    /// edits away.
    fn expand<'a>(&'a self, term: &str, typos: bool) -> Vec<(&'a str, f32)> {
        if let Some((k, _)) = self.terms.get_key_value(term) {
            return vec![(k.as_str(), 1.0)];
        }
        let mut out = Vec::new();
        if term.chars().count() >= 3 {
            let start = self.sorted.partition_point(|w| w.as_str() < term);
            for w in self.sorted[start..]
                .iter()
                .take_while(|w| w.starts_with(term))
            {
                out.push((w.as_str(), PREFIX_FACTOR));
                if out.len() >= 32 {
                    break;
                }
            }
        }
        let len = term.chars().count();
        if out.is_empty() && typos && len >= 4 {
            let max = if len >= 8 { 2 } else { 1 };
            for w in &self.sorted {
                let wl = w.chars().count();
                if wl.abs_diff(len) > max || w.chars().next() != term.chars().next() && max == 1 {
                    continue;
                }
                let d = strsim::damerau_levenshtein(term, w);
                if d <= max {
                    out.push((w.as_str(), TYPO_FACTOR / d as f32));
                }
            }
        }
        out
    }

    /// Rank the tools for `query`: at most `limit` with a positive score, best first.
    pub fn rank(&self, query: &str, limit: usize) -> Vec<LexicalHit> {
        let raw = words(query);
        let mut terms: Vec<String> = raw
            .iter()
            .filter(|w| !STOPWORDS.contains(&w.as_str()))
            .map(|w| stemmer().stem(w).into_owned())
            .collect();
        if terms.is_empty() {
            // A query of only common words still means something ("to do").
            terms = raw.iter().map(|w| stemmer().stem(w).into_owned()).collect();
        }
        terms.sort();
        terms.dedup();
        if terms.is_empty() || self.docs.is_empty() {
            return Vec::new();
        }
        let typos = raw.len() <= TYPO_MAX_WORDS;
        let n = self.docs.len() as f32;
        let mut score = vec![0f32; self.docs.len()];
        let mut fields = vec![0u8; self.docs.len()];
        let mut touched: Vec<u32> = Vec::new();
        // Per query word: its weighted term frequency in each tool (BM25F: the fields'
        // counts, weighted and length-normalised, summed, then saturated once), for each
        // indexed word it stands for; the best of those counts.
        let mut tf = vec![0f32; self.docs.len()];
        let mut best = vec![0f32; self.docs.len()];
        let mut here: Vec<u32> = Vec::new();
        let mut term_docs: Vec<u32> = Vec::new();
        for term in &terms {
            for (word, factor) in self.expand(term, typos) {
                let postings = &self.terms[word];
                let mut df = 0usize;
                for p in postings {
                    let f = p.field as usize;
                    let len = f32::from(self.lengths[p.doc as usize][f]);
                    let norm = 1.0 - B + B * len / self.avg_len[f];
                    let d = p.doc as usize;
                    if tf[d] == 0.0 {
                        here.push(p.doc);
                        df += 1;
                    }
                    tf[d] += FIELDS[f].1 * f32::from(p.count) / norm;
                    fields[d] |= 1 << f;
                }
                let df = df as f32;
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                for &d in &here {
                    let d = d as usize;
                    let t = tf[d];
                    let c = factor * idf * t * (K1 + 1.0) / (t + K1);
                    if best[d] == 0.0 {
                        term_docs.push(d as u32);
                    }
                    best[d] = best[d].max(c);
                    tf[d] = 0.0;
                }
                here.clear();
            }
            for &d in &term_docs {
                let d = d as usize;
                if score[d] == 0.0 {
                    touched.push(d as u32);
                }
                score[d] += best[d];
                best[d] = 0.0;
            }
            term_docs.clear();
        }
        let whole = raw.join(" ");
        let whole_hash = hash_words(&whole);
        let mut hits: Vec<LexicalHit> = touched
            .into_iter()
            .map(|d| {
                let doc = &self.docs[d as usize];
                let exact_name = doc.name_hash == whole_hash && name_words(&doc.name) == whole;
                LexicalHit {
                    doc: d,
                    score: score[d as usize],
                    fields: fields[d as usize],
                    exact_name,
                }
            })
            .filter(|h| h.score > 0.0)
            .collect();
        let order = |a: &LexicalHit, b: &LexicalHit| {
            b.exact_name
                .cmp(&a.exact_name)
                .then(b.score.total_cmp(&a.score))
                .then_with(|| {
                    self.docs[a.doc as usize]
                        .name
                        .cmp(&self.docs[b.doc as usize].name)
                })
        };
        // Only the best `limit` are sorted (a query word in every tool touches them all).
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit, order);
        }
        hits.truncate(limit);
        hits.sort_by(order);
        hits
    }
}

/// The names of the fields set in a `LexicalHit::fields` mask.
pub fn field_names(mask: u8) -> Vec<&'static str> {
    (0..FIELD_COUNT)
        .filter(|f| mask & (1 << f) != 0)
        .map(|f| FIELDS[f].0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_names_and_camel_case() {
        assert_eq!(words("word_count"), ["word", "count"]);
        assert_eq!(words("getHTTPStatus v2"), ["get", "httpstatus", "v", "2"]);
        assert_eq!(tokens("Counting words"), ["count", "word"]);
    }
}
