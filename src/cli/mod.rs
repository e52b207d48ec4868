//! The command line: argument definitions (clap) and dispatch to the commands.
//!
//! Parsing produces plain values first; commands then open the toolbox and act. Data goes to
//! stdout (`--json` for scripts), logs and errors to stderr.

mod approvals;
mod build;
mod commands;
mod doctor;
mod history;
mod output;
mod references;
mod scripts;
mod serve;
mod servers;
mod share;
mod stats;
mod team;

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

pub use commands::run;

/// The actor recorded in commits made from the command line.
pub const CLI_ACTOR: &str = "cli";
pub use output::UserError as UserErrorRef;
pub use output::for_terminal;

/// toolsmith: a self-extending MCP server. An AI writes tools; toolsmith builds, stores,
/// versions and runs them in a git toolbox.
#[derive(Debug, Parser)]
#[command(name = "toolsmith", version, about, long_about = None)]
pub struct Cli {
    /// The toolbox directory (default: $TOOLSMITH_TOOLBOX, else $TOOLSMITH_HOME, else the
    /// platform data dir).
    #[arg(long, global = true, value_name = "DIR")]
    pub toolbox: Option<PathBuf>,
    /// Print data as JSON.
    #[arg(long, global = true)]
    pub json: bool,
    /// Let script tools (and execute_code) run WITHOUT a sandbox, with your full rights, when
    /// this machine offers none (or a tool sets run.sandbox = "none"). Only you can set this
    /// (also with TOOLSMITH_ALLOW_UNSANDBOXED=1).
    #[arg(long, global = true)]
    pub allow_unsandboxed: bool,
    /// More logging on stderr (-v info, -vv debug).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

/// Parsed once per process: the size of its largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create a new toolbox (a git repository with tools/).
    Init {
        /// Where to create it (default: the --toolbox or default location).
        dir: Option<PathBuf>,
        /// Seed it with the example tools.
        #[arg(long)]
        example: bool,
    },
    /// Scaffold a new tool from a template and commit it.
    New {
        name: String,
        /// Language of the template.
        #[arg(long, value_enum, default_value_t = Lang::Python)]
        lang: Lang,
        /// One-line description.
        #[arg(long, short)]
        description: Option<String>,
    },
    /// List the tools (and broken tool directories).
    List {
        /// Only tools of this kind.
        #[arg(long)]
        kind: Option<String>,
        /// Only tools with this tag.
        #[arg(long)]
        tag: Option<String>,
    },
    /// Show one tool: manifest, schemas, files.
    Show { name: String },
    /// Find tools by what they do (in plain words) or by name: the ranking `search_tools` uses.
    Search {
        query: Vec<String>,
        #[arg(long, default_value_t = 10)]
        limit: usize,
    },
    /// History of the toolbox, or of one tool.
    Log {
        name: Option<String>,
        #[arg(long, short = 'n', default_value_t = 20)]
        limit: usize,
    },
    /// Validate every manifest; exits non-zero when any has errors.
    Lint,
    /// Print the guide (the toolsmith://guide resource).
    Guide,
    /// Delete a tool (as a commit; history keeps it).
    Delete { name: String },
    /// Print the JSON Schema of tool.toml (docs/tool.schema.json).
    Schema,
    /// Call a stored tool with JSON arguments and print its result.
    Call {
        name: String,
        /// Arguments as a JSON object.
        #[arg(long, default_value = "{}")]
        args: String,
    },
    /// Build a Rust (wasm) tool from its directory as it is on disk, and commit it.
    Build {
        name: String,
        /// Commit even when the tool's examples fail.
        #[arg(long)]
        force: bool,
    },
    /// Register (add or update) a script tool: code, language, dependencies, schemas, examples.
    Register(scripts::RegisterArgs),
    /// The versions of a tool: commit, date, actor, message.
    History(history::HistoryArgs),
    /// Unified diff of a tool between two revisions.
    Diff(history::DiffArgs),
    /// Restore a tool as it was at a revision, as a new commit.
    Rollback(history::RollbackArgs),
    /// Bring back a deleted tool.
    Restore(history::RestoreArgs),
    /// Revert every commit one MCP session made, as one new commit.
    UndoSession(history::UndoArgs),
    /// Import tools from a git repository, a Gist or an OCI registry (oci://…), or the MCP
    /// servers of an editor's configuration file (Claude Desktop, Cursor, VS Code mcp.json).
    Import(share::ImportArgs),
    /// Add another MCP server as an entry: its tools become NAME__TOOL tools of the toolbox.
    #[command(name = "add-mcp")]
    AddMcp(servers::AddMcpArgs),
    /// Show (and with --apply, apply) what changed at an imported tool's origin.
    Update(share::UpdateArgs),
    /// Push tools to a git remote, publish one to an OCI registry, or write a Gist-shaped JSON file.
    Export(share::ExportArgs),
    /// Fetch, integrate (fast-forward or one merge commit) and push, in one step.
    Sync(team::SyncArgs),
    /// Show what changed in a tool since the last version trusted on this machine.
    Review(team::ReviewArgs),
    /// Trust a tool's current version on this machine (a held tool then runs).
    Trust(team::TrustArgs),
    /// Serve the toolbox over MCP (stdio by default).
    Serve(serve::ServeArgs),
    /// What works on this machine: toolbox, git identity, interpreters (and their real
    /// paths), the wasm32-wasip1 target, the sandbox, cgroups, free disk — with hints.
    Doctor,
    /// The toolbox's health: per tool its calls, error rate, p50/p95 duration, last use, who
    /// made it and when; tools never called, failing tools, near-duplicates (`--json` too).
    Stats,
    /// Tools whose requested capabilities wait for your approval on this machine, with the
    /// diff since the version you last approved.
    Pending,
    /// Approve what this version of a tool asks for (network, environment, paths, secrets,
    /// higher limits), on this machine. Any change to the tool asks again.
    Approve { name: String },
    /// Deny what this version of a tool asks for: it runs with the default grants only.
    Deny { name: String },
    /// Allow one tool a dependency that is not a registry package, on this machine: a local
    /// wheel, source archive, source directory or npm package (pinned to what it holds now:
    /// a changed file needs a new allowance), or an archive at a URL (pinned at its first
    /// download). It is still installed contained. E.g. `toolsmith allow my_tool pip
    /// 'mypkg @ file:///home/me/mypkg'`, `toolsmith allow my_tool npm 'x@file:/home/me/x.tgz'`.
    Allow(references::AllowArgs),
    /// Take back an allowance of `toolsmith allow` (the tool's next install is refused).
    Disallow(references::AllowArgs),
    /// Secrets for tools (set, list, rm): stored on this machine, never in git.
    #[command(subcommand)]
    Secret(approvals::SecretCommand),
    /// The audit log: calls, approvals and denials.
    Audit(approvals::AuditArgs),
    /// Your own page in the browser, on 127.0.0.1: approve or deny what tools ask for (with
    /// their source and diff), trust held tools, set secrets, read the audit log, roll back.
    /// Prints a one-time login link; the MCP client never gets a session.
    Console(approvals::ConsoleArgs),
    /// Build or catch up the history memo, then exit: a server runs this in a child process
    /// at start, so the memory a fresh clone's build takes goes away with the child.
    #[command(name = "__history-memo", hide = true)]
    HistoryMemo,
}

