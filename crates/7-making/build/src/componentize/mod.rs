//! Tools written in Python or JavaScript as WebAssembly components: `build_tool` with
//! `language = "python"` runs componentize-py (PyPI) on the tool's `app.py`, with
//! `language = "javascript"` ComponentizeJS (npm) on its `app.js`, each against the tool's WIT
//! world (both pinned by scripts/setup.sh). The tool chain runs contained like every build
//! step (`sandbox::contained`): no network, its installation read-only, only the build's own
//! directory writable. The result embeds the interpreter (CPython, or SpiderMonkey through
//! StarlingMonkey); no native modules (a component has no way to load them).

mod javascript;
pub(crate) mod python;

use super::BuildError;
use super::cargo::Report;
use crate::config::{Config, SandboxConfig};
use crate::manifest::Manifest;
use crate::runner::script::Host;
use crate::sandbox::contained::{self, Job, Network};
use crate::sandbox::interpreter_prefixes;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The longest a tool-chain run may take.
const TIMEOUT: Duration = Duration::from_secs(600);

/// A language whose source becomes a component through an interpreter compiled to wasm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// Through componentize-py.
    Python,
    /// Through ComponentizeJS.
    JavaScript,
}

impl Language {
    /// Every one.
    pub const ALL: [Language; 2] = [Language::Python, Language::JavaScript];

    /// `language = "…"` of build_tool and tool.toml.
    pub fn parse(name: &str) -> Option<Language> {
        Language::ALL.into_iter().find(|l| l.name() == name)
    }

    /// The component language of a tool (None: Rust, or not a component).
    pub fn of(m: &Manifest) -> Option<Language> {
        m.is_component()
            .then(|| m.run.language.as_deref().and_then(Language::parse))
            .flatten()
    }

    /// `python` or `javascript`.
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::JavaScript => "javascript",
        }
    }

    /// The language's name in a sentence.
    pub fn title(self) -> &'static str {
        match self {
            Language::Python => "Python",
            Language::JavaScript => "JavaScript",
        }
    }

    /// The source file of a component tool.
    pub fn entry(self) -> &'static str {
        match self {
            Language::Python => "app.py",
            Language::JavaScript => javascript::ENTRY,
        }
    }

    /// The tool chain's name.
    pub fn chain(self) -> &'static str {
        match self {
            Language::Python => "componentize-py",
            Language::JavaScript => "componentize-js",
        }
    }

    /// The variable naming the tool chain's executable (default: on PATH).
    pub fn var(self) -> &'static str {
        match self {
            Language::Python => "TOOLSMITH_COMPONENTIZE_PY",
            Language::JavaScript => "TOOLSMITH_COMPONENTIZE_JS",
        }
    }

    /// How a person installs the tool chain.
    pub fn install(self) -> &'static str {
        match self {
            Language::Python => "a venv with `pip install componentize-py==0.25.1`",
            Language::JavaScript => {
                "`npm install @bytecodealliance/componentize-js@0.23.0` (its node_modules/.bin/componentize-js)"
            }
        }
    }

    /// The executable the configuration names.
    pub fn configured(self, config: &Config) -> PathBuf {
        match self {
            Language::Python => config.componentize_py.clone(),
            Language::JavaScript => config.componentize_js.clone(),
        }
    }

    /// The command line building `entry` (a module name for Python, a path relative to the
    /// work directory for JavaScript) against `wit/` (world `world`) into `wasm`.
    fn argv(self, chain: &Chain, entry: &str, world: &str, wasm: &Path) -> Vec<String> {
        let wasm = wasm.to_string_lossy().into_owned();
        let mut argv = chain.argv.clone();
        let rest: Vec<&str> = match self {
            Language::Python => {
                let mut v = vec!["-d", "wit", "-w", world, "componentize", entry];
                if entry == python::MODULE {
                    v.extend(["-p", ".build"]);
                }
                v.extend(["-p", ".", "-o", &wasm]);
                v
            }
            Language::JavaScript => vec![entry, "wit", world, &wasm],
        };
        argv.extend(rest.into_iter().map(str::to_string));
        argv
    }
}

impl std::fmt::Display for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A component tool chain, found: how to start it and the directories it needs to read.
#[derive(Debug, Clone)]
pub struct Chain {
    /// The language it builds.
    pub language: Language,
    /// The executable, resolved.
    pub exe: PathBuf,
    /// What starts it (the executable, or its interpreter and script).
    argv: Vec<String>,
    /// Its installation and interpreter, read-only to the build.
    pub visible: Vec<PathBuf>,
    /// Its version, as it says it.
    pub version: String,
    /// componentize-py's Python (the venv's, from its first line): what reads app.py first.
    pub python: Option<PathBuf>,
}

