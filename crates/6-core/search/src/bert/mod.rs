//! A local sentence model: a directory with `config.json` (a BERT model: all-MiniLM-L6-v2,
//! bge-small, e5-small...), `model.safetensors` and `tokenizer.json`, run in-process on the CPU
//! with candle (pure Rust; the encoder in `encoder` on candle-nn's layers). Sentence vectors are the sentence-transformers recipe: the last
//! hidden state mean-pooled over the real tokens, L2-normalised (CLS pooling when the directory's
//! `1_Pooling/config.json` asks for it, as bge's does).

mod encoder;

use super::EmbedError;
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use encoder::{Config, Encoder};
use std::path::{Path, PathBuf};
use tokenizers::{Tokenizer, TruncationParams};

/// Longest input in tokens (longer texts are cut).
const MAX_TOKENS: usize = 256;

/// A loaded local model.
pub struct LocalModel {
    dir: PathBuf,
    model: Encoder,
    tokenizer: Tokenizer,
    cls_pooling: bool,
    dims: usize,
    id: String,
}

impl std::fmt::Debug for LocalModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalModel")
            .field("dir", &self.dir)
            .field("id", &self.id)
            .finish()
    }
}

impl LocalModel {
    /// Load the model in `dir`.
    pub fn load(dir: &Path) -> Result<LocalModel, EmbedError> {
        let fail = |message: String| EmbedError::Model {
            model: dir.display().to_string(),
            message,
        };
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| fail(format!("cannot read {name}: {e}")))
        };
        let config_text = read("config.json")?;
        let config: Config = serde_json::from_slice(&config_text)
            .map_err(|e| fail(format!("config.json is not a BERT configuration: {e}")))?;
        let dims = config.hidden_size;
        let weights = read("model.safetensors")?;
        let meta = std::fs::metadata(dir.join("model.safetensors"))
            .map_err(|e| fail(format!("cannot read model.safetensors: {e}")))?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(|e| fail(format!("model.safetensors does not load: {e}")))?;
        let model = Encoder::load(vb, &config)
            .map_err(|e| fail(format!("the weights do not fit config.json: {e}")))?;
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| fail(format!("tokenizer.json does not load: {e}")))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..Default::default()
            }))
            .map_err(|e| fail(format!("tokenizer.json: {e}")))?;
        let cls_pooling = std::fs::read(dir.join("1_Pooling/config.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|v| v.get("pooling_mode_cls_token").and_then(|b| b.as_bool()))
            .unwrap_or(false);
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs());
        let digest = {
            use sha2::Digest;
            let mut h = sha2::Sha256::new();
            h.update(&config_text);
            h.update(meta.len().to_le_bytes());
            h.update(mtime.to_le_bytes());
            h.update(dir.to_string_lossy().as_bytes());
            hex::encode(&h.finalize()[..6])
        };
        Ok(LocalModel {
            dir: dir.to_path_buf(),
            model,
            tokenizer,
            cls_pooling,
            dims,
            id: format!("local-{digest}"),
        })
    }

    /// Names the model in cache keys (from a digest of its files).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// What `toolsmith doctor` and results say it is.
    pub fn describe(&self) -> String {
        format!(
            "local model {} ({} dimensions, {} pooling)",
            self.dir.display(),
            self.dims,
            if self.cls_pooling { "CLS" } else { "mean" }
        )
    }

    /// Normalised sentence vectors of `texts`.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let fail = |message: String| EmbedError::Model {
            model: self.dir.display().to_string(),
            message,
        };
        let encs = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| fail(format!("tokenizing: {e}")))?;
        let len = encs
            .iter()
            .map(|e| e.get_ids().len())
            .max()
            .unwrap_or(1)
            .max(1);
        let mut ids = vec![0u32; texts.len() * len];
        let mut mask = vec![0u32; texts.len() * len];
        for (r, e) in encs.iter().enumerate() {
            for (c, &id) in e.get_ids().iter().enumerate() {
                ids[r * len + c] = id;
                mask[r * len + c] = 1;
            }
        }
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let dev = Device::Cpu;
            let ids = Tensor::from_vec(ids, (texts.len(), len), &dev)?;
            let mask = Tensor::from_vec(mask, (texts.len(), len), &dev)?;
            let hidden = self.model.forward(&ids, &mask)?;
            let pooled = if self.cls_pooling {
                hidden.narrow(1, 0, 1)?.squeeze(1)?
            } else {
                let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
                let sum = hidden.broadcast_mul(&m)?.sum(1)?;
                let count = m.sum(1)?.clamp(1e-9f32, f32::MAX)?;
                sum.broadcast_div(&count)?
            };
            pooled.to_vec2::<f32>()
        };
        let mut out = run().map_err(|e| fail(format!("running the model: {e}")))?;
        for v in &mut out {
            super::normalize(v);
        }
        Ok(out)
    }
}
