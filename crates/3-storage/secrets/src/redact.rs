//! Replacing secret values by `[secret NAME]` in text and JSON: a tool's output, its log
//! lines, progress, memory writes and its errors pass through here before anything leaves the
//! call. Each value is searched for in all its `forms` (exact, base64, hex, URL-encoded,
//! reversed), also where line breaks split it (a value printed in two lines, base64 wrapped at
//! 76 columns): the search runs over the text with `\r` and `\n` left out (and over forms
//! without them), and a match replaces the whole stretch of the original text it covers, line
//! breaks included. Log lines, which leave one by one, are held back while their end could
//! begin a value (`lines::Window`).
//!
//! Making a redactor builds one automaton over every form of every value; a call makes one
//! for the values stored on this machine, so the last one made is kept and handed out again
//! for the same values (a memo of a pure function: the values are its key).
//!
//! Not caught: a value cut into pieces with other text between them (separate JSON strings,
//! separate progress messages), other encodings (compressed, encrypted, base32, character
//! codes), or a value the tool transforms itself.

use super::forms::{Encoding, forms};
use aho_corasick::{AhoCorasick, MatchKind};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};

/// Values shorter than this are not redacted (a one-character "secret" would shred every
/// output); `toolsmith secret set` refuses them anyway.
pub const MIN_LEN: usize = 4;

/// Redacts a set of secret values. Cloning is cheap (the automaton is shared).
#[derive(Clone, Default)]
pub struct Redactor {
    inner: Option<Arc<Matcher>>,
}

/// Every form of every value, searched for at once.
pub(crate) struct Matcher {
    /// (secret name, value) of every value redacted.
    values: Vec<(String, String)>,
    ac: AhoCorasick,
    /// Per pattern: the secret's index in `values` and the form's encoding.
    of: Vec<(usize, Encoding)>,
    /// Each pattern's replacement.
    replacements: Vec<String>,
    /// Every proper prefix of every pattern (for `lines::Window`: could a line's end begin
    /// a value?).
    prefixes: HashSet<Box<[u8]>>,
    /// The longest pattern, in bytes.
    pub(crate) longest: usize,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Redactor({} secrets)",
            self.inner.as_ref().map_or(0, |m| m.values.len())
        )
    }
}

/// `s` without `\r` and `\n`, and for each byte kept its offset in `s`; None when `s` has no
/// line break (the search then runs on `s` itself).
pub(crate) fn joined(s: &str) -> Option<(String, Vec<usize>)> {
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

/// The last matcher made, by the digest of its values.
static LAST: Mutex<Option<([u8; 32], Redactor)>> = Mutex::new(None);

fn digest(values: &[(String, String)]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for (n, v) in values {
        h.update((n.len() as u64).to_le_bytes());
        h.update(n.as_bytes());
        h.update((v.len() as u64).to_le_bytes());
        h.update(v.as_bytes());
    }
    h.finalize().into()
}

impl Matcher {
    fn build(values: Vec<(String, String)>) -> Option<Matcher> {
        let mut patterns: Vec<String> = Vec::new();
        let mut of = Vec::new();
        for (i, (_, value)) in values.iter().enumerate() {
            for (form, encoding) in forms(value) {
                // The haystack is searched without line breaks: so are the forms.
                let form: String = form.chars().filter(|c| *c != '\n' && *c != '\r').collect();
                if form.is_empty() || patterns.contains(&form) {
                    continue;
                }
                patterns.push(form);
                of.push((i, encoding));
            }
        }
        if patterns.is_empty() {
            return None;
        }
        // Longest first among overlapping matches (a value containing another wins).
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
            .ok()?;
        let mut prefixes = HashSet::new();
        for p in &patterns {
            for end in 1..p.len() {
                prefixes.insert(p.as_bytes()[..end].into());
            }
        }
        let replacements = of
            .iter()
            .map(|(i, _)| format!("[secret {}]", values[*i].0))
            .collect();
        Some(Matcher {
            longest: patterns.iter().map(String::len).max().unwrap_or(0),
            values,
            ac,
            of,
            replacements,
            prefixes,
        })
    }

    /// The matches in `hay` (already without line breaks): (start, end, pattern).
    pub(crate) fn find_iter<'h>(
        &'h self,
        hay: &'h str,
    ) -> impl Iterator<Item = (usize, usize, usize)> + 'h {
        self.ac
            .find_iter(hay)
            .map(|m| (m.start(), m.end(), m.pattern().as_usize()))
    }

    pub(crate) fn replacement(&self, pattern: usize) -> &str {
        &self.replacements[pattern]
    }

    /// Whether `tail` is the start of some form (not a whole one).
    pub(crate) fn begins_a_form(&self, tail: &[u8]) -> bool {
        self.prefixes.contains(tail)
    }
}

