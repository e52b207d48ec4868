//! Retrieval quality of `search_tools` on public tool-retrieval sets; prints a table.
//! Run: `cargo bench --bench retrieval`.
//!
//! Each set (`benches/retrieval/data/*.json`, made by `benches/retrieval/convert_gorilla.py`
//! from the Gorilla repository, Apache-2.0: see `benches/retrieval/README.md`) is written out as
//! a toolbox of script tools (one `tool.toml` each: name, description, input schema with the
//! fields' descriptions) and indexed as a server would. Each query must find its one tool:
//! Recall@1, Recall@5 and MRR@10, next to a plain Okapi BM25 over name + description (k1 1.2,
//! b 0.75) in the same run. Rows: that baseline, toolsmith's lexical ranking (BM25F), the
//! built-in embeddings alone and fused (the default), and, when a local model directory is
//! given (`TOOLSMITH_BENCH_MODEL_DIR`, else `target/models/minilm/.../model` from
//! `scripts/setup.sh`; `none`: skip it), the same with it. `TOOLSMITH_BENCH_SETS=bfcl,apibench_hf` picks sets;
//! `TOOLSMITH_BENCH_EXTRA=DIR` adds the sets of DIR (a query's `tool` may list several: any of
//! them counts); `TOOLSMITH_BENCH_FUSIONS=1` compares ways of fusing the two rankings.

use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;
use toolsmith::config::Embeddings;
use toolsmith::index::Index;
use toolsmith::search::{self, Semantic};

struct Set {
    name: String,
    tools: Vec<Value>,
    /// The query and the tools that serve it (one in the committed sets).
    queries: Vec<(String, Vec<String>)>,
}

fn load(path: &Path) -> Set {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut tools = v["tools"].as_array().unwrap().clone();
    // Names toolsmith reserves (`pipeline`, `sync`...) get a suffix.
    let mut renamed: HashMap<String, String> = HashMap::new();
    for t in &mut tools {
        let name = t["name"].as_str().unwrap().to_string();
        if toolsmith::names::validate(&name).is_err() {
            let new = format!("{name}_tool");
            t["name"] = Value::String(new.clone());
            renamed.insert(name, new);
        }
    }
    Set {
        name: path.file_stem().unwrap().to_string_lossy().into_owned(),
        tools,
        queries: v["queries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| {
                let tools: Vec<&str> = match &q["tool"] {
                    Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                    v => vec![v.as_str().unwrap()],
                };
                let tools = tools
                    .into_iter()
                    .map(|t| renamed.get(t).cloned().unwrap_or_else(|| t.to_string()))
                    .collect();
                (q["text"].as_str().unwrap().to_string(), tools)
            })
            .collect(),
    }
}

/// Text a manifest accepts: no control, invisible or bidirectional characters, at most `max`.
fn clean(s: &str, max: usize) -> String {
    let t: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .filter(
            |c| !matches!(*c as u32, 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F | 0xFEFF),
        )
        .collect();
    let t = t.trim();
    let mut out: String = t.chars().take(max).collect();
    if out.is_empty() {
        out = "no description".into();
    }
    out
}

/// Write the set as a toolbox of script tools.
fn toolbox(set: &Set, root: &Path) {
    for t in &set.tools {
        let name = t["name"].as_str().unwrap();
        let dir = root.join("tools").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let mut props = toml::Table::new();
        for f in t["fields"].as_array().unwrap() {
            let fname = f[0].as_str().unwrap();
            if fname.is_empty() || props.contains_key(fname) {
                continue;
            }
            let mut p = toml::Table::new();
            p.insert("type".into(), "string".into());
            let d = clean(f[1].as_str().unwrap_or(""), 500);
            p.insert("description".into(), d.into());
            props.insert(fname.to_string(), p.into());
        }
        let mut schema = toml::Table::new();
        schema.insert("type".into(), "object".into());
        schema.insert("properties".into(), props.into());
        let mut run = toml::Table::new();
        run.insert("language".into(), "python".into());
        run.insert("entry".into(), "main.py".into());
        let mut m = toml::Table::new();
        m.insert("format".into(), 1.into());
        m.insert("name".into(), name.into());
        m.insert(
            "description".into(),
            clean(t["description"].as_str().unwrap_or(""), 4000).into(),
        );
        m.insert("kind".into(), "script".into());
        m.insert("run".into(), run.into());
        m.insert("input_schema".into(), schema.into());
        std::fs::write(dir.join("tool.toml"), toml::to_string(&m).unwrap()).unwrap();
        std::fs::write(dir.join("main.py"), "print('{}')\n").unwrap();
    }
}

