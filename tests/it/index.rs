//! The indexer, search, guide and manifest diagnostics on real trees.

use crate::common;
use common::*;
use std::path::Path;
use toolsmith::index::{Index, Status};
use toolsmith::manifest::{self, Severity};

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn a_broken_manifest_never_hides_the_others() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(
        root,
        "tools/good/tool.toml",
        &script_manifest("good", "A good tool"),
    );
    write(
        root,
        "tools/also_good/tool.toml",
        &script_manifest("also_good", "Another good tool"),
    );
    write(
        root,
        "tools/syntax/tool.toml",
        "name = \"syntax\"\ndescription = \"oops\nkind = \"script\"\n",
    );
    write(
        root,
        "tools/wrongkind/tool.toml",
        "name = \"wrongkind\"\ndescription = \"x\"\nkind = \"binary\"\n",
    );
    write(
        root,
        "tools/mismatch/tool.toml",
        &script_manifest("other_name", "Name differs"),
    );
    std::fs::create_dir_all(root.join("tools/empty")).unwrap();
    std::fs::create_dir_all(root.join("tools/Bad Name")).unwrap();

    let idx = Index::build(root);
    let good: Vec<_> = idx.tools().map(|t| t.manifest.name.as_str()).collect();
    assert_eq!(good, vec!["also_good", "good"]);
    let broken: Vec<_> = idx.broken().map(|e| e.name.as_str()).collect();
    assert_eq!(
        broken,
        vec!["Bad Name", "empty", "mismatch", "syntax", "wrongkind"]
    );

    let kind_err = &idx.get("wrongkind").unwrap().errors()[0];
    assert_eq!(kind_err.line, Some(3), "{kind_err}");
    assert!(
        kind_err.to_string().contains("binary") && kind_err.to_string().contains("wasm"),
        "{kind_err}"
    );
    let mismatch = &idx.get("mismatch").unwrap().errors()[0];
    assert_eq!(mismatch.field.as_deref(), Some("name"));
    assert_eq!(mismatch.line, Some(2));
    assert!(
        idx.get("empty").unwrap().errors()[0]
            .message
            .contains("no tool.toml")
    );
}

#[test]
fn reindexing_one_tool_and_refresh_follow_the_tree() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    for i in 0..5 {
        write(
            root,
            &format!("tools/t{i}/tool.toml"),
            &script_manifest(&format!("t{i}"), "Before"),
        );
    }
    let mut idx = Index::build(root);
    assert_eq!(idx.tools().count(), 5);
    assert!(idx.refresh().is_empty(), "nothing changed");

    write(
        root,
        "tools/t2/tool.toml",
        &script_manifest("t2", "After the edit"),
    );
    assert!(idx.reindex_tool("t2"));
    assert_eq!(
        idx.tool("t2").unwrap().manifest.description,
        "After the edit"
    );
    assert!(!idx.reindex_tool("t2"), "unchanged on a second look");

    std::fs::remove_dir_all(root.join("tools/t0")).unwrap();
    write(root, "tools/t9/tool.toml", &script_manifest("t9", "New"));
    write(root, "tools/t3/tool.toml", "broken = [");
    let changed = idx.refresh();
    assert_eq!(changed, vec!["t0", "t3", "t9"]);
    assert!(matches!(idx.get("t3").unwrap().status, Status::Broken(_)));
    // The index is a pure function of the tree: a fresh build agrees.
    let fresh = Index::build(root);
    let names = |i: &Index| {
        i.entries()
            .map(|e| {
                (
                    e.name.clone(),
                    e.tool().map(|t| t.manifest.description.clone()),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&idx), names(&fresh));
}

#[test]
fn schema_files_beside_the_manifest_are_resolved() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let m = "name = \"f\"\ndescription = \"Uses a schema file\"\nkind = \"script\"\ninput_schema_file = \"input.schema.json\"\n[run]\nlanguage = \"python\"\nentry = \"main.py\"\n";
    write(root, "tools/f/tool.toml", m);
    write(
        root,
        "tools/f/input.schema.json",
        r#"{"type":"object","properties":{"query":{"type":"string"}}}"#,
    );
    let idx = Index::build(root);
    let t = idx.tool("f").expect("valid");
    assert!(t.input_schema["properties"]["query"].is_object());
    write(root, "tools/f/input.schema.json", "not json");
    let mut idx = idx;
    idx.refresh();
    assert!(
        idx.get("f").unwrap().errors()[0]
            .message
            .contains("not valid JSON")
    );
}

