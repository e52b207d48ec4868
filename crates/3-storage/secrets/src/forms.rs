//! The forms a secret value takes in the encodings a script reaches first: the exact value,
//! base64 (standard and URL-safe, at each of the three byte alignments a value can have inside
//! a longer encoded string), hex (lower and upper case), URL-encoding (RFC 3986, `/` kept or
//! not, upper- or lower-case escapes, and form encoding) and the reversed value. Redaction and
//! the commit scan both search for these forms.
//!
//! A base64 form is the run of characters that only the value's own bits decide: wherever the
//! value sits in a longer input, its encoding contains that run, whatever surrounds it.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};

/// Encoded forms shorter than this are not searched for: a short run of base64 or hex
/// characters turns up in unrelated output too often.
pub const MIN_ENCODED_LEN: usize = 8;

/// What a form is, for messages ("the base64 of the secret X").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// The value itself.
    Exact,
    /// Its base64 (standard or URL-safe, padded or not, at any of three alignments).
    Base64,
    /// Its hex digits.
    Hex,
    /// Its URL encoding.
    UrlEncoded,
    /// The value backwards.
    Reversed,
}

impl Encoding {
    /// "", "base64 of ", ... for "the {}value of the secret NAME".
    pub fn describe(self) -> &'static str {
        match self {
            Encoding::Exact => "",
            Encoding::Base64 => "base64 of the ",
            Encoding::Hex => "hex of the ",
            Encoding::UrlEncoded => "URL-encoded ",
            Encoding::Reversed => "reversed ",
        }
    }
}

/// The characters of base64 that depend only on `value`, when it starts `align` bytes (0, 1 or
/// 2) past a 3-byte group boundary of a longer encoded input.
fn base64_core(value: &[u8], align: usize, engine: &impl Engine) -> String {
    let mut input = vec![0u8; align];
    input.extend_from_slice(value);
    let encoded = engine.encode(&input);
    let bits_start = 8 * align;
    let bits_end = bits_start + 8 * value.len();
    // Character i covers bits [6i, 6i + 6).
    let first = bits_start.div_ceil(6);
    let end = bits_end / 6;
    encoded.get(first..end).unwrap_or_default().to_string()
}

/// Percent-encoding of every byte outside `keep` (and the RFC 3986 unreserved set).
fn percent(value: &str, keep: &[u8], upper: bool) -> String {
    let mut out = String::with_capacity(value.len() * 3);
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) || keep.contains(&b) {
            out.push(b as char);
        } else if upper {
            out.push_str(&format!("%{b:02X}"));
        } else {
            out.push_str(&format!("%{b:02x}"));
        }
    }
    out
}

/// Every form of `value` worth searching for, each once, with its encoding. The exact value
/// comes first.
pub fn forms(value: &str) -> Vec<(String, Encoding)> {
    let bytes = value.as_bytes();
    let mut out: Vec<(String, Encoding)> = vec![(value.to_string(), Encoding::Exact)];
    let mut add = |s: String, e: Encoding| {
        if s.len() >= MIN_ENCODED_LEN && !out.iter().any(|(x, _)| *x == s) {
            out.push((s, e));
        }
    };
    for align in 0..3 {
        add(
            base64_core(bytes, align, &STANDARD_NO_PAD),
            Encoding::Base64,
        );
        add(
            base64_core(bytes, align, &URL_SAFE_NO_PAD),
            Encoding::Base64,
        );
    }
    add(hex::encode(bytes), Encoding::Hex);
    add(hex::encode_upper(bytes), Encoding::Hex);
    for keep in [&b""[..], b"/"] {
        add(percent(value, keep, true), Encoding::UrlEncoded);
        add(percent(value, keep, false), Encoding::UrlEncoded);
    }
    add(
        form_urlencoded::byte_serialize(bytes).collect(),
        Encoding::UrlEncoded,
    );
    add(value.chars().rev().collect(), Encoding::Reversed);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE};

    const VALUE: &str = "tok-7f3a9c1e5b2d4680/x?";

    #[test]
    fn every_alignment_of_base64_contains_a_form() {
        let f = forms(VALUE);
        for prefix in ["", "a", "ab", "abc", "user:"] {
            for suffix in ["", "!", "!!", "\n"] {
                let input = format!("{prefix}{VALUE}{suffix}");
                for e in [STANDARD.encode(&input), URL_SAFE.encode(&input)] {
                    assert!(
                        f.iter().any(|(s, _)| e.contains(s.as_str())),
                        "{input:?} -> {e}"
                    );
                }
            }
        }
    }

    #[test]
    fn hex_url_encoding_and_reversal_are_forms() {
        let f: Vec<String> = forms(VALUE).into_iter().map(|(s, _)| s).collect();
        assert!(f.contains(&hex::encode(VALUE)));
        assert!(f.contains(&hex::encode_upper(VALUE)));
        assert!(f.contains(&"tok-7f3a9c1e5b2d4680%2Fx%3F".to_string()));
        assert!(f.contains(&"tok-7f3a9c1e5b2d4680/x%3f".to_string()));
        assert!(f.contains(&VALUE.chars().rev().collect::<String>()));
        // A short value has no encoded forms (they would match unrelated text).
        assert_eq!(forms("abcd").len(), 1 + 1, "exact and its hex (8 chars)");
    }
}
