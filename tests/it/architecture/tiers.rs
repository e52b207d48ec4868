//! The tier picture is the workspace: every crate under its tier, no edge up a tier, the longest chain.

use super::*;

/// The workspace crates' direct dependencies on each other, as `cargo metadata` says (normal
/// dependencies; names without the `toolsmith-` prefix).
fn metadata_edges() -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
    let short = |n: &str| n.strip_prefix("toolsmith-").map(str::to_string);
    let packages = v["packages"].as_array().expect("packages");
    let ours: std::collections::BTreeSet<String> = packages
        .iter()
        .filter_map(|p| short(p["name"].as_str()?))
        .collect();
    packages
        .iter()
        .filter_map(|p| {
            let name = short(p["name"].as_str()?)?;
            let deps = p["dependencies"]
                .as_array()?
                .iter()
                .filter(|d| d["kind"].is_null())
                .filter_map(|d| short(d["name"].as_str()?))
                .filter(|d| ours.contains(d))
                .collect();
            Some((name, deps))
        })
        .collect()
}

/// ARCHITECTURE.md's tier picture is the workspace: every crate under the tier folder it is in,
/// with exactly its direct dependencies on other crates (`cargo metadata`); no dependency goes
/// up a tier; and the longest chain is the one the text gives (issue 42: it was 15).
#[test]
fn the_tier_picture_is_the_workspace() {
    use std::collections::{BTreeMap, BTreeSet};
    let arch = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let block = arch
        .split("```\ncrates/\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the tier picture (a block starting with `crates/`)");
    let mut pictured: BTreeMap<String, (String, BTreeSet<String>)> = BTreeMap::new();
    let mut tier = String::new();
    for line in block.lines() {
        if line.starts_with(|c: char| c.is_ascii_digit()) {
            tier = line.split_whitespace().next().unwrap_or("").to_string();
        } else if let Some(rest) = line.strip_prefix("  ") {
            let (name, deps) = rest.split_once("──▶").unwrap_or((rest, ""));
            pictured.insert(
                name.trim().to_string(),
                (
                    tier.clone(),
                    deps.split_whitespace().map(str::to_string).collect(),
                ),
            );
        }
    }
    let on_disk: BTreeMap<String, String> = tiered().into_iter().map(|(t, c)| (c, t)).collect();
    let edges = metadata_edges();
    let mut wrong = Vec::new();
    for (name, deps) in edges.iter().filter(|(n, _)| *n != "toolsmith") {
        match pictured.get(name) {
            None => wrong.push(format!("{name}: not in the picture")),
            Some((t, d)) => {
                if on_disk.get(name) != Some(t) {
                    wrong.push(format!(
                        "{name}: pictured in {t}, is in {:?}",
                        on_disk.get(name)
                    ));
                }
                if d != deps {
                    wrong.push(format!("{name}: pictured ──▶ {d:?}, cargo says {deps:?}"));
                }
            }
        }
    }
    for name in pictured.keys() {
        if !edges.contains_key(name) {
            wrong.push(format!("{name}: pictured, but no such crate"));
        }
    }
    assert!(
        wrong.is_empty(),
        "ARCHITECTURE.md's tier picture:\n{}",
        wrong.join("\n")
    );
    // No edge goes up: a tier's number is at least its dependencies'.
    let rank = |c: &str| on_disk.get(c).cloned().unwrap_or_default();
    let up: Vec<String> = edges
        .iter()
        .filter(|(n, _)| *n != "toolsmith")
        .flat_map(|(n, ds)| {
            ds.iter()
                .filter(|d| rank(d) > rank(n))
                .map(move |d| format!("{n} ({}) ──▶ {d} ({})", rank(n), rank(d)))
        })
        .collect();
    assert!(up.is_empty(), "dependencies that go up a tier: {up:?}");
    // The longest chain, as the text says it.
    fn longest(
        n: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        memo: &mut BTreeMap<String, Vec<String>>,
    ) -> Vec<String> {
        if let Some(c) = memo.get(n) {
            return c.clone();
        }
        let mut best = vec![n.to_string()];
        for d in edges.get(n).into_iter().flatten() {
            let mut c = vec![n.to_string()];
            c.extend(longest(d, edges, memo));
            if c.len() > best.len() {
                best = c;
            }
        }
        memo.insert(n.to_string(), best.clone());
        best
    }
    let mut memo = BTreeMap::new();
    let chain = longest("mcp", &edges, &mut memo);
    let said = format!("{} crates, `{}`", chain.len(), chain.join(" → "));
    assert!(
        arch.replace('\n', " ").contains(&said),
        "ARCHITECTURE.md should give the longest chain as: {said}"
    );
    assert!(chain.len() <= 9, "the tower grew back: {said}");
}