#[test]
fn unknown_fields_warn_and_do_not_fail() {
    let text = format!(
        "colour = \"blue\"\n{}\n[limits]\ntimeout_ms = 5\nspeed = 3\n",
        script_manifest("w", "Warns")
    );
    let parsed = manifest::parse(Path::new("tools/w/tool.toml"), Some("w"), &text).expect("parses");
    let fields: Vec<_> = parsed
        .warnings
        .iter()
        .map(|w| w.field.clone().unwrap_or_default())
        .collect();
    assert!(
        fields.contains(&"colour".to_string()) && fields.contains(&"limits.speed".to_string()),
        "{fields:?}"
    );
    assert!(
        parsed
            .warnings
            .iter()
            .all(|w| w.severity == Severity::Warning)
    );
    let colour = parsed
        .warnings
        .iter()
        .find(|w| w.field.as_deref() == Some("colour"))
        .unwrap();
    assert_eq!(
        colour.line,
        Some(text.lines().position(|l| l.starts_with("colour")).unwrap() + 1)
    );
}

#[test]
fn diagnostics_name_file_line_field_and_what_is_allowed() {
    let cases: &[(&str, usize, &str, &str)] = &[
        (
            "name = \"x\"\ndescription = \"d\"\nkind = \"script\"\n[run]\nlanguage = \"cobol\"\nentry = \"m\"\n",
            5,
            "run.language",
            "python",
        ),
        (
            "name = \"x\"\ndescription = \"d\"\nkind = \"wasm\"\n[limits]\ntimeout_ms = 0\n",
            5,
            "limits.timeout_ms",
            "between",
        ),
        (
            "name = \"x\"\ndescription = \"d\"\nkind = \"wasm\"\n[limits]\ntimeout_ms = \"ten\"\n",
            5,
            "",
            "integer",
        ),
        (
            "name = \"../x\"\ndescription = \"d\"\nkind = \"wasm\"\n",
            1,
            "name",
            "allowed are",
        ),
        (
            "description = \"d\"\nkind = \"wasm\"\n",
            1,
            "name",
            "missing field",
        ),
        (
            "name = \"x\"\ndescription = \"d\"\nkind = \"pipeline\"\n",
            0,
            "steps",
            "at least one",
        ),
        (
            "name = \"x\"\ndescription = \"d\"\nkind = \"wasm\"\n[input_schema]\ntype = \"array\"\n",
            5,
            "input_schema.type",
            "object",
        ),
    ];
    for (text, line, field, needle) in cases {
        let errs =
            manifest::parse(Path::new("tools/x/tool.toml"), Some("x"), text).expect_err(text);
        let e = &errs[0];
        let shown = e.to_string();
        assert!(shown.starts_with("tools/x/tool.toml"), "{shown}");
        if *line > 0 {
            assert_eq!(e.line, Some(*line), "{shown}");
        }
        if !field.is_empty() {
            assert_eq!(e.field.as_deref(), Some(*field), "{shown}");
        }
        assert!(shown.contains(needle), "{shown} lacks {needle}");
        assert!(e.hint.is_some(), "{shown}");
    }
}

#[test]
fn search_ranks_names_over_descriptions_and_is_deterministic() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(
        root,
        "tools/word_count/tool.toml",
        &script_manifest("word_count", "Count words in a text"),
    );
    write(
        root,
        "tools/summarize/tool.toml",
        &script_manifest("summarize", "Summarize a text, counting sentences"),
    );
    write(
        root,
        "tools/http_get/tool.toml",
        &script_manifest("http_get", "Fetch a URL")
            .replace("tags = [\"test\"]", "tags = [\"network\", \"web\"]"),
    );
    let idx = Index::build(root);
    // The lexical ranking alone (tests/it/search.rs has the hybrid one).
    let off = toolsmith::search::Semantic::off();
    let search = |q: &str| toolsmith::search::search(&idx, &off, q, 10).results;
    let hits = search("count");
    assert_eq!(
        hits.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(),
        vec!["word_count", "summarize"]
    );
    assert!(hits[0].matched.contains(&"name"));
    assert_eq!(search("web")[0].name, "http_get");
    // Schema field names are searched too: every test manifest has a `text` argument.
    assert_eq!(search("text").len(), 3);
    assert_eq!(search("count"), search("count"));
    assert!(search("zzzz").is_empty());
    assert!(search("  ").is_empty());
}

#[test]
fn the_guide_lists_current_tools_and_broken_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let tb = toolsmith::toolbox::Toolbox::init(tmp.path(), &[], "test").unwrap();
    let root = tb.root();
    write(
        root,
        "tools/alpha/tool.toml",
        &script_manifest("alpha", "Does alpha things"),
    );
    write(root, "tools/beta/tool.toml", "nope");
    let view = toolsmith::trust::View::new(&tb, std::sync::Arc::new(Index::build(root)));
    let g = toolsmith::guide::render(&view, &Default::default());
    assert!(g.contains("| `alpha` | script |"), "{g}");
    assert!(g.contains("## Broken tools") && g.contains("`beta`"), "{g}");
    assert!(g.contains("call_tool") && g.contains("build_tool") && g.contains("register_script"));
}

#[test]
fn docs_schema_is_the_one_the_parser_uses() {
    let committed = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/tool.schema.json"),
    )
    .expect("docs/tool.schema.json exists");
    let committed: serde_json::Value = serde_json::from_str(&committed).unwrap();
    assert_eq!(
        committed,
        manifest::json_schema(),
        "docs/tool.schema.json is stale: run `cargo run -- schema > docs/tool.schema.json`"
    );
}

