//! Which environment variables a tool or an MCP entry may ask for: any variable-shaped name
//! except those that steer a dynamic loader, the C library or an interpreter *before* the
//! program's own code runs (they make a process load or run other code than the one it was
//! started for, and a process outside the sandbox that saw one would run it with the host's
//! rights). One list, asked wherever a name enters: `capabilities.env`, `[mcp] env`, the
//! names of `[secrets]` (a secret is an environment variable too), `register_script`,
//! `import_mcp` / `add-mcp`, a person's approval, and the start of every sandboxed process
//! (`sandbox::env`), which refuses one that got past the others.
//!
//! toolsmith's own values are not asks: it sets `NODE_OPTIONS` (a Node tool's heap limit),
//! `NODE_PATH` (its `node_modules`) and `PYTHONDONTWRITEBYTECODE` itself. A Python tool's
//! packages come from its own venv (the venv's interpreter finds them through `pyvenv.cfg`),
//! a Node tool's from `NODE_PATH`: no recipe of toolsmith's needs a tool to set a search path.

/// Why a name is refused, for an error that says why (and the hint in [`HINT`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Steers {
    /// The dynamic loader (`LD_*`, `DYLD_*`) or the C library's own start-up.
    Loader,
    /// A shell's start-up (a file or code it runs before the script).
    Shell,
    /// An interpreter's start-up: options, modules or files it loads before the program.
    Interpreter(&'static str),
    /// A library that loads shared objects or modules named by the variable when it starts.
    Library(&'static str),
}

impl std::fmt::Display for Steers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Steers::Loader => write!(f, "it steers the dynamic loader or the C library"),
            Steers::Shell => write!(f, "it makes a shell run other code before the script"),
            Steers::Interpreter(which) => {
                write!(
                    f,
                    "it makes {which} load or run other code before the program"
                )
            }
            Steers::Library(which) => {
                write!(f, "it makes {which} load other code when it starts")
            }
        }
    }
}

/// What to do instead, for every refusal.
pub const HINT: &str = "remove it: a tool's or entry's variables exist only inside its sandbox, and none may change which code runs before its program does (docs/sandbox.md, \"The environment\"); ship what it would load in the tool's own files or its [dependencies], or pass the setting as an argument";

/// Names refused whatever follows the prefix (compared in upper case).
const PREFIXES: &[(&str, Steers)] = &[
    ("LD_", Steers::Loader),
    ("DYLD_", Steers::Loader),
    ("MALLOC_", Steers::Loader),
    ("BASH_FUNC_", Steers::Shell),
    ("PYTHON", Steers::Interpreter("Python")),
];

/// `PYTHON*` names that change no code loaded: let through.
const PYTHON_PLAIN: &[&str] = &[
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONIOENCODING",
    "PYTHONUTF8",
    "PYTHONHASHSEED",
    "PYTHONFAULTHANDLER",
    "PYTHONNOUSERSITE",
];

/// Exact names refused (compared in upper case).
const NAMES: &[(&str, Steers)] = &[
    // What the GNU C library itself drops for setuid programs (`unsecvars.h`), TMPDIR aside
    // (toolsmith sets it: the call's scratch directory).
    ("GCONV_PATH", Steers::Loader),
    ("GETCONF_DIR", Steers::Loader),
    ("GLIBC_TUNABLES", Steers::Loader),
    ("HOSTALIASES", Steers::Loader),
    ("LOCALDOMAIN", Steers::Loader),
    ("LOCPATH", Steers::Loader),
    ("NIS_PATH", Steers::Loader),
    ("NLSPATH", Steers::Loader),
    ("RESOLV_HOST_CONF", Steers::Loader),
    ("RES_OPTIONS", Steers::Loader),
    ("TZDIR", Steers::Loader),
    // Shells: files and code run at start, options, exported functions.
    ("BASH_ENV", Steers::Shell),
    ("ENV", Steers::Shell),
    ("SHELLOPTS", Steers::Shell),
    ("BASHOPTS", Steers::Shell),
    ("PS4", Steers::Shell),
    ("PROMPT_COMMAND", Steers::Shell),
    ("IFS", Steers::Shell),
    ("ZDOTDIR", Steers::Shell),
    ("FPATH", Steers::Shell),
    ("BASH_LOADABLES_PATH", Steers::Shell),
    ("BASH_XTRACEFD", Steers::Shell),
    // The interpreters toolsmith starts, and the JVM an entry's server may be.
    ("NODE_OPTIONS", Steers::Interpreter("Node")),
    ("NODE_PATH", Steers::Interpreter("Node")),
    ("NODE_REPL_EXTERNAL_MODULE", Steers::Interpreter("Node")),
    ("NODE_ICU_DATA", Steers::Interpreter("Node")),
    ("PERL5OPT", Steers::Interpreter("Perl")),
    ("PERL5LIB", Steers::Interpreter("Perl")),
    ("PERLLIB", Steers::Interpreter("Perl")),
    ("PERL5DB", Steers::Interpreter("Perl")),
    ("PERLIO", Steers::Interpreter("Perl")),
    ("PERLIO_DEBUG", Steers::Interpreter("Perl")),
    ("RUBYOPT", Steers::Interpreter("Ruby")),
    ("RUBYLIB", Steers::Interpreter("Ruby")),
    ("RUBYPATH", Steers::Interpreter("Ruby")),
    ("PHPRC", Steers::Interpreter("PHP")),
    ("PHP_INI_SCAN_DIR", Steers::Interpreter("PHP")),
    ("JAVA_TOOL_OPTIONS", Steers::Interpreter("Java")),
    ("_JAVA_OPTIONS", Steers::Interpreter("Java")),
    ("JDK_JAVA_OPTIONS", Steers::Interpreter("Java")),
    // Libraries that load shared objects named by a variable as they start (OpenSSL: every
    // program with TLS, Python's `ssl` among them).
    ("OPENSSL_CONF", Steers::Library("OpenSSL")),
    ("OPENSSL_MODULES", Steers::Library("OpenSSL")),
    ("OPENSSL_ENGINES", Steers::Library("OpenSSL")),
    ("GIO_EXTRA_MODULES", Steers::Library("GLib")),
    ("GIO_MODULE_DIR", Steers::Library("GLib")),
    ("GTK_MODULES", Steers::Library("GTK")),
    ("GTK_PATH", Steers::Library("GTK")),
    ("GST_PLUGIN_PATH", Steers::Library("GStreamer")),
    ("GST_PLUGIN_SYSTEM_PATH", Steers::Library("GStreamer")),
    ("QT_PLUGIN_PATH", Steers::Library("Qt")),
    ("SASL_PATH", Steers::Library("Cyrus SASL")),
];

