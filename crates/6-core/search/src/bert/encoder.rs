//! The BERT encoder (Devlin et al. 2018; the layout of Hugging Face's `BertModel` weights),
//! forward pass only, on candle-nn's layers: what a sentence model needs to turn token ids
//! into hidden states. No pooler, no heads, no dropout (inference only).

use candle_core::{DType, Module, Result, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder, embedding, layer_norm, linear};
use serde::Deserialize;

/// The fields of a BERT `config.json` the encoder uses (others are ignored).
#[derive(Debug, Clone, Deserialize)]
pub struct Config {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    #[serde(default = "gelu")]
    pub hidden_act: Activation,
    pub max_position_embeddings: usize,
    #[serde(default = "two")]
    pub type_vocab_size: usize,
    #[serde(default = "eps")]
    pub layer_norm_eps: f64,
    #[serde(default)]
    pub model_type: Option<String>,
}

fn gelu() -> Activation {
    Activation::Gelu
}
fn two() -> usize {
    2
}
fn eps() -> f64 {
    1e-12
}

/// The feed-forward activation `config.json` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Activation {
    /// The exact GELU (with erf), as `transformers` computes "gelu".
    Gelu,
    /// The tanh approximation.
    #[serde(alias = "gelu_new", alias = "gelu_pytorch_tanh")]
    GeluApproximate,
    Relu,
}

impl Activation {
    fn apply(self, xs: &Tensor) -> Result<Tensor> {
        match self {
            Activation::Gelu => xs.gelu_erf(),
            Activation::GeluApproximate => xs.gelu(),
            Activation::Relu => xs.relu(),
        }
    }
}

struct Embeddings {
    words: Embedding,
    positions: Embedding,
    types: Embedding,
    norm: LayerNorm,
}

impl Embeddings {
    fn load(vb: VarBuilder, c: &Config) -> Result<Self> {
        Ok(Embeddings {
            words: embedding(c.vocab_size, c.hidden_size, vb.pp("word_embeddings"))?,
            positions: embedding(
                c.max_position_embeddings,
                c.hidden_size,
                vb.pp("position_embeddings"),
            )?,
            types: embedding(
                c.type_vocab_size,
                c.hidden_size,
                vb.pp("token_type_embeddings"),
            )?,
            norm: layer_norm(c.hidden_size, c.layer_norm_eps, vb.pp("LayerNorm"))?,
        })
    }

    fn forward(&self, ids: &Tensor, types: &Tensor) -> Result<Tensor> {
        let (_, len) = ids.dims2()?;
        let positions = Tensor::arange(0u32, len as u32, ids.device())?;
        let x = (self.words.forward(ids)? + self.types.forward(types)?)?
            .broadcast_add(&self.positions.forward(&positions)?)?;
        self.norm.forward(&x)
    }
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
    heads: usize,
    activation: Activation,
}

impl Layer {
    fn load(vb: VarBuilder, c: &Config) -> Result<Self> {
        let h = c.hidden_size;
        let attn = vb.pp("attention");
        let own = attn.pp("self");
        Ok(Layer {
            query: linear(h, h, own.pp("query"))?,
            key: linear(h, h, own.pp("key"))?,
            value: linear(h, h, own.pp("value"))?,
            attention_out: linear(h, h, attn.pp("output").pp("dense"))?,
            attention_norm: layer_norm(h, c.layer_norm_eps, attn.pp("output").pp("LayerNorm"))?,
            intermediate: linear(h, c.intermediate_size, vb.pp("intermediate").pp("dense"))?,
            output: linear(c.intermediate_size, h, vb.pp("output").pp("dense"))?,
            output_norm: layer_norm(h, c.layer_norm_eps, vb.pp("output").pp("LayerNorm"))?,
            heads: c.num_attention_heads,
            activation: c.hidden_act,
        })
    }

    /// (batch, len, hidden) → (batch, heads, len, head size).
    fn split_heads(&self, x: &Tensor) -> Result<Tensor> {
        let (b, len, h) = x.dims3()?;
        x.reshape((b, len, self.heads, h / self.heads))?
            .transpose(1, 2)?
            .contiguous()
    }