#[test]
fn every_example_and_template_manifest_is_valid_against_parser_and_schema() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR"));
    let idx = Index::build(&base.join("store-example"));
    assert!(
        idx.broken().next().is_none(),
        "broken example tools: {:?}",
        idx.broken()
            .map(|e| e.errors().to_vec())
            .collect::<Vec<_>>()
    );
    assert!(idx.tools().count() >= 6);
    let kinds: std::collections::BTreeSet<_> = idx.tools().map(|t| t.manifest.kind).collect();
    assert_eq!(kinds.len(), 3, "wasm, script and pipeline examples");
    for t in idx.tools() {
        assert!(
            t.warnings.is_empty(),
            "{}: {:?}",
            t.manifest.name,
            t.warnings
        );
        assert!(
            !t.manifest.examples.is_empty(),
            "{} has examples",
            t.manifest.name
        );
    }
    for lang in toolsmith::scaffold::languages() {
        let files = toolsmith::scaffold::render(lang, "demo", "A demo").unwrap();
        let (_, text, _) = files
            .iter()
            .find(|(p, _, _)| p == "tool.toml")
            .expect("a tool.toml");
        let parsed = manifest::parse(
            Path::new("tool.toml"),
            Some("demo"),
            std::str::from_utf8(text).unwrap(),
        );
        assert!(parsed.is_ok(), "template {lang}: {:?}", parsed.err());
    }
}

/// The JSON Schema editors use agrees with the parser: every manifest the parser accepts
/// validates, and type errors the parser rejects are rejected by the schema too.
#[test]
fn schema_and_parser_agree_on_real_and_broken_manifests() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR"));
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(base.join("docs/tool.schema.json")).unwrap())
            .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    let mut texts: Vec<(String, String)> = Vec::new();
    for e in walkdir::WalkDir::new(base.join("store-example/tools"))
        .into_iter()
        .filter_map(Result::ok)
    {
        if e.file_name() == "tool.toml" {
            texts.push((
                e.path().display().to_string(),
                std::fs::read_to_string(e.path()).unwrap(),
            ));
        }
    }
    for lang in toolsmith::scaffold::languages() {
        let files = toolsmith::scaffold::render(lang, "demo", "A demo").unwrap();
        let (_, t, _) = files
            .into_iter()
            .find(|(p, _, _)| p == "tool.toml")
            .unwrap();
        texts.push((format!("template {lang}"), String::from_utf8(t).unwrap()));
    }
    assert!(texts.len() >= 13);
    for (what, text) in &texts {
        let dir = if what.starts_with("template") {
            "demo".to_string()
        } else {
            Path::new(what)
                .parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        };
        assert!(
            manifest::parse(Path::new(what), Some(&dir), text).is_ok(),
            "{what} parses"
        );
        let json: serde_json::Value = toml::from_str(text).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&json)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{what} fails the schema: {errors:?}");
    }
    let broken = [
        "name = \"x\"\ndescription = \"d\"\nkind = \"binary\"\n",
        "name = \"x\"\ndescription = \"d\"\nkind = \"wasm\"\n[limits]\ntimeout_ms = \"ten\"\n",
        "name = \"x\"\ndescription = \"d\"\nkind = \"wasm\"\ntags = \"text\"\n",
        "description = \"d\"\nkind = \"wasm\"\n",
        "name = \"x\"\ndescription = \"d\"\nkind = \"script\"\n[run]\nprotocol = \"grpc\"\n",
    ];
    for text in broken {
        assert!(
            manifest::parse(Path::new("t.toml"), None, text).is_err(),
            "parser rejects {text}"
        );
        let json: serde_json::Value = toml::from_str(text).unwrap();
        assert!(!validator.is_valid(&json), "schema rejects {text}");
    }
}

/// Every example of every store-example tool passes with the real runners.
#[test]
fn store_example_tools_pass_their_examples() {
    let tmp = tempfile::tempdir().unwrap();
    let tb = toolsmith::toolbox::Toolbox::init(
        &tmp.path().join("box"),
        &toolsmith::toolbox::seed_files(),
        "test",
    )
    .unwrap();
    let app = toolsmith::app::App::new(tb, toolsmith::config::Config::from_env().expect("config"));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let idx = app.index();
    let mut ran = 0;
    for t in idx.tools() {
        let dir = app.toolbox.tools_dir().join(&t.manifest.name);
        let failures = rt.block_on(toolsmith::examples::check(
            &app,
            &dir,
            t,
            &toolsmith::runner::script::NoHost,
        ));
        assert!(
            failures.is_empty(),
            "{}: {}",
            t.manifest.name,
            failures
                .iter()
                .map(|f| f.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        );
        ran += t.manifest.examples.len();
    }
    assert!(ran >= 12, "ran {ran} examples");
}
