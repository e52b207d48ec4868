//! An OpenAI-compatible embeddings endpoint (Ollama, llama.cpp's server, a hosted API):
//! `POST <url>/embeddings` with `{"model", "input": [texts]}`, answered by
//! `{"data": [{"index", "embedding"}]}`. The API key, when one is configured, is a toolsmith
//! secret (`toolsmith secret set NAME`), read when the endpoint is first used and sent only
//! as `Authorization: Bearer`; plain HTTP is allowed only to loopback addresses when a key is
//! sent (`config::Embeddings::check`).

use super::EmbedError;
use serde_json::{Value, json};
use std::time::Duration;

/// How long one request may take.
const TIMEOUT: Duration = Duration::from_secs(20);
/// How long connecting may take (an unreachable endpoint is noticed quickly).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// A configured endpoint.
pub struct Endpoint {
    url: String,
    model: String,
    key: Option<String>,
    agent: ureq::Agent,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("Endpoint")
            .field("url", &self.url)
            .field("model", &self.model)
            .finish()
    }
}

impl Endpoint {
    /// `url` is the API base (`http://127.0.0.1:11434/v1`); `key` the secret's value.
    pub fn new(url: &str, model: &str, key: Option<String>) -> Endpoint {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(TIMEOUT))
            .timeout_connect(Some(CONNECT_TIMEOUT))
            .http_status_as_error(false)
            .build()
            .into();
        Endpoint {
            url: url.trim_end_matches('/').to_string(),
            model: model.to_string(),
            key,
            agent,
        }
    }

    /// Names the model in cache keys (the URL and the model).
    pub fn id(&self) -> String {
        format!("endpoint-{}#{}", self.url, self.model)
    }

    /// What `toolsmith doctor` and results say it is.
    pub fn describe(&self) -> String {
        format!(
            "embeddings endpoint {}/embeddings, model {:?}",
            self.url, self.model
        )
    }

    /// The endpoint's URL (for messages).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Normalised vectors of `texts`, in order.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let url = format!("{}/embeddings", self.url);
        let fail = |message: String| EmbedError::Endpoint {
            url: url.clone(),
            message,
        };
        let mut req = self
            .agent
            .post(&url)
            .header("Content-Type", "application/json");
        if let Some(k) = &self.key {
            req = req.header("Authorization", &format!("Bearer {k}"));
        }
        let body = json!({"model": self.model, "input": texts});
        let mut resp = req
            .send(body.to_string())
            .map_err(|e| fail(format!("unreachable: {e}")))?;
        let status = resp.status().as_u16();
        let text = resp
            .body_mut()
            .with_config()
            .limit(64 << 20)
            .read_to_string()
            .map_err(|e| fail(format!("reading the answer: {e}")))?;
        if status != 200 {
            let detail: String = text.chars().take(300).collect();
            return Err(fail(format!("answered HTTP {status}: {detail}")));
        }
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| fail(format!("the answer is not JSON: {e}")))?;
        let data = v
            .get("data")
            .and_then(Value::as_array)
            .ok_or_else(|| fail("the answer has no \"data\" array".into()))?;
        let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        let mut dims = None;
        for (pos, item) in data.iter().enumerate() {
            let i = item
                .get("index")
                .and_then(Value::as_u64)
                .map_or(pos, |i| i as usize);
            let vec: Vec<f32> = item
                .get("embedding")
                .and_then(Value::as_array)
                .ok_or_else(|| fail(format!("data[{pos}] has no \"embedding\" array")))?
                .iter()
                .map(|x| x.as_f64().map(|f| f as f32))
                .collect::<Option<_>>()
                .ok_or_else(|| fail(format!("data[{pos}].embedding holds a non-number")))?;
            if vec.is_empty() || *dims.get_or_insert(vec.len()) != vec.len() {
                return Err(fail("the vectors differ in length".into()));
            }
            match out.get_mut(i) {
                Some(slot) => *slot = Some(vec),
                None => return Err(fail(format!("data[{pos}].index {i} is out of range"))),
            }
        }
        out.into_iter()
            .enumerate()
            .map(|(i, v)| {
                let mut v = v.ok_or_else(|| fail(format!("no embedding for input {i}")))?;
                super::normalize(&mut v);
                Ok(v)
            })
            .collect()
    }
}
