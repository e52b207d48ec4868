//! The hybrid ranking: the index's lexical ranking and the semantic one, each scaled to
//! [0, 1] and averaged; every result says why it ranks where it does.

use crate::{CANDIDATES, Semantic, SemanticRanking};
use serde::Serialize;
use toolsmith_config::Embeddings;
use toolsmith_index::{FIELDS, Index, SearchIndex, field_names};

/// The lexical ranking's share of the fused score (the semantic one has the rest).
const LEXICAL_WEIGHT: f32 = 0.5;

/// One search result, with why it ranks where it does.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SearchHit {
    /// The tool's name.
    pub name: String,
    /// Its kind (`wasm`, `script`, `pipeline`, `mcp`...).
    pub kind: String,
    /// The first line of the description.
    pub summary: String,
    /// The fused score, 0 to 1: the average of the lexical score (scaled by the best one) and
    /// the semantic one (scaled between the weakest and the closest neighbour).
    pub score: f64,
    /// Where the query matched: the fields holding its words (`name`, `title`, `tags`,
    /// `fields`, `description`, `field descriptions`, `examples`), and `meaning` when the
    /// semantic ranking put the tool among its best.
    pub matched: Vec<&'static str>,
    /// Cosine similarity of the query and the tool (when embeddings took part).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f64>,
}

/// A search's results and how they were ranked.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Results {
    /// The tools found, best first.
    pub results: Vec<SearchHit>,
    /// "hybrid: lexical BM25F + <source>", or "lexical" and why.
    pub ranking: String,
    /// Said once: the endpoint is unreachable and search fell back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// Search the tools of `index` for `query`: at most `limit` results, best first.
pub fn search(index: &Index, semantic: &Semantic, query: &str, limit: usize) -> Results {
    let si = index.search_index();
    let lexical = si.rank(query, CANDIDATES);
    let ranked = if query.trim().is_empty() {
        None
    } else {
        semantic.rank(si, query)
    };
    let notice = semantic.take_notice();
    let Some(SemanticRanking {
        hits: sem,
        source,
        covered,
    }) = ranked
    else {
        let why = match (semantic.choice(), semantic.unavailable()) {
            (Embeddings::None, _) => "lexical BM25F (semantic search off)".to_string(),
            (_, Some(e)) => format!("lexical BM25F (semantic search unavailable: {e})"),
            _ => "lexical BM25F (embeddings still loading)".to_string(),
        };
        let results = lexical
            .iter()
            .take(limit)
            .map(|h| {
                hit(
                    si,
                    h.doc,
                    lexical_score(h.score),
                    field_names(h.fields),
                    None,
                )
            })
            .collect();
        return Results {
            results,
            ranking: why,
            notice,
        };
    };
    // Each ranking's scores scaled to [0, 1] (lexical by its best, semantic between the
    // worst and best candidate), then averaged: a tool strong in both leads.
    let mut fused: std::collections::HashMap<u32, (f32, u8, Option<f32>, bool)> =
        std::collections::HashMap::new();
    let lex_best = lexical.iter().map(|h| h.score).fold(0f32, f32::max);
    for h in &lexical {
        let e = fused.entry(h.doc).or_insert((0.0, 0, None, false));
        e.0 += LEXICAL_WEIGHT * h.score / lex_best.max(f32::MIN_POSITIVE);
        e.1 = h.fields;
        e.3 = h.exact_name;
    }
    // A semantic neighbour counts only when it is close enough to mean something: above a
    // floor and within reach of the best one (a query of nonsense has no near neighbours).
    let top = sem.first().map_or(0.0, |s| s.1);
    let close = |sim: f32| sim >= MIN_SIMILARITY && sim >= top * 0.5;
    let low = sem
        .iter()
        .map(|s| s.1)
        .filter(|&s| close(s))
        .fold(top, f32::min);
    for &(doc, sim) in &sem {
        let e = fused.entry(doc).or_insert((0.0, 0, None, false));
        e.2 = Some(sim);
        if close(sim) {
            let norm = if top > low {
                (sim - low) / (top - low)
            } else {
                1.0
            };
            // The worst close neighbour still counts a little.
            e.0 += (1.0 - LEXICAL_WEIGHT) * (0.05 + 0.95 * norm);
        }
    }
    let mut all: Vec<(u32, f32, u8, Option<f32>, bool)> = fused
        .into_iter()
        .filter(|(_, v)| v.0 > 0.0)
        .map(|(d, v)| (d, v.0, v.1, v.2, v.3))
        .collect();
    all.sort_by(|a, b| {
        b.4.cmp(&a.4)
            .then(b.1.total_cmp(&a.1))
            .then_with(|| si.docs[a.0 as usize].name.cmp(&si.docs[b.0 as usize].name))
    });
    let results = all
        .into_iter()
        .take(limit)
        .map(|(doc, s, fields, sim, _)| {
            let mut matched = field_names(fields);
            let sem_rank = sem.iter().position(|x| x.0 == doc);
            if sem_rank.is_some_and(|r| r < 10) && sim.is_some_and(close) {
                matched.push("meaning");
            }
            hit(si, doc, f64::from(s), matched, sim)
        })
        .collect();
    let ranking = if covered < si.docs.len() {
        format!(
            "hybrid: lexical BM25F + {source} ({covered} of {} tools embedded so far)",
            si.docs.len()
        )
    } else {
        format!("hybrid: lexical BM25F + {source}")
    };
    Results {
        results,
        ranking,
        notice,
    }
}

/// Below this cosine a tool is no semantic match at all (unrelated texts score about 0 to
/// 0.15 with the built-in table and MiniLM, related ones 0.4 and more).
const MIN_SIMILARITY: f32 = 0.25;

fn lexical_score(s: f32) -> f64 {
    f64::from(s)
}

fn hit(
    si: &SearchIndex,
    doc: u32,
    score: f64,
    matched: Vec<&'static str>,
    sim: Option<f32>,
) -> SearchHit {
    let d = &si.docs[doc as usize];
    SearchHit {
        name: d.name.clone(),
        kind: d.kind.clone(),
        summary: d.summary.clone(),
        score: (score * 1000.0).round() / 1000.0,
        matched,
        similarity: sim.map(|s| (f64::from(s) * 1000.0).round() / 1000.0),
    }
}

/// The field names results may report (for the docs and the output schema).
pub fn matched_names() -> Vec<&'static str> {
    FIELDS.iter().map(|f| f.0).chain(["meaning"]).collect()
}
