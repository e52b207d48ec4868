//! Replacing secret values by `[secret NAME]` in text and JSON: a tool's output, its log
//! lines, progress, memory writes and its errors pass through here before anything leaves the
//! call. Each value is searched for in all its `forms` (exact, base64, hex, URL-encoded,
//! reversed), also where line breaks split it (a value printed in two lines, base64 wrapped at
//! 76 columns): the search runs over the text with `\r` and `\n` left out, and a match
//! replaces the whole stretch of the original text it covers, line breaks included.
//!
//! Not caught: a value cut into pieces with other text between them, other encodings
//! (compressed, encrypted, base32, character codes), or a value the tool transforms itself.

use super::forms::{Encoding, forms};
use aho_corasick::{AhoCorasick, MatchKind};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Values shorter than this are not redacted (a one-character "secret" would shred every
/// output); `toolsmith secret set` refuses them anyway.
pub const MIN_LEN: usize = 4;

/// Redacts a set of secret values.
#[derive(Clone, Default)]
pub struct Redactor {
    /// (secret name, value) of every value redacted.
    values: Vec<(String, String)>,
    /// One automaton over every form of every value, and each pattern's replacement.
    matcher: Option<Arc<(AhoCorasick, Vec<String>)>>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secrets)", self.values.len())
    }
}

/// `s` without `\r` and `\n`, and for each byte kept its offset in `s`; None when `s` has no
/// line break (the search then runs on `s` itself).
fn joined(s: &str) -> Option<(String, Vec<usize>)> {
    if !s.contains(['\n', '\r']) {
        return None;
    }
    let mut text = String::with_capacity(s.len());
    let mut at = Vec::with_capacity(s.len());
    for (i, c) in s.char_indices() {
        if c != '\n' && c != '\r' {
            text.push(c);
            at.extend(i..i + c.len_utf8());
        }
    }
    Some((text, at))
}

impl Redactor {
    pub fn new(secrets: &BTreeMap<String, String>) -> Redactor {
        Redactor::from_values(
            secrets
                .iter()
                .filter(|(_, v)| v.len() >= MIN_LEN)
                .map(|(n, v)| (n.clone(), v.clone()))
                .collect(),
        )
    }

    fn from_values(values: Vec<(String, String)>) -> Redactor {
        let mut patterns: Vec<(String, String)> = Vec::new();
        for (name, value) in &values {
            for (form, _) in forms(value) {
                patterns.push((form, format!("[secret {name}]")));
            }
        }
        if patterns.is_empty() {
            return Redactor::default();
        }
        // Longest first among overlapping matches (a value containing another wins).
        let matcher = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(patterns.iter().map(|(p, _)| p.as_str()))
            .ok()
            .map(|ac| Arc::new((ac, patterns.into_iter().map(|(_, r)| r).collect())));
        Redactor { values, matcher }
    }

    /// This redactor's values and `other`'s together.
    pub fn merged(mut self, other: &Redactor) -> Redactor {
        for v in &other.values {
            if !self.values.contains(v) {
                self.values.push(v.clone());
            }
        }
        Redactor::from_values(self.values)
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Whether `s` contains any secret value, in any of its forms.
    pub fn finds(&self, s: &str) -> bool {
        let Some(m) = &self.matcher else {
            return false;
        };
        match joined(s) {
            None => m.0.is_match(s),
            Some((text, _)) => m.0.is_match(&text),
        }
    }

    /// `s` with every secret value (in any form) replaced.
    pub fn text(&self, s: &str) -> String {
        let Some(m) = &self.matcher else {
            return s.to_string();
        };
        let (ac, replacements) = &**m;
        let join = joined(s);
        let hay = join.as_ref().map_or(s, |(t, _)| t.as_str());
        let mut out = String::with_capacity(s.len());
        let mut last = 0;
        for hit in ac.find_iter(hay) {
            // The stretch of `s` the match covers (line breaks inside it go too).
            let (start, end) = match &join {
                None => (hit.start(), hit.end()),
                Some((_, at)) => (at[hit.start()], at[hit.end() - 1] + 1),
            };
            // Through the end of the last byte's character.
            let end = (end..=s.len())
                .find(|i| s.is_char_boundary(*i))
                .unwrap_or(s.len());
            out.push_str(&s[last..start]);
            out.push_str(&replacements[hit.pattern().as_usize()]);
            last = end;
        }
        out.push_str(&s[last..]);
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
        if self.matcher.is_none() {
            return;
        }
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

/// Where a stored value shows up in `text`, in any form: (byte offset, secret name, encoding)
/// of the first match of each secret (for the commit scan).
pub fn find_forms(text: &str, values: &[(String, String)]) -> Vec<(usize, String, Encoding)> {
    let mut out = Vec::new();
    for (name, value) in values {
        let fs = forms(value);
        let Ok(ac) = AhoCorasick::new(fs.iter().map(|(f, _)| f.as_str())) else {
            continue;
        };
        let join = joined(text);
        let hay = join.as_ref().map_or(text, |(t, _)| t.as_str());
        if let Some(hit) = ac.find(hay) {
            let at = join.as_ref().map_or(hit.start(), |(_, at)| at[hit.start()]);
            out.push((at, name.clone(), fs[hit.pattern().as_usize()].1));
        }
    }
    out
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
    #[test]
    fn encoded_reversed_and_split_values_are_redacted() {
        use base64::Engine;
        use base64::engine::general_purpose::{STANDARD, URL_SAFE};
        let value = "tok-7f3a9c1e5b2d4680";
        let r = Redactor::new(&BTreeMap::from([("T".to_string(), value.to_string())]));
        let mut cases = vec![
            hex::encode(value),
            hex::encode_upper(value),
            value.chars().rev().collect::<String>(),
            format!("{}\n{}", &value[..9], &value[9..]),
            format!("{}\r\n{}", &value[..3], &value[3..]),
        ];
        for prefix in ["", "a", "ab", "Bearer "] {
            cases.push(STANDARD.encode(format!("{prefix}{value}")));
            cases.push(URL_SAFE.encode(format!("{prefix}{value}?>")));
        }
        let long = format!("{}{value}", "x".repeat(60));
        let wrapped: String = STANDARD
            .encode(&long)
            .as_bytes()
            .chunks(76)
            .map(|c| String::from_utf8_lossy(c).into_owned() + "\n")
            .collect();
        cases.push(wrapped);
        for c in cases {
            let out = r.text(&format!("out: {c} end"));
            assert!(out.contains("[secret T]"), "{c} -> {out}");
            assert!(out.starts_with("out: ") && out.ends_with(" end"), "{out}");
            assert!(r.finds(&c), "{c}");
        }
        assert_eq!(r.text("nothing here\nat all"), "nothing here\nat all");
        let mut v = serde_json::json!({"b": [STANDARD.encode(value)]});
        r.json(&mut v);
        assert!(v.to_string().contains("[secret T]"), "{v}");
    }
}
