//! Redacting messages that leave one by one (a call's log lines): a value printed across
//! several lines must not leave in pieces. The messages are searched as one text without line
//! breaks, as `Redactor::text` searches one string; a message whose end could still begin a
//! value (its tail is the start of some form) is held back until the next message shows
//! whether it does, or until the call ends (`flush`). Messages that cannot be part of a value
//! leave at once, in order.

use super::Redactor;

/// The messages not yet sent, each with its tag (e.g. a log level).
pub struct Window<T> {
    redactor: Redactor,
    pending: Vec<(T, String)>,
}

/// One message's part of the joined text.
struct Part {
    /// Where its bytes start in the joined text.
    start: usize,
    /// For each of its bytes in the joined text, the offset in the message.
    at: Vec<usize>,
}

impl<T> Window<T> {
    /// An empty window holding back what could begin a value of `redactor`'s.
    pub fn new(redactor: Redactor) -> Window<T> {
        Window {
            redactor,
            pending: Vec::new(),
        }
    }

    /// Add a message; returns the messages that may leave now (redacted), in order.
    pub fn push(&mut self, tag: T, message: &str) -> Vec<(T, String)> {
        if self.redactor.is_empty() {
            return vec![(tag, message.to_string())];
        }
        self.pending.push((tag, message.to_string()));
        self.settle(false)
    }

    /// Every message still held (the call ended), redacted.
    pub fn flush(&mut self) -> Vec<(T, String)> {
        self.settle(true)
    }

    fn settle(&mut self, all: bool) -> Vec<(T, String)> {
        let Some(m) = self.redactor.matcher() else {
            return std::mem::take(&mut self.pending);
        };
        let mut hay = String::new();
        let mut parts = Vec::with_capacity(self.pending.len());
        for (_, msg) in &self.pending {
            let start = hay.len();
            let mut at = Vec::new();
            for (i, c) in msg.char_indices() {
                if c != '\n' && c != '\r' {
                    hay.push(c);
                    at.extend(i..i + c.len_utf8());
                }
            }
            parts.push(Part { start, at });
        }
        // Where a value may still begin: the earliest tail of the text that is the start of
        // a form. Messages ending before it are settled.
        let hold_from = if all {
            hay.len()
        } else {
            let first = hay.len().saturating_sub(m.longest.saturating_sub(1));
            (first..hay.len())
                .filter(|p| hay.is_char_boundary(*p))
                .find(|p| m.begins_a_form(&hay.as_bytes()[*p..]))
                .unwrap_or(hay.len())
        };
        let settled = parts
            .iter()
            .take_while(|p| all || p.start + p.at.len() <= hold_from)
            .count();
        if settled == 0 {
            return Vec::new();
        }
        // Cuts per message: (from, to, replacement) in the message's bytes.
        let mut cuts: Vec<Vec<(usize, usize, Option<&str>)>> = vec![Vec::new(); parts.len()];
        let owner = |pos: usize| parts.partition_point(|p| p.start <= pos) - 1;
        for (start, end, pattern) in m.find_iter(&hay) {
            let (first, last) = (owner(start), owner(end - 1));
            if first >= settled {
                break;
            }
            for (i, cut) in cuts.iter_mut().enumerate().take(last + 1).skip(first) {
                let p = &parts[i];
                let from = if i == first { p.at[start - p.start] } else { 0 };
                let to = if i == last {
                    p.at[end - 1 - p.start] + 1
                } else {
                    self.pending[i].1.len()
                };
                cut.push((from, to, (i == first).then(|| m.replacement(pattern))));
            }
        }
        let mut out = Vec::with_capacity(settled);
        let mut kept = Vec::new();
        for (i, ((tag, msg), cut)) in std::mem::take(&mut self.pending)
            .into_iter()
            .zip(cuts)
            .enumerate()
        {
            let mut text = String::with_capacity(msg.len());
            let mut last = 0;
            for (from, to, replacement) in &cut {
                let to = (*to..=msg.len())
                    .find(|j| msg.is_char_boundary(*j))
                    .unwrap_or(msg.len());
                text.push_str(&msg[last..*from]);
                text.push_str(replacement.unwrap_or(""));
                last = to;
            }
            text.push_str(&msg[last..]);
            if i < settled {
                // A message emptied by a value that began in an earlier one says nothing.
                if !text.is_empty() || msg.is_empty() {
                    out.push((tag, text));
                }
            } else {
                kept.push((tag, text));
            }
        }
        self.pending = kept;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    const VALUE: &str = "tok-7f3a9c1e5b2d4680";

    fn window() -> Window<u8> {
        Window::new(Redactor::new(&BTreeMap::from([(
            "T".to_string(),
            VALUE.to_string(),
        )])))
    }

    fn run(lines: &[&str]) -> Vec<String> {
        let mut w = window();
        let mut out: Vec<String> = Vec::new();
        for l in lines {
            out.extend(w.push(0, l).into_iter().map(|(_, m)| m));
        }
        out.extend(w.flush().into_iter().map(|(_, m)| m));
        out
    }

    #[test]
    fn a_value_split_across_messages_leaves_as_its_name() {
        let chars: Vec<String> = VALUE.chars().map(String::from).collect();
        let one_per_line: Vec<&str> = chars.iter().map(String::as_str).collect();
        for lines in [
            vec!["using tok-7f3a9", "c1e5b2d4680 now", "done"],
            one_per_line,
            vec!["a", "tok-7f3a9c1e5b2d4680", "b"],
        ] {
            let out = run(&lines);
            let all = out.concat();
            assert!(!all.contains("7f3a9c1e"), "{lines:?} -> {out:?}");
            assert!(!all.contains("c1e5b2d4680"), "{lines:?} -> {out:?}");
            assert!(all.contains("[secret T]"), "{lines:?} -> {out:?}");
        }
        // Base64 wrapped in lines, as `base64` prints it.
        use base64::Engine;
        let long = format!("{}{VALUE}", "x".repeat(50));
        let b64 = base64::engine::general_purpose::STANDARD.encode(&long);
        let (a, b) = b64.split_at(76);
        let out = run(&[a, b]).concat();
        assert!(out.contains("[secret T]"), "{out}");
    }

    #[test]
    fn messages_that_cannot_begin_a_value_leave_at_once() {
        let mut w = window();
        assert_eq!(w.push(1, "starting.").len(), 1);
        assert_eq!(w.push(2, "page 1 of 3;").len(), 1);
        // Its end could begin the value: held until the next message says.
        assert!(w.push(3, "token: tok-7f").is_empty());
        let out = w.push(4, "3a9c1e5b2d4680; next.");
        assert_eq!(
            out,
            vec![(3, "token: [secret T]".to_string()), (4, "; next.".into())]
        );
        assert!(w.push(5, "it is t").is_empty());
        assert_eq!(
            w.push(6, "oo late."),
            vec![(5, "it is t".into()), (6, "oo late.".into())]
        );
        assert!(w.flush().is_empty());
        let mut none = Window::new(Redactor::default());
        assert_eq!(none.push(1, "tok-7f"), vec![(1, "tok-7f".to_string())]);
    }
}
