//! The built-in embeddings: a static table of token vectors distilled from all-MiniLM-L6-v2
//! (`scripts/distill/distill.py`), compiled into the binary. A text's vector is the sum of
//! its WordPiece tokens' rows (each already weighted by how rare the token is), normalised:
//! microseconds per text, nothing to download or install.
//!
//! Table format (little-endian): `TSST`, u32 version (1), u32 vocabulary size, u32 rows, u32
//! dimensions; a u32 row per vocabulary id (`u32::MAX`: no row); rows × dimensions i8; a f32
//! scale per row.

use super::EmbedError;
use sha2::Digest;
use tokenizers::Tokenizer;

/// The table and the tokenizer it was distilled with (all-MiniLM-L6-v2's, uncased WordPiece).
static TABLE: &[u8] = include_bytes!("../assets/static.bin");
static TOKENIZER: &[u8] = include_bytes!("../assets/tokenizer.json");

/// The loaded built-in table.
pub struct StaticTable {
    tokenizer: Tokenizer,
    rows: Vec<u32>,
    dims: usize,
    values: &'static [i8],
    scales: Vec<f32>,
    id: String,
}

impl std::fmt::Debug for StaticTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticTable")
            .field("dims", &self.dims)
            .field("id", &self.id)
            .finish()
    }
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

impl StaticTable {
    /// The table compiled into this binary.
    pub fn builtin() -> Result<StaticTable, EmbedError> {
        StaticTable::parse(TABLE, TOKENIZER)
    }

    fn parse(table: &'static [u8], tokenizer: &[u8]) -> Result<StaticTable, EmbedError> {
        let bad = |why: &str| EmbedError::Model {
            model: "built-in".into(),
            message: format!("the built-in embedding table is damaged: {why}"),
        };
        if table.get(..4) != Some(b"TSST") || u32_at(table, 4) != Some(1) {
            return Err(bad("not a version 1 table"));
        }
        let (vocab, rows, dims) = match (u32_at(table, 8), u32_at(table, 12), u32_at(table, 16)) {
            (Some(v), Some(r), Some(d)) => (v as usize, r as usize, d as usize),
            _ => return Err(bad("short header")),
        };
        let ids_at = 20;
        let values_at = ids_at + 4 * vocab;
        let scales_at = values_at + rows * dims;
        if table.len() != scales_at + 4 * rows || dims == 0 {
            return Err(bad("sizes do not add up"));
        }
        let row_of: Vec<u32> = (0..vocab)
            .map(|i| u32_at(table, ids_at + 4 * i).unwrap_or(u32::MAX))
            .collect();
        if row_of.iter().any(|&r| r != u32::MAX && r as usize >= rows) {
            return Err(bad("a row index out of range"));
        }
        let scales = (0..rows)
            .map(|i| f32::from_bits(u32_at(table, scales_at + 4 * i).unwrap_or(0)))
            .collect();
        // SAFETY: i8 and u8 have the same size and alignment; every bit pattern is valid.
        let values: &'static [i8] = unsafe {
            std::slice::from_raw_parts(table[values_at..].as_ptr().cast::<i8>(), rows * dims)
        };
        let mut tok = Tokenizer::from_bytes(tokenizer).map_err(|e| EmbedError::Model {
            model: "built-in".into(),
            message: format!("the built-in tokenizer does not load: {e}"),
        })?;
        tok.with_padding(None);
        tok.with_truncation(None).map_err(|e| bad(&e.to_string()))?;
        let digest = sha2::Sha256::digest(table);
        Ok(StaticTable {
            tokenizer: tok,
            rows: row_of,
            dims,
            values,
            scales,
            id: format!("builtin-{}", hex::encode(&digest[..6])),
        })
    }

    /// Dimensions of a vector.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Names this table in cache keys (changes with its contents).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The normalised vector of `text` (all zeros when no token of it has a row).
    pub fn embed(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0f32; self.dims];
        let Ok(enc) = self.tokenizer.encode(text, false) else {
            return v;
        };
        for &id in enc.get_ids() {
            let Some(&row) = self.rows.get(id as usize) else {
                continue;
            };
            if row == u32::MAX {
                continue;
            }
            let row = row as usize;
            let s = self.scales[row];
            let vals = &self.values[row * self.dims..(row + 1) * self.dims];
            for (o, &q) in v.iter_mut().zip(vals) {
                *o += s * f32::from(q);
            }
        }
        super::normalize(&mut v);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_table_loads_and_relates_words_by_meaning() {
        let t = StaticTable::builtin().unwrap();
        let chart = t.embed("draw a bar chart of sales figures");
        let plot = t.embed("plot data as a histogram graph");
        let temp = t.embed("convert a temperature from celsius to fahrenheit");
        let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        assert!(dot(&chart, &plot) > dot(&chart, &temp), "chart~plot");
        assert!((dot(&chart, &chart) - 1.0).abs() < 1e-4);
        assert!(t.embed("").iter().all(|&x| x == 0.0));
    }
}
