//! Hybrid tool search: the lexical ranking of the index (BM25F, `index::SearchIndex`) fused
//! with a semantic one (cosine between the query's embedding and each tool's): each scaled to
//! [0, 1] and averaged (on the sets of `benches/retrieval` this beat reciprocal-rank fusion).
//!
//! Embeddings come from the source the configuration chooses (`config::Embeddings`; `embed`):
//! the built-in static table by default (nothing to install or download), a local model
//! directory, or an OpenAI-compatible endpoint, which falls back to the built-in table, saying
//! so once, while it is unreachable. Tool vectors are derived data (`store`): computed for new
//! or changed tools only, by a background worker in a server, cached outside git by text and
//! model. A query never waits for them: until they are there, the lexical ranking answers
//! alone, and results say which ranking they come from.

#![deny(missing_docs)]

pub mod bert;
pub mod embed;
pub mod endpoint;
mod rank;
pub mod similar;
pub mod static_table;
pub mod store;

pub use rank::{Results, SearchHit, matched_names, search};

use embed::Embedder;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};
use store::Store;
use thiserror::Error;
use toolsmith_config::Embeddings;
use toolsmith_index::{Index, SearchIndex};

/// How many of each ranking take part in the fusion.
pub(crate) const CANDIDATES: usize = 100;
/// How long an unreachable endpoint is left alone before it is tried again.
const RETRY_AFTER: Duration = Duration::from_secs(60);

/// Why embeddings could not be made.
#[derive(Debug, Error)]
pub enum EmbedError {
    /// A local model directory could not be loaded or run.
    #[error("embedding model {model}: {message}")]
    Model {
        /// The model directory.
        model: String,
        /// What went wrong.
        message: String,
    },
    /// The endpoint did not answer, or not with embeddings.
    #[error("embeddings endpoint {url}: {message}")]
    Endpoint {
        /// The endpoint's API base.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// The secret named as the endpoint's key has no value.
    #[error("the secret {name:?} (the embeddings endpoint's API key) is not set")]
    NoKey {
        /// The secret's name (`TOOLSMITH_EMBEDDINGS_KEY`).
        name: String,
    },
    /// The secrets could not be read.
    #[error("cannot read the secrets: {0}")]
    Secrets(String),
}

impl toolsmith_error::Hint for EmbedError {
    fn hint(&self) -> Option<String> {
        Some(match self {
            EmbedError::Model { .. } => "TOOLSMITH_EMBEDDINGS_MODEL_DIR must hold config.json (a BERT model), model.safetensors and tokenizer.json; `toolsmith doctor` checks it".into(),
            EmbedError::Endpoint { .. } => "check that the server runs and TOOLSMITH_EMBEDDINGS_URL is its API base (e.g. http://127.0.0.1:11434/v1); meanwhile search uses the built-in embeddings".into(),
            EmbedError::NoKey { name } => format!("`toolsmith secret set {name}` stores it"),
            EmbedError::Secrets(_) => "`toolsmith doctor` checks the personal directory".into(),
        })
    }
}

/// Scale a vector to length 1 (a zero vector stays zero).
pub fn normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        for x in v {
            *x /= n;
        }
    }
}

/// A semantic ranking of the tools.
#[derive(Debug, Clone)]
pub struct SemanticRanking {
    /// (tool, cosine), best first, at most `CANDIDATES`.
    pub hits: Vec<(u32, f32)>,
    /// The source of the embeddings, described.
    pub source: String,
    /// How many tools have vectors.
    pub covered: usize,
}

/// An embedder and the tool vectors it made.
struct Engine {
    embedder: Embedder,
    store: RwLock<Store>,
}

/// The semantic side of search: the configured source, loaded on first use, and the vectors of
/// the tools. One per `App`.
pub struct Semantic {
    choice: Embeddings,
    personal: std::path::PathBuf,
    /// `<cache>/search` (None: vectors only in memory).
    cache: Option<std::path::PathBuf>,
    primary: OnceLock<Result<Arc<Engine>, String>>,
    /// The built-in table, when the primary source is an endpoint that is down.
    fallback: OnceLock<Result<Arc<Engine>, String>>,
    down_until: Mutex<Option<Instant>>,
    /// A notice not yet given to a result (given once per outage).
    notice: Mutex<Option<String>>,
    worker: Mutex<Option<std::sync::mpsc::Sender<Arc<Index>>>>,
    started: AtomicBool,
}

impl std::fmt::Debug for Semantic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Semantic")
            .field("choice", &self.choice)
            .finish()
    }
}

impl Semantic {
    /// The semantic search `choice` configures; vectors cached under `cache_dir/search`.
    pub fn new(
        choice: Embeddings,
        personal: &std::path::Path,
        cache_dir: Option<&std::path::Path>,
    ) -> Semantic {
        Semantic {
            choice,
            personal: personal.to_path_buf(),
            cache: cache_dir.map(|c| c.join("search")),
            primary: OnceLock::new(),
            fallback: OnceLock::new(),
            down_until: Mutex::new(None),
            notice: Mutex::new(None),
            worker: Mutex::new(None),
            started: AtomicBool::new(false),
        }
    }

