//! The trust policy: a tool whose current version arrived from elsewhere (sync, `git pull`,
//! import, update) and is not signed by an allowed key is **held** — listed by name, but nothing of
//! it reaches the model (`View`: what every surface showing tools reads) and its calls are
//! refused until a person on this machine reviews it (`toolsmith review NAME`) and trusts it
//! (`toolsmith trust NAME`). See docs/trust.md for the threat model.
//!
//! A tool's current version is its tree at HEAD (`tools/<name>`). It is trusted when
//! 1. this machine's record holds that exact tree (toolsmith wrote it here, a person trusted it,
//!    or it was there when toolsmith first opened the toolbox here — `toolbox::Trusted`); or
//! 2. the commit that brought it (the last to change the tool) has one parent and either was
//!    made here with `git commit` (HEAD's reflog says so) or carries an SSH signature that
//!    verifies against the `allowed_signers` this machine accepts (`evidence`).
//!
//! Everything else is held: a merge that combined both sides' changes of one tool, an
//! unsigned commit, a signature by a key not allowed. Nothing an AI can call records trust:
//! only the `trust` command does.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The crates below, under the names the code map gives them.
use toolsmith_error as error;
use toolsmith_git as git;
use toolsmith_index as index;
use toolsmith_names as names;
use toolsmith_toolbox as toolbox;
use toolsmith_versions as versions;

mod evidence;
mod view;

use crate::index::TOOLS_DIR;
use crate::toolbox::Toolbox;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Mutex;

pub use evidence::Commit;
pub use view::{Open, Shown, View, Withheld};

/// What went wrong while judging trust.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// The git CLI failed (reflog, signature checks).
    #[error("git failed: {0}")]
    Git(String),
    /// The toolbox could not be read.
    #[error(transparent)]
    Toolbox(#[from] crate::toolbox::ToolboxError),
    /// Its history could not be read.
    #[error(transparent)]
    Versions(#[from] crate::versions::VersionsError),
    /// No tool of that name at HEAD.
    #[error("there is no committed tool named {0:?}")]
    NoSuchTool(String),
}

impl From<crate::git::GitError> for TrustError {
    fn from(e: crate::git::GitError) -> TrustError {
        TrustError::Toolbox(e.into())
    }
}

impl crate::error::Hint for TrustError {
    fn hint(&self) -> Option<String> {
        match self {
            TrustError::Git(_) => Some("the git CLI must be installed".into()),
            TrustError::Toolbox(e) => e.hint(),
            TrustError::Versions(e) => e.hint(),
            TrustError::NoSuchTool(_) => Some("`toolsmith list` shows the tools".into()),
        }
    }
}

/// Why a version is trusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum Trusted {
    /// Not committed at all (a directory made by hand): a local change.
    Uncommitted,
    /// In this machine's record (made here, trusted here, or the baseline).
    Recorded,
    /// Committed here with `git commit`.
    CommittedHere {
        /// The commit.
        commit: String,
    },
    /// Signed by an allowed key.
    Signed {
        /// The commit.
        commit: String,
        /// The key's principal in `allowed_signers`.
        signer: String,
    },
}

/// A tool whose calls are refused until a person trusts it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error(
    "tool {name} is held: its current version came from elsewhere ({reason}; commit {short} by {author:?}) and nobody on this machine has trusted it"
)]
pub struct Held {
    /// The tool.
    pub name: String,
    /// The commit that brought the current version.
    pub commit: String,
    /// The commit, abbreviated (for the message).
    #[serde(skip)]
    pub short: String,
    /// The commit's author.
    pub author: String,
    /// The commit's summary line (the teammate's words: shown to a person reviewing it, never
    /// to the model).
    #[serde(skip)]
    pub summary: String,
    /// "not signed", "signed by a key not in allowed_signers", "a merge combined both sides".
    pub reason: String,
}

impl crate::error::Hint for Held {
    /// What to do, for the error a client sees.
    fn hint(&self) -> Option<String> {
        Some({
            format!(
                "a person on this machine reviews it with `toolsmith review {0}` and, if it is good, runs `toolsmith trust {0}`; until then nothing of it is shown to the model (its name, who brought it and why it is held aside) and it is not called",
                self.name
            )
        })
    }
}

/// A tool's standing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Its calls run.
    Trusted(Trusted),
    /// Its calls are refused until a person trusts it.
    Held(Held),
}

/// A version judged: (name, tree, size of the trusted record, `allowed_signers` blob).
type Key = (String, String, u64, Option<String>);

/// This toolbox's judged versions (its `state`): judging costs git processes.
#[derive(Default)]
struct Judged(Mutex<HashMap<Key, Standing>>);

