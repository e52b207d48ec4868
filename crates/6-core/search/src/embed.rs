//! Where embeddings come from, one of three sources the configuration chooses
//! (`config::Embeddings`): the built-in static table, a local model directory run in-process
//! (`bert`), or an OpenAI-compatible `/v1/embeddings` endpoint (`endpoint`).

use super::EmbedError;
use super::bert::LocalModel;
use super::endpoint::Endpoint;
use super::static_table::StaticTable;

/// A loaded source of embeddings.
#[derive(Debug)]
pub enum Embedder {
    /// The static table compiled in.
    Builtin(Box<StaticTable>),
    /// A local BERT model directory.
    Local(Box<LocalModel>),
    /// An OpenAI-compatible endpoint.
    Endpoint(Endpoint),
}

impl Embedder {
    /// Names the model in cache keys: vectors of different models never mix.
    pub fn id(&self) -> String {
        match self {
            Embedder::Builtin(t) => t.id().to_string(),
            Embedder::Local(m) => m.id().to_string(),
            Embedder::Endpoint(e) => e.id(),
        }
    }

    /// What `toolsmith doctor` and search results call it.
    pub fn describe(&self) -> String {
        match self {
            Embedder::Builtin(t) => format!(
                "built-in static embeddings (distilled from all-MiniLM-L6-v2, {} dimensions)",
                t.dims()
            ),
            Embedder::Local(m) => m.describe(),
            Embedder::Endpoint(e) => e.describe(),
        }
    }

    /// Short name of the kind of source.
    pub fn kind(&self) -> &'static str {
        match self {
            Embedder::Builtin(_) => "builtin",
            Embedder::Local(_) => "local",
            Embedder::Endpoint(_) => "endpoint",
        }
    }

    /// Normalised vectors of `texts`, in order.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        match self {
            Embedder::Builtin(t) => Ok(texts.iter().map(|s| t.embed(s)).collect()),
            Embedder::Local(m) => m.embed(texts),
            Embedder::Endpoint(e) => e.embed(texts),
        }
    }

    /// How many texts one `embed` call should carry.
    pub fn batch(&self) -> usize {
        match self {
            Embedder::Builtin(_) => 256,
            Embedder::Local(_) => 16,
            Embedder::Endpoint(_) => 64,
        }
    }
}