    /// Lexical search only.
    pub fn off() -> Semantic {
        Semantic::new(Embeddings::None, std::path::Path::new(""), None)
    }

    /// The configured source.
    pub fn choice(&self) -> &Embeddings {
        &self.choice
    }

    fn load(&self, choice: &Embeddings) -> Result<Arc<Engine>, String> {
        let embedder = match choice {
            Embeddings::None => return Err("semantic search is off".into()),
            Embeddings::Builtin => {
                static_table::StaticTable::builtin().map(|t| Embedder::Builtin(Box::new(t)))
            }
            Embeddings::Local { dir } => {
                bert::LocalModel::load(dir).map(|m| Embedder::Local(Box::new(m)))
            }
            Embeddings::Endpoint { url, model, key } => {
                let key = match key {
                    None => Ok(None),
                    Some(name) => toolsmith_secrets::Store::new(&self.personal)
                        .load()
                        .map_err(|e| EmbedError::Secrets(e.to_string()))
                        .and_then(|all| {
                            all.get(name)
                                .cloned()
                                .map(Some)
                                .ok_or_else(|| EmbedError::NoKey { name: name.clone() })
                        }),
                };
                key.map(|k| Embedder::Endpoint(endpoint::Endpoint::new(url, model, k)))
            }
        }
        .map_err(|e| {
            toolsmith_error::Hint::hint(&e).map_or(e.to_string(), |h| format!("{e}\nhint: {h}"))
        })?;
        let file = self
            .cache
            .as_ref()
            .map(|c| c.join(format!("{}.vec", file_safe(&embedder.id()))));
        Ok(Arc::new(Engine {
            store: RwLock::new(Store::open(file)),
            embedder,
        }))
    }

    /// The configured engine, loading it now if needed (blocking).
    fn primary(&self) -> Result<Arc<Engine>, String> {
        self.primary.get_or_init(|| self.load(&self.choice)).clone()
    }

    fn fallback(&self) -> Result<Arc<Engine>, String> {
        self.fallback
            .get_or_init(|| self.load(&Embeddings::Builtin))
            .clone()
    }

    fn endpoint_down(&self) -> bool {
        matches!(self.choice, Embeddings::Endpoint { .. })
            && self
                .down_until
                .lock()
                .ok()
                .and_then(|g| *g)
                .is_some_and(|t| Instant::now() < t)
    }

    fn mark_down(&self, e: &EmbedError) {
        let first = match self.down_until.lock() {
            Ok(mut g) => g.replace(Instant::now() + RETRY_AFTER).is_none(),
            Err(_) => false,
        };
        if first {
            let text = format!(
                "the embeddings endpoint is unreachable ({e}); searching with the built-in embeddings until it answers"
            );
            tracing::warn!("{text}");
            if let Ok(mut n) = self.notice.lock() {
                *n = Some(text);
            }
        }
    }

    fn mark_up(&self) {
        if let Ok(mut g) = self.down_until.lock()
            && g.take().is_some()
        {
            tracing::info!("the embeddings endpoint answers again");
        }
    }

    /// Embed the tools of `si` that have no vector yet (blocking; the CLI and the worker).
    pub fn prepare(&self, si: &SearchIndex) {
        if matches!(self.choice, Embeddings::None) {
            return;
        }
        let engine = if self.endpoint_down() {
            self.fallback()
        } else {
            self.primary()
        };
        let engine = match engine {
            Ok(e) => e,
            Err(e) => {
                tracing::warn!("semantic search unavailable: {e}");
                return;
            }
        };
        if let Err(e) = fill(&engine, si)
            && matches!(engine.embedder, Embedder::Endpoint(_))
        {
            self.mark_down(&e);
            if let Ok(fb) = self.fallback() {
                let _ = fill(&fb, si);
            }
        }
    }

    /// Keep the vectors of the tools up to date in the background from now on (a server).
    pub fn start(self: &Arc<Self>, index: Arc<Index>) {
        self.started.store(true, Ordering::SeqCst);
        self.schedule(index);
    }

    /// Embed what changed in `index`, in the background, if `start` was called.
    pub fn schedule(self: &Arc<Self>, index: Arc<Index>) {
        if !self.started.load(Ordering::SeqCst) || matches!(self.choice, Embeddings::None) {
            return;
        }
        let Ok(mut w) = self.worker.lock() else {
            return;
        };
        if let Some(tx) = w.as_ref()
            && tx.send(Arc::clone(&index)).is_ok()
        {
            return;
        }
        let (tx, rx) = std::sync::mpsc::channel::<Arc<Index>>();
        let me = Arc::downgrade(self);
        let spawned = std::thread::Builder::new()
            .name("search-embed".into())
            .spawn(move || {
                while let Ok(mut index) = rx.recv() {
                    // Only the latest version matters.
                    while let Ok(newer) = rx.try_recv() {
                        index = newer;
                    }
                    let Some(me) = me.upgrade() else { return };
                    // The lexical index is built here (and kept with the index version), so
                    // the first query after a change finds it ready.
                    me.prepare(index.search_index());
                }
            });
        if spawned.is_ok() && tx.send(index).is_ok() {
            *w = Some(tx);
        }
    }