/// Why `name` may not be asked for by a tool or an entry (None: it may).
pub fn steers(name: &str) -> Option<Steers> {
    let upper = name.to_ascii_uppercase();
    if let Some((_, why)) = NAMES.iter().find(|(n, _)| *n == upper) {
        return Some(*why);
    }
    if PYTHON_PLAIN.contains(&upper.as_str()) {
        return None;
    }
    PREFIXES
        .iter()
        .find(|(p, _)| upper.starts_with(p))
        .map(|(_, why)| *why)
}

/// The refusal of `name`, said once for every place that asks: "`LD_PRELOAD` is refused:
/// it steers the dynamic loader or the C library".
pub fn refusal(name: &str) -> Option<String> {
    steers(name).map(|why| format!("the environment variable {name} is refused: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loader_shell_and_interpreter_variables_are_refused_settings_are_not() {
        for n in [
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "LD_AUDIT",
            "ld_preload",
            "DYLD_INSERT_LIBRARIES",
            "GCONV_PATH",
            "GLIBC_TUNABLES",
            "BASH_ENV",
            "ENV",
            "BASH_FUNC_x",
            "PYTHONSTARTUP",
            "PYTHONPATH",
            "PYTHONHOME",
            "PYTHONWARNINGS",
            "PYTHONBREAKPOINT",
            "NODE_OPTIONS",
            "PERL5OPT",
            "RUBYOPT",
            "PHPRC",
            "JAVA_TOOL_OPTIONS",
            "OPENSSL_CONF",
            "MALLOC_TRACE",
        ] {
            assert!(steers(n).is_some(), "{n} is refused");
            assert!(refusal(n).is_some_and(|r| r.contains(n)));
        }
        for n in [
            "PATH",
            "HOME",
            "LANG",
            "TZ",
            "NODE_ENV",
            "LOG_LEVEL",
            "GITHUB_TOKEN",
            "PYTHONUNBUFFERED",
            "PYTHONIOENCODING",
            "ENVIRONMENT",
            "LDAP_URL",
            "TOOLSMITH_TEST_X",
        ] {
            assert_eq!(steers(n), None, "{n} is a setting");
        }
    }

    #[test]
    fn a_manifest_asking_for_one_is_invalid_where_it_asks() {
        let script = "format = 1\nname = \"t\"\ndescription = \"d\"\nkind = \"script\"\n[run]\nlanguage = \"python\"\nentry = \"main.py\"\n";
        let entry = "format = 1\nname = \"e\"\ndescription = \"d\"\nkind = \"mcp\"\n[mcp]\ncommand = \"python3\"\n";
        for (text, field) in [
            (
                format!("{script}[capabilities]\nenv = [\"HOME\", \"LD_PRELOAD\"]\n"),
                "capabilities.env.1",
            ),
            (
                format!("{script}[secrets]\nBASH_ENV = \"x\"\n"),
                "secrets.BASH_ENV",
            ),
            (
                format!("{entry}[mcp.env]\nNODE_OPTIONS = \"--require /x.js\"\n"),
                "mcp.env.NODE_OPTIONS",
            ),
        ] {
            let d =
                crate::parse(std::path::Path::new("tool.toml"), None, &text).expect_err("refused");
            assert!(
                d.iter().any(|d| d.field.as_deref() == Some(field)
                    && d.message.contains("is refused: it ")
                    && d.hint.as_deref() == Some(HINT)),
                "{field}: {d:?}"
            );
        }
        let fine = format!("{entry}[mcp.env]\nNODE_ENV = \"production\"\n");
        assert!(crate::parse(std::path::Path::new("tool.toml"), None, &fine).is_ok());
    }
}