/// The standing of tool `name` as committed at HEAD.
pub fn standing(tb: &Toolbox, name: &str) -> Result<Standing, TrustError> {
    crate::names::validate(name).map_err(crate::toolbox::ToolboxError::from)?;
    let root = tb.root();
    let path = format!("{TOOLS_DIR}/{name}");
    let Some(tree) = head_tree(tb, name) else {
        return Ok(Standing::Trusted(Trusted::Uncommitted));
    };
    let record = tb.trusted();
    if record.has_tool(name, &tree) {
        return Ok(Standing::Trusted(Trusted::Recorded));
    }
    // Judging the rest costs git processes: remember it per version, record state and signers.
    let record_len = std::fs::metadata(root.join(".git").join(crate::toolbox::TRUSTED_FILE))
        .map(|m| m.len())
        .unwrap_or(0);
    let signers = crate::git::entry_id_at(root, "HEAD", crate::toolbox::ALLOWED_SIGNERS)
        .ok()
        .flatten();
    let key: Key = (name.to_string(), tree.clone(), record_len, signers);
    let judged = tb.state(|_| Judged::default());
    if let Ok(c) = judged.0.lock()
        && let Some(s) = c.get(&key)
    {
        return Ok(s.clone());
    }
    let s = judge(tb, name, &path)?;
    if let Ok(mut c) = judged.0.lock() {
        c.insert(key, s.clone());
    }
    Ok(s)
}

fn judge(tb: &Toolbox, name: &str, path: &str) -> Result<Standing, TrustError> {
    let root = tb.root();
    let Some(c) = evidence::changes_of(root, "HEAD", path, 1)?
        .into_iter()
        .next()
    else {
        return Ok(Standing::Trusted(Trusted::Uncommitted));
    };
    let s = verdict(tb, name, &c)?;
    if matches!(s, Standing::Trusted(Trusted::CommittedHere { .. })) {
        tb.record_trusted(&[name.to_string()])?;
    }
    Ok(s)
}

/// The standing of the version of tool `name` that commit `c` brought.
fn verdict(tb: &Toolbox, name: &str, c: &Commit) -> Result<Standing, TrustError> {
    let root = tb.root();
    let held = |reason: &str| {
        Standing::Held(Held {
            name: name.to_string(),
            short: c.id[..c.id.len().min(10)].to_string(),
            commit: c.id.clone(),
            author: c.author.clone(),
            summary: c.summary.clone(),
            reason: reason.to_string(),
        })
    };
    if c.parents > 1 {
        return Ok(held("a merge combined changes from both sides"));
    }
    if evidence::committed_here(root, &c.id) {
        return Ok(Standing::Trusted(Trusted::CommittedHere {
            commit: c.id.clone(),
        }));
    }
    let signers = evidence::effective_signers(tb)?;
    if let Some(signer) = evidence::signed_by(root, &c.id, &signers)? {
        return Ok(Standing::Trusted(Trusted::Signed {
            commit: c.id.clone(),
            signer,
        }));
    }
    if !evidence::has_signature(root, &c.id) {
        return Ok(held("not signed"));
    }
    // Say so when the key is in the committed allowed_signers, but that version of the file
    // is one this machine has not accepted.
    let committed =
        crate::git::file_at(root, "HEAD", crate::toolbox::ALLOWED_SIGNERS)?.unwrap_or_default();
    if committed != signers
        && let Some(signer) = evidence::signed_by(root, &c.id, &committed)?
    {
        return Ok(held(&format!(
            "signed by {signer}, whose key is only in an allowed_signers change this machine has not accepted; check that change, then `toolsmith trust --signers`"
        )));
    }
    Ok(held("signed by a key not in allowed_signers"))
}

/// Why the version of tool `name` at revision `rev` is held, if it is: a version this machine
/// does not trust is not shown to the model at any revision (`get_tool` with a revision,
/// `diff_tool`), as it is not at HEAD. None when that version is trusted or there is none.
pub fn held_at(tb: &Toolbox, name: &str, rev: &str) -> Result<Option<Held>, TrustError> {
    crate::names::validate(name).map_err(crate::toolbox::ToolboxError::from)?;
    let root = tb.root();
    let commit = crate::git::resolve(root, rev)?;
    let path = format!("{TOOLS_DIR}/{name}");
    let Some(tree) = crate::git::entry_id_at(root, &commit, &path)? else {
        return Ok(None);
    };
    if tb.trusted().has_tool(name, &tree) {
        return Ok(None);
    }
    if head_tree(tb, name).as_deref() == Some(tree.as_str()) {
        return Ok(match standing(tb, name)? {
            Standing::Held(h) => Some(h),
            Standing::Trusted(_) => None,
        });
    }
    let Some(c) = evidence::changes_of(root, &commit, &path, 1)?
        .into_iter()
        .next()
    else {
        return Ok(None);
    };
    Ok(match verdict(tb, name, &c)? {
        Standing::Held(h) => Some(h),
        Standing::Trusted(_) => None,
    })
}

