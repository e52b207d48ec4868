//! Replacing secret values by `[secret NAME]` in text and JSON: a tool's output, its log
//! lines and its errors pass through here before anything leaves the call.

use serde_json::Value;
use std::collections::BTreeMap;

/// Values shorter than this are not redacted (a one-character "secret" would shred every
/// output); `toolsmith secret set` refuses them anyway.
pub const MIN_LEN: usize = 4;

/// Redacts a set of secret values.
#[derive(Clone, Default)]
pub struct Redactor {
    /// (value, replacement), longest value first (so a value containing another wins).
    pairs: Vec<(String, String)>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secrets)", self.pairs.len())
    }
}

impl Redactor {
    pub fn new(secrets: &BTreeMap<String, String>) -> Redactor {
        let mut pairs: Vec<(String, String)> = secrets
            .iter()
            .filter(|(_, v)| v.len() >= MIN_LEN)
            .map(|(n, v)| (v.clone(), format!("[secret {n}]")))
            .collect();
        pairs.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
        Redactor { pairs }
    }

    /// This redactor's values and `other`'s together.
    pub fn merged(mut self, other: &Redactor) -> Redactor {
        self.pairs.extend(other.pairs.iter().cloned());
        self.pairs.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
        self
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Whether `s` contains any secret value.
    pub fn finds(&self, s: &str) -> bool {
        self.pairs.iter().any(|(v, _)| s.contains(v.as_str()))
    }

    /// `s` with every secret value replaced.
    pub fn text(&self, s: &str) -> String {
        let mut out = s.to_string();
        for (v, r) in &self.pairs {
            if out.contains(v.as_str()) {
                out = out.replace(v.as_str(), r);
            }
        }
        out
    }

    /// Redact a string in place (no copy when it holds no secret).
    pub fn in_place(&self, s: &mut String) {
        if self.finds(s) {
            *s = self.text(s);
        }
    }

    /// Redact every string (keys too) in a JSON value.
    pub fn json(&self, v: &mut Value) {
        match v {
            Value::String(s) => self.in_place(s),
            Value::Array(a) => a.iter_mut().for_each(|x| self.json(x)),
            Value::Object(o) => {
                let keys: Vec<String> = o.keys().filter(|k| self.finds(k)).cloned().collect();
                for k in keys {
                    if let Some(x) = o.remove(&k) {
                        o.insert(self.text(&k), x);
                    }
                }
                o.values_mut().for_each(|x| self.json(x));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_become_their_names_in_text_and_json() {
        let r = Redactor::new(&BTreeMap::from([
            ("A_KEY".to_string(), "sk-abcdef".to_string()),
            ("LONGER".to_string(), "sk-abcdef-more".to_string()),
            ("TINY".to_string(), "x".to_string()),
        ]));
        assert_eq!(
            r.text("k=sk-abcdef-more and sk-abcdef x"),
            "k=[secret LONGER] and [secret A_KEY] x"
        );
        let mut v = serde_json::json!({"sk-abcdef": ["sk-abcdef"], "n": 1});
        r.json(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"[secret A_KEY]": ["[secret A_KEY]"], "n": 1})
        );
    }
}