/// Find the tool chain of `language` (`configured`, a path or a name on PATH) and ask its
/// version.
pub fn resolve(
    language: Language,
    configured: &Path,
    sandbox: &SandboxConfig,
) -> Result<Chain, BuildError> {
    let missing = |message: String| BuildError::NoComponentizer {
        language,
        command: configured.display().to_string(),
        message,
    };
    let exe = which::which(configured).map_err(|e| missing(e.to_string()))?;
    let exe = exe.canonicalize().unwrap_or(exe);
    let version = version_of(&exe).map_err(missing)?;
    match language {
        Language::Python => Ok(python(exe, version, sandbox)),
        Language::JavaScript => javascript(exe, version, sandbox).map_err(missing),
    }
}

/// What `exe --version` says, asked once per file (its path, size and modification time: a
/// tool chain reinstalled in place is asked again). A build resolves its tool chain twice
/// (its input schema, then its build), and each asking cost 75–115 ms.
fn version_of(exe: &Path) -> Result<String, String> {
    type Key = (PathBuf, u64, Option<std::time::SystemTime>);
    static ASKED: std::sync::OnceLock<std::sync::Mutex<HashMap<Key, String>>> =
        std::sync::OnceLock::new();
    let key = std::fs::metadata(exe)
        .ok()
        .map(|m| (exe.to_path_buf(), m.len(), m.modified().ok()));
    let asked = ASKED.get_or_init(Default::default);
    if let Some(v) = key.as_ref().and_then(|k| {
        asked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(k)
            .cloned()
    }) {
        return Ok(v);
    }
    let out = std::process::Command::new(exe)
        .arg("--version")
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("`--version` ended with {}", out.status));
    }
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if let Some(k) = key {
        asked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(k, version.clone());
    }
    Ok(version)
}

/// componentize-py: bin/componentize-py of a venv; the venv (its site-packages, pyvenv.cfg)
/// is what it reads, and its interpreter (the shebang's, through a venv's symlinks to the
/// base installation).
fn python(exe: PathBuf, version: String, sandbox: &SandboxConfig) -> Chain {
    let mut visible: Vec<PathBuf> = exe
        .parent()
        .and_then(Path::parent)
        .map(|venv| vec![venv.to_path_buf()])
        .unwrap_or_default();
    let python = shebang(&exe);
    if let Some(python) = &python {
        visible.extend(interpreter_prefixes(python, sandbox));
        if let Some(real) = crate::sandbox::interp::resolve(python) {
            visible.extend(interpreter_prefixes(&real.to_string_lossy(), sandbox));
        }
    }
    Chain {
        language: Language::Python,
        argv: vec![exe.to_string_lossy().into_owned()],
        exe,
        visible,
        version,
        python: python.map(PathBuf::from),
    }
}

/// ComponentizeJS: `node_modules/.bin/componentize-js` links to the package's `src/cli.js`
/// (`#!/usr/bin/env node`). It reads its `node_modules` (the StarlingMonkey engine, wizer's
/// binary among them) and runs on the Node.js on PATH, started here by its full path. Not its
/// CLI but toolsmith's driver (`javascript::DRIVER`, written into the build's directory) calls
/// its `componentize()`, beside `cli.js`: the CLI starts wizer with an empty environment.
fn javascript(exe: PathBuf, version: String, sandbox: &SandboxConfig) -> Result<Chain, String> {
    let modules = exe
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "node_modules"))
        .ok_or_else(|| {
            format!(
                "{} is not inside a node_modules directory (give the node_modules/.bin/componentize-js that npm installed)",
                exe.display()
            )
        })?
        .to_path_buf();
    let api = exe
        .canonicalize()
        .map(|cli| cli.with_file_name("componentize.js"))
        .ok()
        .filter(|api| api.is_file())
        .ok_or_else(|| {
            format!(
                "{} does not lead to ComponentizeJS's src/cli.js with its componentize.js beside it (reinstall `@bytecodealliance/componentize-js`)",
                exe.display()
            )
        })?;
    let node = which::which("node").map_err(|e| format!("Node.js (`node`) is not on PATH: {e}"))?;
    let node = node.canonicalize().unwrap_or(node);
    let mut visible = vec![modules];
    visible.extend(interpreter_prefixes(&node.to_string_lossy(), sandbox));
    Ok(Chain {
        language: Language::JavaScript,
        argv: vec![
            node.to_string_lossy().into_owned(),
            javascript::DRIVER.into(),
            api.to_string_lossy().into_owned(),
        ],
        exe,
        visible,
        version: format!("componentize-js {version}"),
        python: None,
    })
}