/// The trust check of a call (`App::run_callee`; the approval gate is `approval::admit`):
/// Ok for a trusted stored tool; the reason when it is held. When the standing cannot be
/// judged, the call is refused (fail closed). A staged candidate or scratch code (`origin`, as
/// the call's entry point said — never a path) is this request's own making: nothing of it
/// arrived from elsewhere, and it runs with the default grants only.
pub fn require_trusted(
    tb: &Toolbox,
    origin: crate::index::Origin,
    tool: &crate::index::Tool,
) -> Result<(), Box<Held>> {
    if !origin.is_stored() {
        return Ok(());
    }
    let name = &tool.manifest.name;
    match standing(tb, name) {
        Ok(Standing::Trusted(_)) => Ok(()),
        Ok(Standing::Held(h)) => Err(Box::new(h)),
        Err(e) => Err(Box::new(Held::unjudged(name, &e.to_string()))),
    }
}

impl Held {
    /// A tool whose standing could not be judged: held (fail closed).
    pub fn unjudged(name: &str, why: &str) -> Held {
        Held {
            name: name.to_string(),
            commit: String::new(),
            short: "unknown".into(),
            author: "unknown".into(),
            summary: String::new(),
            reason: format!("its trust could not be checked: {why}"),
        }
    }
}

/// What identifies the state of HEAD cheaply: `.git/HEAD`, and the inode and mtime of the
/// branch file and packed-refs (a ref is rewritten through a new file: a new inode).
fn head_stamp(root: &std::path::Path) -> Option<Stamp> {
    let git = root.join(".git");
    let head = std::fs::read_to_string(git.join("HEAD")).ok()?;
    let mut files = vec![git.join("packed-refs")];
    if let Some(r) = head.trim().strip_prefix("ref: ") {
        files.push(git.join(r));
    }
    let meta = files
        .iter()
        .map(|f| {
            std::fs::metadata(f).ok().and_then(|m| {
                #[cfg(unix)]
                let id = std::os::unix::fs::MetadataExt::ino(&m);
                #[cfg(not(unix))]
                let id = m.len();
                Some((id, m.modified().ok()?))
            })
        })
        .collect();
    Some((head, meta))
}

/// `.git/HEAD`'s text and (inode, mtime) of the branch file and packed-refs.
type Stamp = (String, Vec<Option<(u64, std::time::SystemTime)>>);
/// The tools' trees at HEAD, by name.
type Trees = std::sync::Arc<HashMap<String, String>>;

/// The tools' trees at HEAD as last read, with HEAD's stamp then (this toolbox's `state`).
#[derive(Default)]
struct HeadTrees(Mutex<Option<(Stamp, Trees)>>);

/// Every tool's tree at HEAD (name → tree id), read once per state of HEAD.
fn head_trees(tb: &Toolbox) -> Option<Trees> {
    let root = tb.root();
    let stamp = head_stamp(root)?;
    let cache = tb.state(|_| HeadTrees::default());
    if let Ok(c) = cache.0.lock()
        && let Some((s, t)) = c.as_ref()
        && *s == stamp
    {
        return Some(t.clone());
    }
    let tools = crate::git::entry_id_at(root, "HEAD", TOOLS_DIR).ok()??;
    let trees: Trees = std::sync::Arc::new(
        crate::git::tree_entries(root, &tools)
            .ok()?
            .into_iter()
            .collect(),
    );
    if let Ok(mut c) = cache.0.lock() {
        *c = Some((stamp, trees.clone()));
    }
    Some(trees)
}

fn head_tree(tb: &Toolbox, name: &str) -> Option<String> {
    head_trees(tb)?.get(name).cloned()
}

/// What `toolsmith review NAME` shows.
#[derive(Debug, Clone, Serialize)]
pub struct Review {
    /// The tool.
    pub name: String,
    /// Why it is held (None: it is trusted).
    pub held: Option<Held>,
    /// The last version trusted here (a commit), or None when no version ever was.
    pub since: Option<String>,
    /// The commits since then that changed the tool.
    pub commits: Vec<ReviewCommit>,
    /// Unified diff from the last trusted version to HEAD.
    pub diff: String,
}

/// A commit a review lists.
#[derive(Debug, Clone, Serialize)]
pub struct ReviewCommit {
    /// Its full id.
    pub commit: String,
    /// Its author.
    pub author: String,
    /// Its summary line.
    pub summary: String,
}