impl Redactor {
    /// The redactor of `secrets` (name → value); values shorter than `MIN_LEN` are left out.
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
        if values.is_empty() {
            return Redactor::default();
        }
        let key = digest(&values);
        let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((k, r)) = last.as_ref()
            && *k == key
        {
            return r.clone();
        }
        let r = Redactor {
            inner: Matcher::build(values).map(Arc::new),
        };
        *last = Some((key, r.clone()));
        r
    }

    pub(crate) fn matcher(&self) -> Option<&Matcher> {
        self.inner.as_deref()
    }

    /// This redactor's values and `other`'s together.
    pub fn merged(self, other: &Redactor) -> Redactor {
        let mut values = self
            .inner
            .as_ref()
            .map(|m| m.values.clone())
            .unwrap_or_default();
        for v in other.inner.iter().flat_map(|m| &m.values) {
            if !values.contains(v) {
                values.push(v.clone());
            }
        }
        Redactor::from_values(values)
    }

    /// Whether it has no value to look for (its output is its input).
    pub fn is_empty(&self) -> bool {
        self.inner.is_none()
    }

    /// Whether `s` contains any secret value, in any of its forms.
    pub fn finds(&self, s: &str) -> bool {
        let Some(m) = &self.inner else {
            return false;
        };
        match joined(s) {
            None => m.ac.is_match(s),
            Some((text, _)) => m.ac.is_match(&text),
        }
    }

    /// `s` with every secret value (in any form) replaced.
    pub fn text(&self, s: &str) -> String {
        let Some(m) = &self.inner else {
            return s.to_string();
        };
        let join = joined(s);
        let hay = join.as_ref().map_or(s, |(t, _)| t.as_str());
        let mut out = String::with_capacity(s.len());
        let mut last = 0;
        for (start, end, pattern) in m.find_iter(hay) {
            // The stretch of `s` the match covers (line breaks inside it go too).
            let (start, end) = match &join {
                None => (start, end),
                Some((_, at)) => (at[start], at[end - 1] + 1),
            };
            // Through the end of the last byte's character.
            let end = (end..=s.len())
                .find(|i| s.is_char_boundary(*i))
                .unwrap_or(s.len());
            out.push_str(&s[last..start]);
            out.push_str(m.replacement(pattern));
            last = end;
        }
        out.push_str(&s[last..]);
        out
    }

    /// Redact a string in place (no copy when it holds no secret). True when it held one.
    pub fn in_place(&self, s: &mut String) -> bool {
        if self.finds(s) {
            *s = self.text(s);
            return true;
        }
        false
    }

    /// Redact every string (keys too) in a JSON value. True when anything was replaced.
    pub fn json(&self, v: &mut Value) -> bool {
        if self.inner.is_none() {
            return false;
        }
        match v {
            Value::String(s) => self.in_place(s),
            Value::Array(a) => a.iter_mut().fold(false, |c, x| self.json(x) | c),
            Value::Object(o) => {
                let keys: Vec<String> = o.keys().filter(|k| self.finds(k)).cloned().collect();
                let mut changed = !keys.is_empty();
                for k in keys {
                    if let Some(x) = o.remove(&k) {
                        o.insert(self.text(&k), x);
                    }
                }
                for x in o.values_mut() {
                    changed |= self.json(x);
                }
                changed
            }
            _ => false,
        }
    }

    /// A result: its JSON value and its text. When the value held a secret, the text is made
    /// again from the redacted value (the text of JSON may hold a value the text search cannot
    /// see: escaped as `\u0074ok`, `\"` or `\n` inside a string); then the text is redacted.
    pub fn result(&self, text: &mut String, structured: Option<&mut Value>) {
        if self.inner.is_none() {
            return;
        }
        if let Some(v) = structured
            && self.json(v)
        {
            let pretty = text.contains('\n');
            let again = if pretty {
                serde_json::to_string_pretty(v)
            } else {
                serde_json::to_string(v)
            };
            if let Ok(t) = again {
                *text = t;
            }
        }
        self.in_place(text);
    }
}

/// Where stored values show up in texts, in any form: one automaton made for a set of values
/// and used on every file of a change (the commit scan).
pub struct Finder {
    matcher: Option<Matcher>,
}

impl Finder {
    /// A finder of `values` (name, value).
    pub fn new(values: &[(String, String)]) -> Finder {
        Finder {
            matcher: Matcher::build(values.to_vec()),
        }
    }

    /// (byte offset, secret name, encoding) of the first match of each secret in `text`.
    pub fn find(&self, text: &str) -> Vec<(usize, String, Encoding)> {
        let Some(m) = &self.matcher else {
            return Vec::new();
        };
        let join = joined(text);
        let hay = join.as_ref().map_or(text, |(t, _)| t.as_str());
        let mut seen = vec![false; m.values.len()];
        let mut out = Vec::new();
        for (start, _, pattern) in m.find_iter(hay) {
            let (secret, encoding) = m.of[pattern];
            if std::mem::replace(&mut seen[secret], true) {
                continue;
            }
            let at = join.as_ref().map_or(start, |(_, at)| at[start]);
            out.push((at, m.values[secret].0.clone(), encoding));
        }
        out
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
