//! Bounded inputs: an import's size and file-count caps (per tool and in total), description
//! and schema size caps (the cap in the error), and invisible or bidirectional characters
//! refused in descriptions and file names. Source repositories are built with git plumbing
//! (identical blobs are stored once, so large trees cost little to make).

use crate::common;
use common::*;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use toolsmith::share::{ImportRequest, import_tool};
use toolsmith::toolbox::FileSpec;

fn git_in(dir: &Path, args: &[&str], input: &[u8]) -> String {
    let mut c = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(input).unwrap();
    let out = c.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A repository whose `tools/` holds `tools` tool directories, each with a tool.toml and the
/// given (name, blob) files.
fn source_repo(dir: &Path, tools: usize, files: &[(String, String)]) {
    git(dir, &["init", "-q", "-b", "main"]);
    let mut tools_tree = String::new();
    for i in 0..tools {
        let name = format!("big{i}");
        let toml = script_manifest(&name, "Big");
        let toml_blob = git_in(dir, &["hash-object", "-w", "--stdin"], toml.as_bytes());
        let main = git_in(dir, &["hash-object", "-w", "--stdin"], b"print(1)\n");
        let mut entries =
            format!("100644 blob {toml_blob}\ttool.toml\n100644 blob {main}\tmain.py\n");
        for (file, blob) in files {
            entries.push_str(&format!("100644 blob {blob}\t{file}\n"));
        }
        let tree = git_in(dir, &["mktree"], entries.as_bytes());
        tools_tree.push_str(&format!("040000 tree {tree}\t{name}\n"));
    }
    let tools_tree = git_in(dir, &["mktree"], tools_tree.as_bytes());
    let root = git_in(
        dir,
        &["mktree"],
        format!("040000 tree {tools_tree}\ttools\n").as_bytes(),
    );
    let commit = git_in(dir, &["commit-tree", &root, "-m", "big"], b"");
    git(dir, &["update-ref", "refs/heads/main", &commit]);
}

fn blob(dir: &Path, size: usize) -> String {
    git_in(dir, &["hash-object", "-w", "--stdin"], &vec![b'x'; size])
}

fn import(
    tb: &toolsmith::toolbox::Toolbox,
    src: &Path,
) -> Result<toolsmith::share::ImportOutcome, toolsmith::share::ShareError> {
    import_tool(
        tb,
        &ImportRequest {
            source: src.display().to_string(),
            ..Default::default()
        },
        "t",
    )
}

#[test]
fn an_import_is_capped_in_size_and_file_count() {
    let (tmp, tb) = toolbox();
    let eight_mb = 8 * 1024 * 1024;

    // One tool over the per-tool total (5 x 8 MiB > 32 MiB).
    let src = tmp.path().join("one-big");
    std::fs::create_dir(&src).unwrap();
    git(&src, &["init", "-q"]);
    let b = blob(&src, eight_mb);
    let files: Vec<_> = (0..5)
        .map(|i| (format!("data{i}.bin"), b.clone()))
        .collect();
    source_repo(&src, 1, &files);
    let err = import(&tb, &src)
        .expect_err("one tool too large")
        .to_string();
    assert!(
        err.contains(&toolsmith::share::MAX_TOOL_BYTES.to_string()),
        "{err}"
    );

    // Every tool under its cap, the import over the total (6 x 24 MiB > 128 MiB).
    let src = tmp.path().join("many-big");
    std::fs::create_dir(&src).unwrap();
    git(&src, &["init", "-q"]);
    let b = blob(&src, eight_mb);
    let files: Vec<_> = (0..3)
        .map(|i| (format!("data{i}.bin"), b.clone()))
        .collect();
    source_repo(&src, 6, &files);
    let err = import(&tb, &src)
        .expect_err("the import too large")
        .to_string();
    assert!(
        err.contains("the import") && err.contains(&toolsmith::share::MAX_IMPORT_BYTES.to_string()),
        "{err}"
    );

    // Every tool under the per-tool file cap, the import over the total file count.
    let src = tmp.path().join("many-files");
    std::fs::create_dir(&src).unwrap();
    git(&src, &["init", "-q"]);
    let b = blob(&src, 3);
    let files: Vec<_> = (0..1500)
        .map(|i| (format!("f{i:04}.txt"), b.clone()))
        .collect();
    source_repo(&src, 4, &files);
    let err = import(&tb, &src).expect_err("too many files").to_string();
    assert!(
        err.contains("the import") && err.contains(&toolsmith::share::MAX_IMPORT_FILES.to_string()),
        "{err}"
    );

    // Nothing was written by any refused import.
    assert_eq!(
        std::fs::read_dir(tb.tools_dir())
            .unwrap()
            .filter(|e| e
                .as_ref()
                .is_ok_and(|e| !e.file_name().to_string_lossy().starts_with('.')))
            .count(),
        0
    );
    assert_clean(tb.root());
}

#[test]
fn descriptions_schemas_and_file_names_are_bounded_and_visible() {
    let (tmp, tb) = toolbox();
    let manifest =
        |description: &str| script_manifest("t", "PLACEHOLDER").replace("PLACEHOLDER", description);
    let index_errors = |files: Vec<FileSpec>| -> String {
        let dir = tmp.path().join("scratch");
        let _ = std::fs::remove_dir_all(&dir);
        toolsmith::toolbox::write_files(&dir.join("tools/t"), &files).unwrap();
        let idx = toolsmith::index::Index::build(&dir);
        let e = idx.get("t").expect("an entry");
        e.errors()
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("; ")
    };
    let main = FileSpec::new("main.py", "print(1)\n");

    let long = "word ".repeat(1000);
    let errs = index_errors(vec![
        FileSpec::new("tool.toml", manifest(&long)),
        main.clone(),
    ]);
    assert!(errs.contains("the limit is 4096"), "{errs}");

    let bidi = "Counts words \u{202E}txt.exe";
    let errs = index_errors(vec![
        FileSpec::new("tool.toml", manifest(bidi)),
        main.clone(),
    ]);
    assert!(errs.contains("U+202E"), "{errs}");

    let mut big_schema = manifest("Fine");
    for i in 0..3000 {
        big_schema.push_str(&format!(
            "[input_schema.properties.field_{i}]\ntype = \"string\"\ndescription = \"a field with a long enough description\"\n"
        ));
    }
    let errs = index_errors(vec![FileSpec::new("tool.toml", big_schema), main.clone()]);
    assert!(
        errs.contains(&format!("the limit is {}", 64 * 1024)),
        "{errs}"
    );

    // File names with invisible or bidirectional characters never reach the toolbox.
    let err = tb
        .write_tool(
            "t",
            &[
                FileSpec::new("tool.toml", manifest("Fine")),
                FileSpec::new("main\u{202E}yp.py", "print(1)\n"),
            ],
            "t",
        )
        .expect_err("bidi file name");
    assert!(err.to_string().contains("U+202E"), "{err}");
    assert!(!tb.tools_dir().join("t").exists());

    // Nor through an import.
    let src = tmp.path().join("bidi-src");
    std::fs::create_dir(&src).unwrap();
    git(&src, &["init", "-q"]);
    let b = blob(&src, 3);
    source_repo(&src, 1, &[("evil\u{2066}.py".to_string(), b)]);
    let err = import(&tb, &src)
        .expect_err("bidi file name in an import")
        .to_string();
    assert!(err.contains("invisible or bidirectional"), "{err}");
    assert_clean(tb.root());
}