/// The diff of tool `name` since the last version trusted on this machine.
pub fn review(tb: &Toolbox, name: &str) -> Result<Review, TrustError> {
    let root = tb.root();
    let path = format!("{TOOLS_DIR}/{name}");
    let held = match standing(tb, name)? {
        Standing::Held(h) => Some(h),
        Standing::Trusted(_) => None,
    };
    let history = evidence::changes_of(root, "HEAD", &path, 500)?;
    if history.is_empty() {
        return Err(TrustError::NoSuchTool(name.to_string()));
    }
    let record = tb.trusted();
    let signers = evidence::effective_signers(tb)?;
    let mut since = None;
    let mut commits = Vec::new();
    for c in &history {
        let tree = crate::git::entry_id_at(root, &c.id, &path)?;
        let trusted = tree.as_ref().is_some_and(|t| record.has_tool(name, t))
            || (c.parents == 1
                && (evidence::committed_here(root, &c.id)
                    || evidence::signed_by(root, &c.id, &signers)?.is_some()));
        if trusted {
            since = Some(c.id.clone());
            break;
        }
        commits.push(ReviewCommit {
            commit: c.id.clone(),
            author: c.author.clone(),
            summary: c.summary.clone(),
        });
    }
    let diff = match &since {
        Some(base) => crate::versions::diff_tool(tb, name, base, "HEAD")?.unified,
        None => {
            let head = crate::versions::tool_at(tb, name, "HEAD")?;
            crate::versions::diff_files(&[], &head.files).1
        }
    };
    Ok(Review {
        name: name.to_string(),
        held,
        since,
        commits,
        diff,
    })
}

/// Record the current version of `name` (its tree at HEAD) as trusted on this machine.
pub fn trust(tb: &Toolbox, name: &str) -> Result<String, TrustError> {
    let recorded = tb.record_trusted(&[name.to_string()])?;
    recorded
        .into_iter()
        .next()
        .map(|(_, tree)| tree)
        .ok_or_else(|| TrustError::NoSuchTool(name.to_string()))
}

/// Accept the `allowed_signers` at HEAD on this machine. Returns its blob id (None: no file).
pub fn trust_signers(tb: &Toolbox) -> Result<Option<String>, TrustError> {
    let blob = crate::git::entry_id_at(tb.root(), "HEAD", crate::toolbox::ALLOWED_SIGNERS)?;
    if let Some(b) = &blob {
        tb.record_signers(b)?;
    }
    Ok(blob)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{Index, Origin};
    use crate::toolbox::FileSpec;

    const TOML: &str = "format = 1\nname = \"NAME\"\ndescription = \"A test tool\"\nkind = \"script\"\n\n[run]\nlanguage = \"python\"\nentry = \"main.py\"\n";

    fn files(name: &str) -> Vec<FileSpec> {
        vec![
            FileSpec::new("tool.toml", TOML.replace("NAME", name)),
            FileSpec::new("main.py", "print(1)\n"),
        ]
    }

    fn tool(tb: &Toolbox, name: &str) -> crate::index::Tool {
        Index::build(tb.root())
            .tools()
            .find(|t| t.manifest.name == name)
            .cloned()
            .expect("indexed")
    }

    fn git(dir: &std::path::Path, args: &[&str]) {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=teammate", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The trust gate reads the call's origin: a stored tool toolsmith committed here is
    /// trusted, so is one not committed yet (the person's own: the drift check, not trust,
    /// decides about uncommitted files); one pulled from a teammate unsigned is held. A staged
    /// candidate or scratch code is not judged at all, whatever its name.
    #[test]
    fn the_gate_judges_stored_tools_only() {
        let tmp = tempfile::tempdir().unwrap();
        let tb = Toolbox::init(&tmp.path().join("box"), &[], "test").unwrap();
        tb.write_tool("made", &files("made"), "test").unwrap();
        assert!(require_trusted(&tb, Origin::Stored, &tool(&tb, "made")).is_ok());
        crate::toolbox::write_files(&tb.tools_dir().join("loose"), &files("loose")).unwrap();
        assert!(require_trusted(&tb, Origin::Stored, &tool(&tb, "loose")).is_ok());
        std::fs::remove_dir_all(tb.tools_dir().join("loose")).unwrap();

        let other = tmp.path().join("teammate");
        git(
            tmp.path(),
            &[
                "clone",
                "-q",
                tb.root().to_str().unwrap(),
                other.to_str().unwrap(),
            ],
        );
        crate::toolbox::write_files(&other.join("tools/theirs"), &files("theirs")).unwrap();
        git(&other, &["add", "-A"]);
        git(&other, &["commit", "-qm", "theirs"]);
        git(
            tb.root(),
            &["pull", "-q", "--ff-only", other.to_str().unwrap(), "HEAD"],
        );
        let theirs = tool(&tb, "theirs");
        let held = require_trusted(&tb, Origin::Stored, &theirs).unwrap_err();
        assert!(held.reason.contains("not signed"), "{held}");
        for origin in [Origin::Staged, Origin::Scratch] {
            assert!(require_trusted(&tb, origin, &theirs).is_ok(), "{origin:?}");
        }
    }
}