#[derive(Default, Clone, Copy)]
struct Score {
    r1: f64,
    r5: f64,
    mrr: f64,
    n: usize,
}

impl Score {
    fn add(&mut self, rank: Option<usize>) {
        self.n += 1;
        if let Some(r) = rank {
            self.r1 += f64::from(u8::from(r < 1));
            self.r5 += f64::from(u8::from(r < 5));
            if r < 10 {
                self.mrr += 1.0 / (r as f64 + 1.0);
            }
        }
    }
    fn row(&self) -> String {
        let n = self.n.max(1) as f64;
        format!(
            "{:.3} | {:.3} | {:.3}",
            self.r1 / n,
            self.r5 / n,
            self.mrr / n
        )
    }
}

/// Plain Okapi BM25 over name words + description (the baseline of issue 26).
struct Bm25 {
    docs: Vec<HashMap<String, u32>>,
    lens: Vec<f64>,
    df: HashMap<String, u32>,
    avg: f64,
}

fn plain_tokens(s: &str) -> Vec<String> {
    s.to_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

impl Bm25 {
    fn new(names: &[String], texts: &[String]) -> Bm25 {
        let mut docs = Vec::new();
        let mut lens = Vec::new();
        let mut df: HashMap<String, u32> = HashMap::new();
        for (n, t) in names.iter().zip(texts) {
            let toks = plain_tokens(&format!("{} {t}", n.replace('_', " ")));
            let mut tf: HashMap<String, u32> = HashMap::new();
            for w in &toks {
                *tf.entry(w.clone()).or_default() += 1;
            }
            for w in tf.keys() {
                *df.entry(w.clone()).or_default() += 1;
            }
            lens.push(toks.len() as f64);
            docs.push(tf);
        }
        let avg = lens.iter().sum::<f64>() / lens.len().max(1) as f64;
        Bm25 {
            docs,
            lens,
            df,
            avg,
        }
    }
    fn rank(&self, q: &str) -> Vec<usize> {
        let n = self.docs.len() as f64;
        let mut terms = plain_tokens(q);
        terms.sort();
        terms.dedup();
        let mut s: Vec<(f64, usize)> = (0..self.docs.len())
            .map(|d| {
                let mut score = 0.0;
                for t in &terms {
                    let Some(&f) = self.docs[d].get(t) else {
                        continue;
                    };
                    let df = f64::from(self.df[t]);
                    let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                    let f = f64::from(f);
                    score += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * self.lens[d] / self.avg));
                }
                (score, d)
            })
            .filter(|x| x.0 > 0.0)
            .collect();
        s.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        s.into_iter().map(|x| x.1).take(10).collect()
    }
}

fn model_dir() -> Option<PathBuf> {
    if let Ok(d) = std::env::var("TOOLSMITH_BENCH_MODEL_DIR") {
        return (d != "none").then(|| PathBuf::from(d));
    }
    let d =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/models/minilm/all_minilm_l6_v2/model");
    d.join("model.safetensors").exists().then_some(d)
}