/// Template languages for `new`.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Lang {
    Rust,
    Python,
    Node,
    Ruby,
    Bash,
    Perl,
    Php,
}

impl Lang {
    pub fn template_dir(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::Node => "node",
            Lang::Ruby => "ruby",
            Lang::Bash => "bash",
            Lang::Perl => "perl",
            Lang::Php => "php",
        }
    }
}

/// Which stored tools the MCP server lists as tools of their own.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq, Default)]
pub enum Exposure {
    /// Every valid tool (up to 200; past that, pinned ones only).
    #[default]
    All,
    /// Only tools with `pinned = true`.
    Pinned,
    /// None: meta-tools only (use call_tool).
    None,
}

/// Stack of each of a runtime's worker threads. A call's path is a chain of async functions
/// (the handler, the meta-tool, registration, its examples gate, the call's gates, the
/// runner), and an unoptimised build gives each poll a frame of tens to hundreds of KiB: the
/// 2 MiB tokio chooses overflowed there. Only touched pages are committed.
const WORKER_STACK: usize = 8 << 20;

/// The one way a command builds its tokio runtime: `workers` worker threads (tokio's default,
/// one per core, when None), each with a [`WORKER_STACK`] stack.
pub(crate) fn runtime(workers: Option<usize>) -> std::io::Result<tokio::runtime::Runtime> {
    let mut b = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = workers {
        b.worker_threads(n);
    }
    b.thread_stack_size(WORKER_STACK).enable_all().build()
}