    fn forward(&self, x: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let (b, len, h) = x.dims3()?;
        let q = self.split_heads(&self.query.forward(x)?)?;
        let k = self.split_heads(&self.key.forward(x)?)?;
        let v = self.split_heads(&self.value.forward(x)?)?;
        let scale = ((h / self.heads) as f64).sqrt();
        let scores = (q.matmul(&k.t()?)? / scale)?.broadcast_add(mask)?;
        let probs = candle_nn::ops::softmax_last_dim(&scores)?;
        let context = probs
            .matmul(&v)?
            .transpose(1, 2)?
            .contiguous()?
            .reshape((b, len, h))?;
        let attended = self
            .attention_norm
            .forward(&(self.attention_out.forward(&context)? + x)?)?;
        let inner = self
            .activation
            .apply(&self.intermediate.forward(&attended)?)?;
        self.output_norm
            .forward(&(self.output.forward(&inner)? + attended)?)
    }
}

/// A BERT encoder with its weights.
pub struct Encoder {
    embeddings: Embeddings,
    layers: Vec<Layer>,
}

impl Encoder {
    /// Load the weights under `vb`: at its root (sentence-transformers' exports), under
    /// `bert.` (a pre-training checkpoint) or under the configuration's `model_type`.
    pub fn load(vb: VarBuilder, c: &Config) -> Result<Encoder> {
        let mut roots = vec![vb.clone(), vb.pp("bert")];
        if let Some(kind) = &c.model_type {
            roots.push(vb.pp(kind));
        }
        let root = roots
            .into_iter()
            .find(|r| r.contains_tensor("embeddings.word_embeddings.weight"))
            .unwrap_or(vb);
        let embeddings = Embeddings::load(root.pp("embeddings"), c)?;
        let layers = (0..c.num_hidden_layers)
            .map(|i| Layer::load(root.pp(format!("encoder.layer.{i}")), c))
            .collect::<Result<Vec<_>>>()?;
        Ok(Encoder { embeddings, layers })
    }

    /// The last hidden state (batch, len, hidden) of `ids` (batch, len), where `mask` is 1 for
    /// real tokens and 0 for padding.
    pub fn forward(&self, ids: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let mut x = self.embeddings.forward(ids, &ids.zeros_like()?)?;
        // 0 where attended, the lowest float where padding: (batch, 1, 1, len).
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(1)?.unsqueeze(1)?;
        let mask = ((1.0 - mask)? * f64::from(f32::MIN))?;
        for layer in &self.layers {
            x = layer.forward(&x, &mask)?;
        }
        Ok(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_bert_configuration() {
        let c: Config = serde_json::from_str(
            r#"{"vocab_size": 30522, "hidden_size": 384, "num_hidden_layers": 6,
                "num_attention_heads": 12, "intermediate_size": 1536, "hidden_act": "gelu",
                "max_position_embeddings": 512, "type_vocab_size": 2,
                "layer_norm_eps": 1e-12, "model_type": "bert", "torch_dtype": "float32"}"#,
        )
        .unwrap();
        assert_eq!(c.hidden_act, Activation::Gelu);
        assert_eq!(c.num_hidden_layers, 6);
        assert!(serde_json::from_str::<Config>(r#"{"hidden_size": 3}"#).is_err());
    }

    #[test]
    fn padding_does_not_change_the_real_tokens_states() {
        // A tiny random model: the states of a sentence alone and padded in a batch agree.
        let dev = candle_core::Device::Cpu;
        let c = Config {
            vocab_size: 20,
            hidden_size: 8,
            num_hidden_layers: 2,
            num_attention_heads: 2,
            intermediate_size: 16,
            hidden_act: Activation::Gelu,
            max_position_embeddings: 16,
            type_vocab_size: 2,
            layer_norm_eps: 1e-12,
            model_type: None,
        };
        let vm = candle_nn::VarMap::new();
        let vb = VarBuilder::from_varmap(&vm, DType::F32, &dev);
        let enc = Encoder::load(vb, &c).unwrap();
        let alone = Tensor::new(&[[3u32, 5, 7]], &dev).unwrap();
        let one = Tensor::new(&[[1u32, 1, 1]], &dev).unwrap();
        let a = enc.forward(&alone, &one).unwrap();
        let batch = Tensor::new(&[[3u32, 5, 7, 0, 0], [4, 4, 4, 4, 4]], &dev).unwrap();
        let mask = Tensor::new(&[[1u32, 1, 1, 0, 0], [1, 1, 1, 1, 1]], &dev).unwrap();
        let b = enc.forward(&batch, &mask).unwrap();
        let b = b.narrow(0, 0, 1).unwrap().narrow(1, 0, 3).unwrap();
        let diff = (a - b).unwrap().abs().unwrap().max_all().unwrap();
        assert!(diff.to_scalar::<f32>().unwrap() < 1e-5);
    }
}