fn main() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/retrieval/data");
    let only: Option<Vec<String>> = std::env::var("TOOLSMITH_BENCH_SETS")
        .ok()
        .map(|s| s.split(',').map(str::to_string).collect());
    // Sets that may not be redistributed, kept outside git, in the same format.
    let extra = std::env::var_os("TOOLSMITH_BENCH_EXTRA").map(PathBuf::from);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&data)
        .unwrap()
        .chain(extra.iter().flat_map(|d| std::fs::read_dir(d).unwrap()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter(|p| {
            only.as_ref().is_none_or(|o| {
                o.iter()
                    .any(|n| p.file_stem().is_some_and(|s| s.to_string_lossy() == *n))
            })
        })
        .collect();
    paths.sort();
    let mut sources: Vec<(&str, Embeddings)> = vec![("built-in", Embeddings::Builtin)];
    if let Some(dir) = model_dir() {
        sources.push(("local all-MiniLM-L6-v2", Embeddings::Local { dir }));
    }
    let cache = tempfile::tempdir().unwrap();
    println!("\n| set | tools | queries | ranking | Recall@1 | Recall@5 | MRR@10 | ms/query |");
    println!("|---|---|---|---|---|---|---|---|");
    for path in paths {
        let set = load(&path);
        let tmp = tempfile::tempdir().unwrap();
        toolbox(&set, tmp.path());
        let index = Index::build(tmp.path());
        let broken: Vec<_> = index.broken().map(|e| e.name.clone()).collect();
        assert!(
            broken.is_empty(),
            "broken tools in {}: {broken:?}",
            set.name
        );
        let si = index.search_index();
        let names: Vec<String> = si.docs.iter().map(|d| d.name.clone()).collect();
        let pos: HashMap<&str, usize> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i))
            .collect();
        let descs: Vec<String> = set
            .tools
            .iter()
            .map(|t| clean(t["description"].as_str().unwrap_or(""), 4000))
            .collect();
        let by_name: HashMap<&str, usize> = set
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t["name"].as_str().unwrap(), i))
            .collect();
        let texts: Vec<String> = names
            .iter()
            .map(|n| descs[by_name[n.as_str()]].clone())
            .collect();
        let row = |label: &str, score: Score, ms: f64| {
            println!(
                "| {} | {} | {} | {label} | {} | {ms:.2} |",
                set.name,
                names.len(),
                set.queries.len(),
                score.row()
            );
        };

        let bm25 = Bm25::new(&names, &texts);
        let t = Instant::now();
        let mut s = Score::default();
        for (q, want) in &set.queries {
            let w: Vec<usize> = want.iter().map(|t| pos[t.as_str()]).collect();
            s.add(bm25.rank(q).iter().position(|d| w.contains(d)));
        }
        row(
            "Okapi BM25, name + description (baseline)",
            s,
            t.elapsed().as_secs_f64() * 1e3 / set.queries.len() as f64,
        );

        let run = |label: &str, sem: &Semantic| {
            let t = Instant::now();
            let mut s = Score::default();
            for (q, want) in &set.queries {
                let hits = search::search(&index, sem, q, 10);
                s.add(hits.results.iter().position(|h| want.contains(&h.name)));
            }
            row(
                label,
                s,
                t.elapsed().as_secs_f64() * 1e3 / set.queries.len() as f64,
            );
        };
        run("toolsmith lexical (BM25F)", &Semantic::off());
        for (label, choice) in &sources {
            let sem = Semantic::new(choice.clone(), cache.path(), Some(cache.path()));
            let t = Instant::now();
            sem.prepare(si);
            let embed_s = t.elapsed().as_secs_f64();
            eprintln!(
                "{}: {label}: embedded {} tools in {embed_s:.2} s",
                set.name,
                names.len()
            );
            let t = Instant::now();
            let mut s = Score::default();
            for (q, want) in &set.queries {
                let w: Vec<u32> = want.iter().map(|t| pos[t.as_str()] as u32).collect();
                let ranked = sem.rank(si, q).map(|r| r.hits).unwrap_or_default();
                s.add(ranked.iter().take(10).position(|(d, _)| w.contains(d)));
            }
            row(
                &format!("{label} embeddings alone"),
                s,
                t.elapsed().as_secs_f64() * 1e3 / set.queries.len() as f64,
            );
            run(&format!("hybrid: BM25F + {label}"), &sem);
            if std::env::var_os("TOOLSMITH_BENCH_FUSIONS").is_some() {
                fusions(&set, si, &sem, &pos, label);
            }
        }
    }
}

