//! The code map names every module, and modules import without cycles.

use super::*;

#[test]
fn the_code_map_names_every_module() {
    let arch = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).expect("src/lib.rs");
    // `pub mod x;`, and `pub use toolsmith_x as x;` for a module that is a crate of its own.
    let modules: Vec<&str> = lib
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            l.strip_prefix("pub mod ").or_else(|| {
                l.strip_prefix("pub use toolsmith_")
                    .and_then(|r| r.split(" as ").nth(1))
            })
        })
        .map(|m| m.trim_end_matches(';'))
        .collect();
    assert!(modules.len() > 5, "no modules found in src/lib.rs");
    let missing: Vec<_> = modules
        .iter()
        .filter(|m| !arch.contains(&format!("`{m}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md's code map does not name: {missing:?}"
    );
    // And every module the map names exists.
    let named: Vec<String> = arch
        .lines()
        .filter(|l| l.starts_with("| `"))
        .flat_map(|l| {
            l.split('|')
                .nth(1)
                .unwrap_or("")
                .split(',')
                .map(|s| s.trim().trim_matches('`').to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    let src = root().join("src");
    let exists = |m: &str| {
        // A module that is a crate: `crates/<first>/src/<rest>`.
        let (first, rest) = m.split_once("::").unwrap_or((m, ""));
        let (dir, rel) = if crates().iter().any(|c| c == first) {
            let dir = crate_dir(first).join("src");
            if rest.is_empty() {
                return dir.join("lib.rs").exists();
            }
            (dir, rest.replace("::", "/"))
        } else {
            (src.clone(), m.replace("::", "/"))
        };
        Path::new(&dir.join(format!("{rel}.rs"))).exists() || dir.join(&rel).is_dir()
    };
    let gone: Vec<_> = named.iter().filter(|m| !exists(m)).collect();
    assert!(
        gone.is_empty(),
        "ARCHITECTURE.md names modules that do not exist: {gone:?}"
    );
}

/// The top-level module a source file belongs to (`src/cli/doctor.rs` → `cli`).
fn top_module(path: &str) -> Option<String> {
    let rest = path.strip_prefix("src/")?;
    let first = rest.split('/').next()?;
    let m = first.strip_suffix(".rs").unwrap_or(first);
    (m != "lib" && m != "main").then(|| m.to_string())
}

/// The names at the start of the items of a `use` group's body, split at its top level
/// (`a, b::c, d::{e, f}` → a, b, d).
fn listed(body: &str) -> Vec<String> {
    let mut items = vec![String::new()];
    let mut depth = 0usize;
    for c in body.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => items.push(String::new()),
            _ if depth == 0 => items.last_mut().expect("one item").push(c),
            _ => {}
        }
    }
    items
        .iter()
        .map(|item| ident(item.trim()))
        .filter(|n| !n.is_empty())
        .collect()
}

/// The identifier `text` starts with.
fn ident(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// The names following `prefix` in `code`: `prefix` `name`, and each name of a grouped list
/// `prefix` `{a, b::{c, d}}` (its top level: a, b).
fn named_after(code: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices(prefix) {
        let rest = &code[i + prefix.len()..];
        if let Some(body) = rest.strip_prefix('{') {
            // The group ends at the brace that closes it.
            let mut depth = 1usize;
            let end = body
                .char_indices()
                .find(|&(_, c)| {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                })
                .map_or(body.len(), |(j, _)| j);
            out.extend(listed(&body[..end]));
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out
}

/// The top-level modules one file's code (tests excluded) names through `crate::`.
fn uses(text: &str) -> std::collections::BTreeSet<String> {
    let code = code_only(text);
    let code = match code.find("#[cfg(test)]") {
        Some(i) => &code[..i],
        None => &code,
    };
    named_after(code, "crate::").into_iter().collect()
}

#[test]
fn grouped_use_lists_are_read() {
    let found = uses(
        "use crate::{index::Tool, runner, toolbox::{Toolbox, FileSpec}};\nfn f() { crate::app::x() }",
    );
    assert_eq!(
        found.into_iter().collect::<Vec<_>>(),
        ["app", "index", "runner", "toolbox"]
    );
}

/// The first cycle in a module graph, if any (a depth-first search meeting a module still on
/// its stack).
fn find_cycle(
    graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
) -> Option<Vec<String>> {
    use std::collections::{BTreeMap, BTreeSet};
    fn visit(
        m: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|s| s == m) {
            let mut cycle = stack[i..].to_vec();
            cycle.push(m.to_string());
            return Some(cycle);
        }
        if done.contains(m) {
            return None;
        }
        stack.push(m.to_string());
        for d in g.get(m).into_iter().flatten() {
            if let Some(c) = visit(d, g, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|m| visit(m, graph, &mut Vec::new(), &mut done))
}

/// No import cycles between top-level modules: each module's dependencies form a DAG, so
/// each can be understood (and tested) from the ones below it.
#[test]
fn top_level_modules_have_no_import_cycles() {
    use std::collections::{BTreeMap, BTreeSet};
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (p, t) in sources() {
        let Some(m) = top_module(&p) else { continue };
        let deps = graph.entry(m.clone()).or_default();
        for u in uses(&t) {
            if u != m {
                deps.insert(u);
            }
        }
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!(
            "import cycle between top-level modules: {}; move what both need below them",
            cycle.join(" → ")
        );
    }
}

/// The module path of a source file (`crates/8-surfaces/mcp/src/tools/core.rs` → `mcp::tools::core`; a crate's
/// `crates/3-storage/git/src/locks.rs` → `git::locks`, its root `lib.rs` → `git`), and whether it is in
/// a crate of its own (there `crate::` names the crate's root, `git`).
fn module_path(path: &str) -> Option<(Vec<String>, bool)> {
    let (mut parts, in_crate) = if let Some(rest) = path.strip_prefix("crates/") {
        let (tier_krate, file) = rest.split_once("/src/")?;
        let krate = tier_krate.rsplit('/').next()?;
        let file = file.strip_suffix(".rs")?;
        let mut parts = vec![krate.to_string()];
        if file != "lib" {
            parts.extend(file.split('/').map(str::to_string));
        }
        (parts, true)
    } else {
        let rest = path.strip_prefix("src/")?.strip_suffix(".rs")?;
        let parts: Vec<String> = rest.split('/').map(str::to_string).collect();
        if parts.first().is_some_and(|f| f == "lib" || f == "main") {
            return None;
        }
        (parts, false)
    };
    if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    Some((parts, in_crate))
}

/// Nor between sibling modules (`mcp::handler` and `mcp::host`, `cli::commands` and the other
/// `cli` files): what two siblings share lives in a third they both use.
#[test]
fn sibling_modules_have_no_import_cycles() {
    use std::collections::{BTreeMap, BTreeSet};
    let files: Vec<(Vec<String>, bool, String)> = sources()
        .into_iter()
        .filter_map(|(p, t)| module_path(&p).map(|(m, c)| (m, c, t)))
        .collect();
    // parent path → (child → children it uses).
    let mut graphs: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (m, _, _) in &files {
        if m.len() >= 2 {
            let (parent, child) = m.split_at(m.len() - 1);
            graphs
                .entry(parent.to_vec())
                .or_default()
                .entry(child[0].clone())
                .or_default();
        }
    }
    for (m, in_crate, text) in &files {
        let code = code_only(text);
        let code = match code.find("#[cfg(test)]") {
            Some(i) => code[..i].to_string(),
            None => code,
        };
        // Every ancestor P of this file, with the child of P the file lies in.
        for depth in 1..m.len() {
            let (parent, rest) = m.split_at(depth);
            let me = &rest[0];
            let Some(graph) = graphs.get_mut(parent) else {
                continue;
            };
            let siblings: Vec<String> = graph.keys().cloned().collect();
            // In a crate of its own, `crate::` is the crate's root (`parent[0]`).
            let inner = if *in_crate { &parent[1..] } else { parent };
            let mut prefixes = vec![if inner.is_empty() {
                "crate::".to_string()
            } else {
                format!("crate::{}::", inner.join("::"))
            }];
            if rest.len() == 1 {
                prefixes.push("super::".to_string());
            }
            for prefix in prefixes {
                for name in named_after(&code, &prefix) {
                    if &name != me && siblings.contains(&name) {
                        graph.entry(me.clone()).or_default().insert(name);
                    }
                }
            }
        }
    }
    let cycles: Vec<String> = graphs
        .iter()
        .filter_map(|(parent, g)| {
            find_cycle(g).map(|c| format!("in {}: {}", parent.join("::"), c.join(" → ")))
        })
        .collect();
    assert!(
        cycles.is_empty(),
        "import cycles between sibling modules (move what both need into a third):\n{}",
        cycles.join("\n")
    );
}
