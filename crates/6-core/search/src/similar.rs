//! Tools that mean the same: pairs of the toolbox's tools whose embeddings are close (the
//! health report's near-duplicates), and the tools closest to one tool (what a registration
//! answers with). Both read the vectors search keeps (`store`), after `Semantic::prepare`
//! embedded what was missing; nothing here embeds or writes.

use crate::{Engine, Semantic};
use toolsmith_index::SearchIndex;

/// Most tools compared pairwise (the comparisons grow with the square of the count: 2,000
/// tools are two million comparisons, well under a second).
pub const MAX_PAIRWISE: usize = 2000;

/// What a comparison found, and of how many tools.
#[derive(Debug, Clone, PartialEq)]
pub struct Found<T> {
    /// The findings, closest first.
    pub items: Vec<T>,
    /// How many tools had vectors to compare.
    pub compared: usize,
    /// The source of the embeddings, described.
    pub source: String,
}

impl Semantic {
    fn ready(&self) -> Option<std::sync::Arc<Engine>> {
        let slot = if self.endpoint_down() {
            &self.fallback
        } else {
            &self.primary
        };
        slot.get().and_then(|r| r.as_ref().ok()).cloned()
    }

    /// Pairs of tools of `si` (doc indices) whose cosine is at least `min`, closest first.
    /// None when no embeddings are loaded (off, or `prepare` not run); with more than
    /// `MAX_PAIRWISE` tools, the first `MAX_PAIRWISE` only.
    pub fn close_pairs(&self, si: &SearchIndex, min: f32) -> Option<Found<(u32, u32, f32)>> {
        let engine = self.ready()?;
        let store = engine.store.read().ok()?;
        let rows: Vec<(u32, u32)> = si
            .docs
            .iter()
            .enumerate()
            .filter_map(|(i, d)| store.row(&d.key).map(|r| (i as u32, r)))
            .take(MAX_PAIRWISE)
            .collect();
        let mut pairs = Vec::new();
        for (x, &(da, ra)) in rows.iter().enumerate() {
            for &(db, rb) in &rows[x + 1..] {
                let sim = store.between(ra, rb);
                if sim >= min {
                    pairs.push((da, db, sim));
                }
            }
        }
        pairs.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)).then(a.1.cmp(&b.1)));
        Some(Found {
            items: pairs,
            compared: rows.len(),
            source: engine.embedder.describe(),
        })
    }

    /// The tools of `si` closest to its tool `doc` (at least `min`, at most `limit`), closest
    /// first. None when no embeddings are loaded or `doc` has no vector yet.
    pub fn nearest(
        &self,
        si: &SearchIndex,
        doc: u32,
        min: f32,
        limit: usize,
    ) -> Option<Found<(u32, f32)>> {
        let engine = self.ready()?;
        let store = engine.store.read().ok()?;
        let own = store.row(&si.docs.get(doc as usize)?.key)?;
        let mut compared = 0;
        let mut near: Vec<(u32, f32)> = Vec::new();
        for (i, d) in si.docs.iter().enumerate() {
            let Some(r) = store.row(&d.key) else { continue };
            compared += 1;
            if i as u32 == doc {
                continue;
            }
            let sim = store.between(own, r);
            if sim >= min {
                near.push((i as u32, sim));
            }
        }
        near.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        near.truncate(limit);
        Some(Found {
            items: near,
            compared,
            source: engine.embedder.describe(),
        })
    }
}
