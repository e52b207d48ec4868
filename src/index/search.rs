//! Ranked keyword search over names, descriptions, tags and schema field names.
//!
//! Offline and deterministic: the same index and query always give the same order (score,
//! then name). Scores weigh where a term matched: name > tag > schema field > description.

use super::{Index, Tool};
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

/// Score of one term against a token list: exact token, prefix, or substring.
fn term_score(term: &str, toks: &[String], exact: f64) -> f64 {
    let mut best: f64 = 0.0;
    for t in toks {
        let s = if t == term {
            exact
        } else if term.len() >= 3 && t.starts_with(term) {
            exact * 0.6
        } else if term.len() >= 4 && t.contains(term) {
            exact * 0.3
        } else {
            0.0
        };
        best = best.max(s);
    }
    best
}

fn score_tool(tool: &Tool, terms: &[String], whole: &str) -> (f64, Vec<&'static str>) {
    let m = &tool.manifest;
    let name_toks = tokens(&m.name);
    let tag_toks: Vec<String> = m.tags.iter().flat_map(|t| tokens(t)).collect();
    let field_toks: Vec<String> = m
        .input_field_names()
        .iter()
        .flat_map(|f| tokens(f))
        .collect();
    let desc_toks = tokens(&m.description);
    let title_toks = m
        .annotations
        .title
        .as_deref()
        .map(tokens)
        .unwrap_or_default();

    let mut total = 0.0;
    let mut matched_terms = 0usize;
    let mut matched = Vec::new();
    for term in terms {
        let parts = [
            ("name", term_score(term, &name_toks, 10.0)),
            ("tag", term_score(term, &tag_toks, 8.0)),
            ("field", term_score(term, &field_toks, 4.0)),
            ("title", term_score(term, &title_toks, 4.0)),
            ("description", term_score(term, &desc_toks, 3.0)),
        ];
        let mut term_total = 0.0;
        for (place, s) in parts {
            if s > 0.0 {
                term_total += s;
                if !matched.contains(&place) {
                    matched.push(place);
                }
            }
        }
        if term_total > 0.0 {
            matched_terms += 1;
        }
        total += term_total;
    }
    if m.name == whole || m.name.replace(['_', '-'], " ") == whole {
        total += 50.0;
    }
    // Favour tools that match every term over tools that match one term strongly.
    let coverage = matched_terms as f64 / terms.len().max(1) as f64;
    (total * coverage * coverage, matched)
}

/// Search the index. Returns at most `limit` hits with a positive score, best first.
pub fn search(index: &Index, query: &str, limit: usize) -> Vec<SearchHit> {
    let terms = tokens(query);
    if terms.is_empty() {
        return Vec::new();
    }
    let whole = terms.join(" ");
    let whole_name = query.trim().to_lowercase();
    let mut hits: Vec<SearchHit> = index
        .tools()
        .filter_map(|tool| {
            let (mut score, matched) = score_tool(tool, &terms, &whole);
            if tool.manifest.name == whole_name {
                score += 50.0;
            }
            (score > 0.0).then(|| SearchHit {
                name: tool.manifest.name.clone(),
                kind: tool.manifest.kind.to_string(),
                summary: tool.manifest.summary().to_string(),
                score: (score * 100.0).round() / 100.0,
                matched,
            })
        })
        .collect();
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.name.cmp(&b.name))
    });
    hits.truncate(limit);
    hits
}