    /// The semantic ranking of `si` for `query`. None when no engine is loaded yet or it is off.
    pub fn rank(&self, si: &SearchIndex, query: &str) -> Option<SemanticRanking> {
        let ready = |slot: &OnceLock<Result<Arc<Engine>, String>>| {
            slot.get().and_then(|r| r.as_ref().ok()).cloned()
        };
        let mut engine = if self.endpoint_down() {
            ready(&self.fallback)
        } else {
            ready(&self.primary)
        }?;
        let q = match engine.embedder.embed(&[query]) {
            Ok(mut v) => v.pop()?,
            Err(e) => {
                self.mark_down(&e);
                engine = self.fallback().ok()?;
                fill(&engine, si).ok()?;
                engine.embedder.embed(&[query]).ok()?.pop()?
            }
        };
        if matches!(engine.embedder, Embedder::Endpoint(_)) {
            self.mark_up();
        }
        let store = engine.store.read().ok()?;
        let q = store::Query::new(&q);
        let mut sims: Vec<(u32, f32)> = Vec::with_capacity(si.docs.len());
        // Vectors of another size (another model's) are never compared.
        let same = store.dims() == q.dims();
        for (i, d) in si.docs.iter().enumerate().filter(|_| same) {
            if let Some(r) = store.row(&d.key) {
                sims.push((i as u32, store.similarity(r, &q)));
            }
        }
        drop(store);
        let covered = sims.len();
        let order = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        // Only the best CANDIDATES are sorted (10,000 tools: a partition, then 100 sorted).
        if sims.len() > CANDIDATES {
            sims.select_nth_unstable_by(CANDIDATES, order);
            sims.truncate(CANDIDATES);
        }
        sims.sort_by(order);
        Some(SemanticRanking {
            hits: sims,
            source: engine.embedder.describe(),
            covered,
        })
    }

    /// Why the configured source could not be loaded, once it was tried.
    pub fn unavailable(&self) -> Option<String> {
        match self.primary.get() {
            Some(Err(e)) => Some(e.lines().next().unwrap_or(e).to_string()),
            _ => None,
        }
    }

    /// Take the notice not yet given.
    fn take_notice(&self) -> Option<String> {
        self.notice.lock().ok().and_then(|mut n| n.take())
    }

    /// One line for `toolsmith doctor`: the source, loaded now (blocking), or why it fails.
    pub fn check(&self) -> Result<String, String> {
        match &self.choice {
            Embeddings::None => Ok("lexical only (TOOLSMITH_EMBEDDINGS=none)".into()),
            Embeddings::Endpoint { .. } => {
                let e = self.primary()?;
                e.embedder
                    .embed(&["a test sentence"])
                    .map(|_| format!("hybrid: lexical BM25F + {}", e.embedder.describe()))
                    .map_err(|err| {
                        format!(
                            "{err}; search falls back to the built-in embeddings\nhint: {}",
                            toolsmith_error::Hint::hint(&err).unwrap_or_default()
                        )
                    })
            }
            _ => {
                let e = self.primary()?;
                e.embedder
                    .embed(&["a test sentence"])
                    .map(|_| format!("hybrid: lexical BM25F + {}", e.embedder.describe()))
                    .map_err(|err| err.to_string())
            }
        }
    }
}

/// Embed the tools of `si` the engine has no vector of; drop vectors of tools gone.
fn fill(engine: &Engine, si: &SearchIndex) -> Result<(), EmbedError> {
    let model = engine.embedder.id();
    let keys: Vec<store::Key> = si.docs.iter().map(|d| d.key).collect();
    let missing: Vec<usize> = {
        let store = engine.store.read().map_err(|_| EmbedError::Model {
            model: model.clone(),
            message: "the vector store is poisoned".into(),
        })?;
        (0..keys.len())
            .filter(|&i| !store.contains(&keys[i]))
            .collect()
    };
    for part in missing.chunks(engine.embedder.batch()) {
        let texts: Vec<&str> = part.iter().map(|&i| si.docs[i].text.as_str()).collect();
        let vecs = engine.embedder.embed(&texts)?;
        let items = part.iter().map(|&i| keys[i]).zip(vecs).collect();
        if let Ok(mut s) = engine.store.write() {
            s.insert(items);
        }
    }
    if let Ok(mut s) = engine.store.write()
        && s.len() > keys.len()
    {
        s.retain(&keys.into_iter().collect());
    }
    Ok(())
}

fn file_safe(id: &str) -> String {
    let clean: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    // Distinct ids that clean to the same text stay apart.
    let h = store::key(id);
    format!("{clean}-{}", hex::encode(&h[..4]))
}