/// The interpreter a script's `#!` line names (a plain path, no `env` lookups).
fn shebang(exe: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(exe).ok()?.read(&mut head).ok()?;
    let line = std::str::from_utf8(&head[..n]).ok()?.lines().next()?;
    let path = line.strip_prefix("#!")?.split_whitespace().next()?;
    (path.starts_with('/') && !path.ends_with("/env")).then(|| path.to_string())
}

/// Build a component tool of `language` in `work`: find its tool chain (configured in
/// `config`), then compile the world `[run] world` names (default `tool`).
pub async fn build(
    config: &Config,
    language: Language,
    tool: &str,
    manifest: &Manifest,
    work: &Path,
    host: &dyn Host,
    cancel: &CancellationToken,
) -> Result<Report, BuildError> {
    let exe = language.configured(config);
    let sandbox = config.sandbox.clone();
    let chain = super::blocking(move || resolve(language, &exe, &sandbox)).await?;
    let world = manifest.run.world.as_deref().unwrap_or("tool");
    let entry = match language {
        Language::Python => {
            host.progress(0.0, None, Some("reading app.py".into()));
            python::prepare(&chain, tool, manifest, world, work, &config.sandbox, cancel).await?
        }
        Language::JavaScript => javascript::prepare(work, manifest, world)?,
    };
    compile(
        &chain,
        tool,
        world,
        entry,
        work,
        &config.sandbox,
        host,
        cancel,
    )
    .await
}

/// Build the entry (a Python module, a JavaScript file in `work`) against `work/wit` (world
/// `world`) into `work/.build/tool.wasm`.
#[allow(clippy::too_many_arguments)]
pub async fn compile(
    chain: &Chain,
    tool: &str,
    world: &str,
    entry: &str,
    work: &Path,
    sandbox: &SandboxConfig,
    host: &dyn Host,
    cancel: &CancellationToken,
) -> Result<Report, BuildError> {
    let started = Instant::now();
    let out_dir = work.join(".build");
    std::fs::create_dir_all(&out_dir).map_err(BuildError::io("create", &out_dir))?;
    let wasm = out_dir.join("tool.wasm");
    let _ = std::fs::remove_file(&wasm);
    let name = chain.language.chain();
    host.progress(0.0, None, Some(format!("{name}: building the component")));
    let job = Job {
        what: format!("{name} build of {tool}"),
        argv: chain.language.argv(chain, entry, world, &wasm),
        env: vec![
            ("PATH".into(), contained::path_with(&[])),
            ("LANG".into(), "C.UTF-8".into()),
            ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
        ],
        cwd: work.to_path_buf(),
        read: chain.visible.clone(),
        write: vec![work.to_path_buf()],
        network: Network::None,
        config: sandbox,
    };
    let out = tokio::select! {
        _ = cancel.cancelled() => return Err(BuildError::Cancelled { tool: tool.to_string() }),
        out = contained::output(&job, TIMEOUT) => out.map_err(|e| {
            use toolsmith_error::Hint;
            BuildError::Sandbox { tool: tool.to_string(), hint: e.hint().unwrap_or_default(), message: e.to_string() }
        })?,
    };
    if !out.success {
        let mut text = format!("{}\n{}", out.stdout.trim(), out.stderr.trim());
        if chain.language == Language::JavaScript
            && text.contains("failed to parse JS source")
            && let Some(details) = javascript::syntax_details(&job, &chain.argv[0], work).await
        {
            text = format!("{details}\n\n{}", text.trim());
        }
        return Err(BuildError::Componentize {
            chain: name,
            tool: tool.to_string(),
            status: out.status,
            output: text.trim().to_string(),
        });
    }
    let bytes = std::fs::read(&wasm).map_err(BuildError::io("read", &wasm))?;
    let _ = std::fs::remove_dir_all(&out_dir);
    let mechanism = crate::sandbox::choose(crate::manifest::SandboxMode::Auto, sandbox)
        .map(|m| m.as_str())
        .unwrap_or("none");
    Ok(Report {
        wasm,
        bytes,
        mechanism,
        compiled: vec![format!("{tool} ({})", chain.version)],
        log: out
            .stdout
            .lines()
            .chain(out.stderr.lines())
            .map(str::to_string)
            .take(50)
            .collect(),
        warnings: Vec::new(),
        elapsed: started.elapsed(),
    })
}
