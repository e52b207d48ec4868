//! Python tools as WebAssembly components: `build_tool` with `language = "python"` runs
//! componentize-py (PyPI, pinned by scripts/setup.sh) on the tool's `app.py` and its WIT
//! world. It runs contained like every build step (`runner::contained`): no network, the
//! tool chain's environment read-only, only the build's own directory writable. The result
//! embeds CPython; no native modules (a component has no way to load them).

use super::BuildError;
use super::cargo::Report;
use crate::config::SandboxConfig;
use crate::runner::contained::{self, Job, Network};
use crate::runner::sandbox::interpreter_prefixes;
use crate::runner::script::Host;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The Python source of a component tool.
pub const ENTRY: &str = "app.py";
/// The variable naming the componentize-py executable (default: on PATH).
pub const VAR: &str = "TOOLSMITH_COMPONENTIZE_PY";
/// How a person installs it.
pub const INSTALL: &str = "a venv with `pip install componentize-py==0.25.1`";
/// The longest a componentize-py run may take.
const TIMEOUT: Duration = Duration::from_secs(600);

/// Whether a tool is a Python component (built here, not by cargo).
pub fn is_python(m: &crate::manifest::Manifest) -> bool {
    m.is_component() && m.run.language.as_deref() == Some("python")
}

/// componentize-py, found: the executable and the directories it needs to read.
#[derive(Debug, Clone)]
pub struct Chain {
    pub exe: PathBuf,
    /// Its installation (the venv holding it), read-only to the build.
    pub visible: Vec<PathBuf>,
    pub version: String,
}

/// Find componentize-py (`configured`, a path or a name on PATH) and ask its version.
pub fn resolve(configured: &Path) -> Result<Chain, BuildError> {
    let missing = |message: String| BuildError::NoComponentizer {
        chain: "componentize-py",
        command: configured.display().to_string(),
        message,
    };
    let exe = which::which(configured).map_err(|e| missing(e.to_string()))?;
    let exe = exe.canonicalize().unwrap_or(exe);
    let out = std::process::Command::new(&exe)
        .arg("--version")
        .output()
        .map_err(|e| missing(e.to_string()))?;
    if !out.status.success() {
        return Err(missing(format!("`--version` ended with {}", out.status)));
    }
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    // bin/componentize-py of a venv: the venv (its site-packages, pyvenv.cfg) is what it reads.
    // Its interpreter (the shebang's, through a venv's symlinks to the base installation).
    let mut visible: Vec<PathBuf> = exe
        .parent()
        .and_then(Path::parent)
        .map(|venv| vec![venv.to_path_buf()])
        .unwrap_or_default();
    if let Some(python) = shebang(&exe) {
        visible.extend(interpreter_prefixes(&python));
        if let Some(real) = crate::runner::interp::resolve(&python) {
            visible.extend(interpreter_prefixes(&real.to_string_lossy()));
        }
    }
    Ok(Chain {
        exe,
        visible,
        version,
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

/// Build `work/app.py` against `work/wit` (world `world`) into `work/.build/tool.wasm`.
pub async fn compile(
    chain: &Chain,
    tool: &str,
    world: &str,
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
    host.progress(
        0.0,
        None,
        Some("componentize-py: building the component".into()),
    );
    let job = Job {
        what: format!("componentize-py build of {tool}"),
        argv: vec![
            chain.exe.to_string_lossy().into_owned(),
            "-d".into(),
            "wit".into(),
            "-w".into(),
            world.into(),
            "componentize".into(),
            "app".into(),
            "-p".into(),
            ".".into(),
            "-o".into(),
            wasm.to_string_lossy().into_owned(),
        ],
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
            use crate::error::Hint;
            BuildError::Sandbox { tool: tool.to_string(), hint: e.hint().unwrap_or_default(), message: e.to_string() }
        })?,
    };
    if !out.success {
        let text = format!("{}\n{}", out.stdout.trim(), out.stderr.trim());
        return Err(BuildError::Componentize {
            chain: "componentize-py",
            tool: tool.to_string(),
            status: out.status,
            output: text.trim().to_string(),
        });
    }
    let bytes = std::fs::read(&wasm).map_err(BuildError::io("read", &wasm))?;
    let _ = std::fs::remove_dir_all(&out_dir);
    let mechanism = crate::runner::sandbox::choose(crate::manifest::SandboxMode::Auto, sandbox)
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