/// Other ways of fusing the two rankings, side by side (`TOOLSMITH_BENCH_FUSIONS=1`).
fn fusions(
    set: &Set,
    si: &toolsmith::index::SearchIndex,
    sem: &Semantic,
    pos: &HashMap<&str, usize>,
    label: &str,
) {
    type Ranked = Vec<(u32, f32)>;
    let lists: Vec<(Ranked, Ranked, Vec<u32>)> = set
        .queries
        .iter()
        .map(|(q, want)| {
            let lex: Vec<(u32, f32)> = si.rank(q, 100).iter().map(|h| (h.doc, h.score)).collect();
            let s = sem.rank(si, q).map(|r| r.hits).unwrap_or_default();
            (
                lex,
                s,
                want.iter().map(|t| pos[t.as_str()] as u32).collect(),
            )
        })
        .collect();
    type Fuse = Box<dyn Fn(&[(u32, f32)], &[(u32, f32)]) -> Vec<u32>>;
    let rrf = |k: f32, wl: f32, ws: f32| -> Fuse {
        Box::new(move |l: &[(u32, f32)], s: &[(u32, f32)]| {
            let mut m: HashMap<u32, f32> = HashMap::new();
            for (r, (d, _)) in l.iter().enumerate() {
                *m.entry(*d).or_default() += wl / (k + r as f32 + 1.0);
            }
            for (r, (d, _)) in s.iter().enumerate() {
                *m.entry(*d).or_default() += ws / (k + r as f32 + 1.0);
            }
            let mut v: Vec<(u32, f32)> = m.into_iter().collect();
            v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            v.into_iter().map(|x| x.0).collect()
        })
    };
    let convex = |alpha: f32| -> Fuse {
        Box::new(move |l: &[(u32, f32)], s: &[(u32, f32)]| {
            let mut m: HashMap<u32, f32> = HashMap::new();
            let lmax = l.first().map_or(1.0, |x| x.1).max(1e-6);
            for (d, sc) in l {
                *m.entry(*d).or_default() += alpha * sc / lmax;
            }
            let smax = s.first().map_or(1.0, |x| x.1);
            let smin = s.last().map_or(0.0, |x| x.1);
            for (d, sc) in s {
                *m.entry(*d).or_default() += (1.0 - alpha) * (sc - smin) / (smax - smin).max(1e-6);
            }
            let mut v: Vec<(u32, f32)> = m.into_iter().collect();
            v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            v.into_iter().map(|x| x.0).collect()
        })
    };
    let variants: Vec<(String, Fuse)> = vec![
        ("rrf k60".into(), rrf(60.0, 1.0, 1.0)),
        ("rrf k60 sem x1.5".into(), rrf(60.0, 1.0, 1.5)),
        ("rrf k60 sem x2".into(), rrf(60.0, 1.0, 2.0)),
        ("rrf k20".into(), rrf(20.0, 1.0, 1.0)),
        ("rrf k10".into(), rrf(10.0, 1.0, 1.0)),
        ("convex 0.3".into(), convex(0.3)),
        ("convex 0.5".into(), convex(0.5)),
        ("convex 0.7".into(), convex(0.7)),
    ];
    for (name, f) in variants {
        let mut sc = Score::default();
        for (l, s, want) in &lists {
            sc.add(f(l, s).iter().take(10).position(|d| want.contains(d)));
        }
        println!(
            "| {} | | | fusion {name}, {label} | {} | |",
            set.name,
            sc.row()
        );
    }
}
