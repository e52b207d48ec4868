//! Benchmarks of the toolbox spine; prints a table. Run: `cargo bench --bench spine`.
//!
//! Cold index of 1,000 and 10,000 tools, incremental re-index after one tool changed, a full
//! refresh that finds one change, and one commit with 1,000 tools present; then history at
//! scale (`scale`): 10,000 tools and 100,000 commits. `TOOLSMITH_BENCH_SCALE=only` runs just
//! the scale rows, `=search` just its search and server-memory rows, `=skip` leaves them out.

#[path = "spine/scale.rs"]
mod scale;

use std::path::Path;
use std::time::{Duration, Instant};
use toolsmith::index::Index;
use toolsmith::toolbox::{FileSpec, Toolbox};

fn manifest(name: &str, desc: &str) -> String {
    format!(
        "format = 1\nname = \"{name}\"\ndescription = \"{desc}\"\nkind = \"script\"\ntags = [\"bench\", \"text\"]\n\n[run]\nlanguage = \"python\"\nentry = \"main.py\"\n\n[input_schema]\ntype = \"object\"\nrequired = [\"text\"]\n[input_schema.properties.text]\ntype = \"string\"\ndescription = \"Input text\"\n\n[[examples]]\ninput = {{ text = \"a b\" }}\noutput = {{ words = 2 }}\n"
    )
}

fn populate(root: &Path, n: usize) {
    for i in 0..n {
        let dir = root.join("tools").join(format!("tool_{i:05}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("tool.toml"),
            manifest(
                &format!("tool_{i:05}"),
                &format!("Benchmark tool number {i}"),
            ),
        )
        .unwrap();
        std::fs::write(dir.join("main.py"), "print('{}')\n").unwrap();
    }
}

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

fn git(dir: &Path, args: &[&str]) {
    let ok = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok, "git {args:?}");
}

fn main() {
    let mode = std::env::var("TOOLSMITH_BENCH_SCALE").unwrap_or_default();
    if mode != "only" && mode != "search" {
        spine_rows();
    }
    if mode != "skip" {
        println!("\n| history at scale | measured | target |\n|---|---|---|");
        scale::rows(mode == "search");
    }
}

fn spine_rows() {
    let mut rows: Vec<(String, Duration, &str)> = Vec::new();
    for n in [1_000usize, 10_000] {
        let tmp = tempfile::tempdir().unwrap();
        populate(tmp.path(), n);
        let cold = time(5, || {
            let i = Index::build(tmp.path());
            assert_eq!(i.tools().count(), n);
        });
        rows.push((
            format!("cold index, {n} tools"),
            cold,
            if n == 10_000 { "≤ 1 s" } else { "" },
        ));
        let mut idx = Index::build(tmp.path());
        let target = tmp.path().join("tools/tool_00042/tool.toml");
        let mut k = 0;
        let one = time(21, || {
            k += 1;
            std::fs::write(&target, manifest("tool_00042", &format!("Changed {k}"))).unwrap();
            assert!(idx.reindex_tool("tool_00042"));
        });
        rows.push((
            format!("re-index one changed tool, {n} tools"),
            one,
            "≤ 5 ms",
        ));
        let refresh = time(5, || {
            k += 1;
            std::fs::write(&target, manifest("tool_00042", &format!("Changed {k}"))).unwrap();
            assert_eq!(idx.refresh().len(), 1);
        });
        rows.push((
            format!("refresh (stat all, re-read one), {n} tools"),
            refresh,
            "",
        ));
    }

    // One commit with 1,000 tools present.
    let tmp = tempfile::tempdir().unwrap();
    let tb = Toolbox::init(&tmp.path().join("box"), &[], "bench").unwrap();
    populate(tb.root(), 1_000);
    git(tb.root(), &["add", "-A"]);
    git(
        tb.root(),
        &[
            "-c",
            "user.name=b",
            "-c",
            "user.email=b@x",
            "commit",
            "-q",
            "-m",
            "1000 tools",
        ],
    );
    let mut k = 0;
    let commit = time(21, || {
        k += 1;
        let files = vec![
            FileSpec::new("tool.toml", manifest("tool_00007", &format!("Version {k}"))),
            FileSpec::new("main.py", format!("print({k})\n")),
        ];
        let out = tb.write_tool("tool_00007", &files, "bench").unwrap();
        assert!(out.commit.is_some());
    });
    rows.push((
        "write + commit one tool, 1000 tools".into(),
        commit,
        "≤ 20 ms",
    ));

    println!("\n| benchmark | median | target |\n|---|---|---|");
    for (name, d, target) in rows {
        println!("| {name} | {:.2} ms | {target} |", d.as_secs_f64() * 1000.0);
    }
}
