//! History, rollback, restore and session undo against a real toolbox, with real runners
//! (wasmtime, python) and the git CLI as the oracle after every step.

use crate::common;
use common::*;
use serde_json::json;
use std::path::Path;
use toolsmith::app::App;
use toolsmith::error::Hint;
use toolsmith::history::{self, HistoryError};
use toolsmith::runner::script::NoHost;
use toolsmith::toolbox::{Actor, Toolbox};

fn example() -> (tempfile::TempDir, Toolbox) {
    let tmp = tempfile::tempdir().unwrap();
    let tb = Toolbox::init(
        &tmp.path().join("box"),
        &toolsmith::toolbox::seed_files(),
        "test",
    )
    .unwrap();
    (tmp, tb)
}

/// json_format's main.py ends with this guard; a `run` defined just before it wins.
const MAIN_GUARD: &str = "if __name__ == \"__main__\":";

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} lacks {from:?}", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

fn head(tb: &Toolbox) -> String {
    git(tb.root(), &["rev-parse", "HEAD"]).trim().to_string()
}

async fn call(app: &App, name: &str, args: serde_json::Value) -> Result<serde_json::Value, String> {
    app.refresh();
    app.call(name, args, &NoHost)
        .await
        .map(|o| o.structured.unwrap_or(json!(o.text)))
        .map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn rollback_wasm_and_python_tools_then_call_the_old_behaviour() {
    let (_tmp, tb) = example();
    let app = App::new(
        tb.clone(),
        toolsmith::config::Config::from_env().expect("config"),
    );
    let v1 = head(&tb);
    assert_eq!(
        call(&app, "word_count", json!({"text": "a b"}))
            .await
            .unwrap()["words"],
        2
    );

    // v2 of word_count: a new description and a required argument the old callers lack.
    let wc = tb.tools_dir().join("word_count/tool.toml");
    edit(
        &wc,
        "Count the words, lines and characters of a text",
        "Count words (v2)",
    );
    edit(
        &wc,
        "required = [\"text\"]",
        "required = [\"text\", \"mode\"]",
    );
    tb.commit_tool("word_count", "update", "test", None)
        .unwrap();
    assert_clean(tb.root());
    let err = call(&app, "word_count", json!({"text": "a b"}))
        .await
        .unwrap_err();
    assert!(err.contains("mode"), "{err}");

    // v2 of json_format (Python): a different result.
    let py = tb.tools_dir().join("json_format/main.py");
    let original_py = std::fs::read_to_string(&py).unwrap();
    std::fs::write(
        &py,
        original_py.replace(
            MAIN_GUARD,
            &format!("def run(args, ctx):\n    return {{\"formatted\": \"v2\"}}\n\n{MAIN_GUARD}"),
        ),
    )
    .unwrap();
    tb.commit_tool("json_format", "update", "test", None)
        .unwrap();
    let out = call(&app, "json_format", json!({"json": "[1]"})).await;
    assert_eq!(
        out.as_ref().map(|v| v["formatted"].clone()),
        Ok(json!("v2")),
        "{out:?}"
    );

    // History and diff.
    let h = history::tool_history(&tb, "word_count", 10).unwrap();
    assert_eq!(h.len(), 2);
    assert_eq!(h[0].actor.as_deref(), Some("test"));
    assert!(h[0].message.starts_with("update word_count"), "{:?}", h[0]);
    assert_eq!(h[1].commit, v1);
    let d = history::diff_tool(&tb, "word_count", &v1, "HEAD").unwrap();
    assert!(d.unified.contains("-description = \"Count the words, lines and characters of a text\"\n+description = \"Count words (v2)\""), "{}", d.unified);
    assert_eq!(d.files.len(), 1);
    let at = history::tool_at(&tb, "word_count", &v1).unwrap();
    assert!(at.manifest_text().unwrap().contains("Count the words"));

    // Roll both back: new commits, history kept, the old behaviour is back.
    let before = commit_count(tb.root());
    let t0 = std::time::Instant::now();
    let r = history::rollback_tool(&tb, "word_count", &v1[..8], "test").unwrap();
    eprintln!("rollback of a wasm tool: {:?}", t0.elapsed());
    assert_clean(tb.root());
    assert!(r.commit.is_some());
    let art = r.artifact.expect("a wasm artifact check");
    assert!(art.verified && art.path == "tool.wasm");
    let r = history::rollback_tool(&tb, "json_format", &v1, "test").unwrap();
    assert!(r.artifact.is_none());
    assert_clean(tb.root());
    assert_eq!(commit_count(tb.root()), before + 2);
    assert_eq!(
        call(&app, "word_count", json!({"text": "a b c"}))
            .await
            .unwrap()["words"],
        3
    );
    let out = call(&app, "json_format", json!({"json": "[1]", "indent": 0}))
        .await
        .unwrap();
    assert_eq!(out["formatted"], "[1]");
    let log = git(tb.root(), &["log", "--format=%s", "-3"]);
    assert!(log.starts_with("rollback json_format: back to"), "{log}");
    assert!(
        git(tb.root(), &["log", "-1", "--format=%B"])
            .contains(&format!("as it was in commit {v1}"))
    );
    // Rolling back to the same version again changes nothing.
    assert_eq!(
        history::rollback_tool(&tb, "json_format", &v1, "test")
            .unwrap()
            .commit,
        None
    );
    assert_clean(tb.root());
}

#[test]
fn rollback_refuses_an_artifact_that_does_not_match_its_hash() {
    let (_tmp, tb) = example();
    // A commit made with plain git whose tool.wasm no longer matches its tool.toml.
    let wasm = tb.tools_dir().join("word_count/tool.wasm");
    let mut bytes = std::fs::read(&wasm).unwrap();
    bytes.push(0);
    std::fs::write(&wasm, bytes).unwrap();
    git(
        tb.root(),
        &[
            "-c",
            "user.name=p",
            "-c",
            "user.email=p@x",
            "commit",
            "-qam",
            "tamper",
        ],
    );
    let tampered = head(&tb);
    git(
        tb.root(),
        &[
            "-c",
            "user.name=p",
            "-c",
            "user.email=p@x",
            "revert",
            "--no-edit",
            "HEAD",
        ],
    );
    let before = commit_count(tb.root());
    let err = history::rollback_tool(&tb, "word_count", &tampered, "test").unwrap_err();
    assert!(
        matches!(err, HistoryError::ArtifactMismatch { .. }),
        "{err}"
    );
    assert!(err.hint().unwrap().contains("rebuild"));
    assert_eq!(commit_count(tb.root()), before);
    assert_clean(tb.root());
    // Unknown revisions say what to do.
    let err = history::rollback_tool(&tb, "word_count", "no-such-rev", "test").unwrap_err();
    assert!(err.hint().unwrap().contains("tool_history"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn delete_keeps_history_and_restore_brings_the_tool_back() {
    let (_tmp, tb) = example();
    let app = App::new(
        tb.clone(),
        toolsmith::config::Config::from_env().expect("config"),
    );
    tb.delete_tool("json_format", "test").unwrap();
    assert!(
        call(&app, "json_format", json!({"json": "1"}))
            .await
            .is_err()
    );
    let h = history::tool_history(&tb, "json_format", 10).unwrap();
    assert!(h[0].message.starts_with("delete json_format"));
    // Rolled back while absent = restored; restoring an existing tool is refused.
    let r = history::restore_tool(&tb, "json_format", None, "test").unwrap();
    assert!(r.commit.is_some());
    assert_clean(tb.root());
    assert_eq!(
        call(&app, "json_format", json!({"json": "[2]", "indent": 0}))
            .await
            .unwrap()["formatted"],
        "[2]"
    );
    let err = history::restore_tool(&tb, "json_format", None, "test").unwrap_err();
    assert!(matches!(err, HistoryError::Exists { .. }), "{err}");
    let err = history::restore_tool(&tb, "never_was", None, "test").unwrap_err();
    assert!(matches!(err, HistoryError::NoHistory { .. }), "{err}");
    assert!(git(tb.root(), &["log", "-1", "--format=%s"]).starts_with("restore json_format"));
}

fn session(id: &str) -> Actor {
    Actor {
        name: "ai-client".into(),
        session: Some(id.into()),
    }
}

#[test]
fn undo_session_reverts_one_sessions_commits_as_one_commit() {
    let (_tmp, tb) = example();
    let start = head(&tb);
    // Session s1: adds a tool, changes slugify, deletes roman_numeral.
    tb.write_tool(
        "fresh",
        &script_files("fresh", "A fresh tool"),
        session("s1"),
    )
    .unwrap();
    edit(
        &tb.tools_dir().join("slugify/tool.toml"),
        "Turn a text",
        "S1 turns a text",
    );
    tb.commit_tool("slugify", "update", session("s1"), None)
        .unwrap();
    tb.delete_tool("roman_numeral", session("s1")).unwrap();
    // Session s2 changes another tool, which must survive.
    edit(
        &tb.tools_dir().join("text_stats/tool.toml"),
        "description = \"",
        "description = \"S2: ",
    );
    tb.commit_tool("text_stats", "update", session("s2"), None)
        .unwrap();
    let s2_state = history::tool_at(&tb, "text_stats", "HEAD").unwrap().files;

    let before = commit_count(tb.root());
    let out = history::undo_session(&tb, "s1", session("s9")).unwrap();
    assert_clean(tb.root());
    assert_eq!(commit_count(tb.root()), before + 1);
    assert_eq!(out.reverted.len(), 3);
    let actions: Vec<_> = out
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.action))
        .collect();
    assert_eq!(
        actions,
        [
            ("fresh", "removed"),
            ("roman_numeral", "restored"),
            ("slugify", "restored")
        ]
    );
    for t in ["slugify", "roman_numeral"] {
        assert_eq!(
            history::tool_at(&tb, t, "HEAD").unwrap().files,
            history::tool_at(&tb, t, &start).unwrap().files
        );
    }
    assert!(!tb.tools_dir().join("fresh").exists());
    assert_eq!(
        history::tool_at(&tb, "text_stats", "HEAD").unwrap().files,
        s2_state
    );
    let msg = git(tb.root(), &["log", "-1", "--format=%B"]);
    assert!(
        msg.starts_with("undo-session s1: revert 3 commit(s)") && msg.contains("Session: s9"),
        "{msg}"
    );

    // A later change by someone else to a tool of the session: refused, nothing changed.
    edit(
        &tb.tools_dir().join("system_info/tool.toml"),
        "description = \"",
        "description = \"S3: ",
    );
    tb.commit_tool("system_info", "update", session("s3"), None)
        .unwrap();
    edit(
        &tb.tools_dir().join("system_info/tool.toml"),
        "S3: ",
        "Person: ",
    );
    tb.commit_tool("system_info", "update", "cli", None)
        .unwrap();
    let before = commit_count(tb.root());
    let err = history::undo_session(&tb, "s3", "cli").unwrap_err();
    assert!(matches!(err, HistoryError::Conflict { .. }), "{err}");
    assert_eq!(commit_count(tb.root()), before);
    assert!(matches!(
        history::undo_session(&tb, "nobody", "cli"),
        Err(HistoryError::NoSessionCommits { .. })
    ));
    assert_clean(tb.root());
}

#[tokio::test(flavor = "multi_thread")]
async fn plain_git_clone_change_pull_shows_the_new_behaviour() {
    let (tmp, tb) = example();
    let app = App::new(
        tb.clone(),
        toolsmith::config::Config::from_env().expect("config"),
    );
    let bare = tmp.path().join("shared.git");
    git(
        tmp.path(),
        &[
            "clone",
            "-q",
            "--bare",
            tb.root().to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
    );
    git(
        tb.root(),
        &["remote", "add", "origin", bare.to_str().unwrap()],
    );
    git(tb.root(), &["fetch", "-q", "origin"]);
    git(
        tb.root(),
        &["branch", "-q", "--set-upstream-to=origin/main"],
    );
    // Someone else clones, changes the Python tool and pushes.
    let other = tmp.path().join("other");
    git(
        tmp.path(),
        &[
            "clone",
            "-q",
            bare.to_str().unwrap(),
            other.to_str().unwrap(),
        ],
    );
    let py = other.join("tools/json_format/main.py");
    let text = std::fs::read_to_string(&py).unwrap();
    std::fs::write(
        &py,
        text.replace(
            MAIN_GUARD,
            &format!(
                "def run(args, ctx):\n    return {{\"formatted\": \"pulled\"}}\n\n{MAIN_GUARD}"
            ),
        ),
    )
    .unwrap();
    git(
        &other,
        &[
            "-c",
            "user.name=o",
            "-c",
            "user.email=o@x",
            "commit",
            "-qam",
            "change json_format",
        ],
    );
    git(&other, &["push", "-q", "origin", "HEAD:main"]);
    // Pull here: the pulled, unsigned change is held until a person trusts it (docs/team.md);
    // then the next call runs the new code.
    git(
        tb.root(),
        &[
            "-c",
            "user.name=p",
            "-c",
            "user.email=p@x",
            "pull",
            "-q",
            "--ff-only",
        ],
    );
    assert_clean(tb.root());
    let held = call(&app, "json_format", json!({"json": "1"})).await;
    assert!(
        held.as_ref().is_err_and(|e| e.contains("held")),
        "a pulled unsigned change is held: {held:?}"
    );
    toolsmith::trust::trust(&tb, "json_format").unwrap();
    assert_eq!(
        call(&app, "json_format", json!({"json": "1"}))
            .await
            .unwrap()["formatted"],
        "pulled"
    );
    // And roll it back through toolsmith: a new commit on top of the pulled history.
    let r = history::rollback_tool(&tb, "json_format", "HEAD~1", "test").unwrap();
    assert!(r.commit.is_some());
    assert_eq!(
        call(&app, "json_format", json!({"json": "1", "indent": 0}))
            .await
            .unwrap()["formatted"],
        "1"
    );
    assert_clean(tb.root());
    git(tb.root(), &["push", "-q", "origin", "HEAD:main"]);
}

/// The history memo (`.toolsmith/history-v2.bin`) answers like a full walk: on a history with
/// branches and merges made with the git CLI (a merge that combines two versions of a tool
/// changes it; one that takes a side's version unchanged does not), after a damaged memo
/// file, and after the branch is reset and grows again.
#[test]
fn tool_history_from_the_memo_matches_a_full_walk_across_merges() {
    let (_tmp, tb) = example();
    let root = tb.root();
    // A damaged memo is rebuilt, never trusted.
    std::fs::create_dir_all(root.join(".toolsmith")).unwrap();
    std::fs::write(root.join(".toolsmith/history-v2.bin"), b"TSHIST2\ngarbage").unwrap();
    let gitc = |args: &[&str]| {
        let mut all = vec!["-c", "user.name=t", "-c", "user.email=t@x"];
        all.extend_from_slice(args);
        git(root, &all)
    };
    let tools = ["slugify", "word_count", "json_format", "roman_numeral"];
    let check = |when: &str| {
        for name in tools {
            let memo: Vec<String> = history::tool_history(&tb, name, 1000)
                .unwrap()
                .into_iter()
                .map(|v| v.commit)
                .collect();
            let walk: Vec<String> = toolsmith::git::log(root, Some(&format!("tools/{name}")), 1000)
                .unwrap()
                .into_iter()
                .map(|c| c.id)
                .collect();
            assert_eq!(memo, walk, "{when}: {name}");
        }
        let limited = history::tool_history(&tb, "slugify", 1).unwrap();
        assert_eq!(limited.len(), 1, "{when}");
    };
    check("start");
    let memo = std::fs::read(root.join(".toolsmith/history-v2.bin")).unwrap();
    assert!(memo.len() > 16, "the memo was rewritten");

    let main = git(root, &["symbolic-ref", "--short", "HEAD"])
        .trim()
        .to_string();
    gitc(&["checkout", "-q", "-b", "side"]);
    edit(
        &root.join("tools/slugify/tool.toml"),
        "Turn a text",
        "Side: turn a text",
    );
    edit(
        &root.join("tools/json_format/tool.toml"),
        "description = \"",
        "description = \"Side ",
    );
    gitc(&["commit", "-qam", "side: slugify and json_format"]);
    gitc(&["checkout", "-q", &main]);
    std::fs::write(root.join("tools/slugify/NOTES.md"), "main's notes\n").unwrap();
    gitc(&["add", "-A"]);
    gitc(&["commit", "-qm", "main: slugify notes"]);
    check("before the merge");
    // slugify combines both sides (changed by the merge); json_format is side's unchanged.
    gitc(&["merge", "-q", "--no-ff", "-m", "merge side", "side"]);
    check("after the merge");
    let merge = head(&tb);
    let slug: Vec<String> = history::tool_history(&tb, "slugify", 10)
        .unwrap()
        .into_iter()
        .map(|v| v.commit)
        .collect();
    assert!(slug.contains(&merge), "{slug:?}");
    let json: Vec<String> = history::tool_history(&tb, "json_format", 10)
        .unwrap()
        .into_iter()
        .map(|v| v.commit)
        .collect();
    assert!(!json.contains(&merge), "{json:?}");

    // History rewritten under it: the memo only ever lacks commits.
    gitc(&["reset", "-q", "--hard", "HEAD~1"]);
    edit(
        &root.join("tools/word_count/tool.toml"),
        "Count the words",
        "Count (again) the words",
    );
    gitc(&["commit", "-qam", "word_count again"]);
    check("after a reset");
    assert_clean(root);

    // A shallow clone: the walk ends at the boundary instead of failing.
    let shallow = root.parent().unwrap().join("shallow");
    git(
        root.parent().unwrap(),
        &[
            "clone",
            "-q",
            "--depth",
            "2",
            &format!("file://{}", root.display()),
            shallow.to_str().unwrap(),
        ],
    );
    let sb = Toolbox::open(&shallow).unwrap();
    let v = history::tool_history(&sb, "word_count", 10).unwrap();
    assert!(!v.is_empty(), "{v:?}");
}
