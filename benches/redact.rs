//! What redacting secret values costs a call; prints a table. Run: `cargo bench --bench redact`.
//!
//! Each call of a stored tool reads the stored secrets and makes the `Redactor` over every
//! form of every value (`approval::admit`), then redacts the result's text and JSON and its
//! log lines (`Call::finish`). Rows: making the redactor for values seen before (every call
//! after the first) and for new values (the first call after `toolsmith secret set`), the
//! whole per-call overhead with 1, 3 and 10 stored secrets, and the commit scan of a 50-file
//! change.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use toolsmith::secrets::{Redactor, Store};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time<F: FnMut()>(runs: usize, mut f: F) -> Duration {
    median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn values(n: usize, salt: usize) -> BTreeMap<String, String> {
    (0..n)
        .map(|i| {
            (
                format!("SECRET_{i}"),
                format!("tok-{salt:06}-{i:02}-7f3a9c1e5b2d4680aa19c3e4b5d6f708"),
            )
        })
        .collect()
}

/// A result a tool might return: 4 KiB of text, its JSON with 100 strings, 20 log lines.
fn output() -> (String, serde_json::Value, Vec<String>) {
    let items: Vec<serde_json::Value> = (0..100)
        .map(|i| serde_json::json!({"id": i, "name": format!("item number {i} of the listing"), "ok": true}))
        .collect();
    let v = serde_json::json!({"items": items});
    let text = v.to_string();
    let logs = (0..20)
        .map(|i| format!("fetched page {i} of 20 (200 OK)"))
        .collect();
    (text, v, logs)
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let (text, json, logs) = output();
    let mut rows: Vec<(String, Duration)> = Vec::new();
    for n in [1usize, 3, 10] {
        let dir = tmp.path().join(format!("p{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        let store = Store::new(&dir);
        for (k, v) in values(n, 0) {
            store.set(&k, &v).unwrap();
        }
        let mut salt = 1;
        rows.push((
            format!("Redactor::new, {n} secrets never seen before (every call, before)"),
            time(30, || {
                salt += 1;
                std::hint::black_box(Redactor::new(&values(n, salt)));
            }),
        ));
        let all = store.load().unwrap();
        // What each call made before the matcher was kept: one automaton over every form.
        rows.push((
            format!("the automaton of every form of {n} secrets alone (made per call before)"),
            time(30, || {
                let patterns: Vec<String> = all
                    .values()
                    .flat_map(|v| toolsmith::secrets::forms::forms(v))
                    .map(|(f, _)| f)
                    .collect();
                std::hint::black_box(
                    aho_corasick::AhoCorasick::builder()
                        .match_kind(aho_corasick::MatchKind::LeftmostLongest)
                        .build(&patterns)
                        .unwrap(),
                );
            }),
        ));
        let _ = Redactor::new(&all);
        rows.push((
            format!("Redactor::new, {n} secrets seen before"),
            time(200, || {
                std::hint::black_box(Redactor::new(&all));
            }),
        ));
        let redact = |r: Redactor| {
            let mut t = text.clone();
            let mut j = json.clone();
            r.result(&mut t, Some(&mut j));
            let l: Vec<String> = logs.iter().map(|l| r.text(l)).collect();
            std::hint::black_box((t, j, l));
        };
        rows.push((
            format!("per call, {n} secrets, matcher made per call (before): load, make, redact 4 KiB JSON result + 20 log lines"),
            time(100, || {
                let mut all = store.load().unwrap();
                salt += 1;
                // Values never seen: the matcher is made, as every call did before.
                all.insert("SECRET_0".into(), format!("unseen-value-{salt:08}-5b2d4680aa19c3e4b5d6f708"));
                redact(Redactor::new(&all));
            }),
        ));
        rows.push((
            format!("per call, {n} secrets, matcher kept (now): load, make, redact 4 KiB JSON result + 20 log lines"),
            time(200, || {
                redact(Redactor::new(&store.load().unwrap()));
            }),
        ));
    }
    let stored: Vec<(String, String)> = values(3, 0).into_iter().collect();
    let files: Vec<Vec<u8>> = (0..50)
        .map(|i| {
            format!(
                "# file {i}\n{}",
                "x = compute(a, b)  # a line of code\n".repeat(60)
            )
            .into_bytes()
        })
        .collect();
    rows.push((
        "commit scan, 50 files of 2 KiB, 3 stored secrets, matcher made per file (as before)"
            .into(),
        time(20, || {
            for (i, f) in files.iter().enumerate() {
                let scanner = toolsmith::secrets::commit_scan::Scanner::new(&stored);
                std::hint::black_box(scanner.bytes(&format!("tools/t/f{i}.py"), f));
            }
        }),
    ));
    rows.push((
        "commit scan, 50 files of 2 KiB, 3 stored secrets, one matcher per change".into(),
        time(20, || {
            let scanner = toolsmith::secrets::commit_scan::Scanner::new(&stored);
            for (i, f) in files.iter().enumerate() {
                std::hint::black_box(scanner.bytes(&format!("tools/t/f{i}.py"), f));
            }
        }),
    ));
    println!("\n| benchmark | median |\n|---|---|");
    for (name, d) in rows {
        println!("| {name} | {:.1} µs |", d.as_secs_f64() * 1e6);
    }
}
