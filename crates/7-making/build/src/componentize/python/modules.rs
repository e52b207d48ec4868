//! The modules a Python component may import: what app.py imports, checked before the build
//! (a module that cannot work in a component refused by name, with what to do instead), and
//! what the entry module loads at build time so that the component has it at call time.
//!
//! Which modules cannot work was found by building componentize-py 0.25.1 components (CPython
//! 3.14) that import and use each: `socket` imports but has no network (name lookups fail,
//! connections are refused), `subprocess` cannot start a process ("wasi does not support
//! processes"), `threading` cannot start a thread, `asyncio` cannot make its event loop,
//! `zoneinfo` has no time-zone database; `ssl`, `ctypes`, `mmap`, `fcntl`, `termios`, `pwd`,
//! `grp`, `resource`, `curses`, `readline`, `tkinter`, `bz2` and `lzma` are not in its CPython.
//! `hashlib`, `json`, `re`, `math`, `datetime`, `decimal`, `statistics`, `sqlite3` (in memory),
//! `zlib`, `unicodedata`, `random`, `uuid` and the rest of the pure-Python library work once
//! loaded.

use crate::BuildError;
use serde::Deserialize;

/// An import of app.py.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct Import {
    /// The module, dotted.
    pub name: String,
    /// Its line in app.py.
    pub line: u64,
    /// `from m import x`'s `m.x`: a submodule or not.
    pub optional: bool,
    /// `stdlib`, `local` (a file of the tool), `bindings` (componentize-py's) or `other`.
    pub origin: String,
}

const NETWORK: &str = "a component has no sockets (its only way out is an HTTP request through `wasi:http`, which a JavaScript component's `fetch` makes)";
const PROCESSES: &str = "a component cannot start processes";
const THREADS: &str = "a component cannot start threads";
const MISSING: &str = "the component's CPython does not have it (no native library behind it)";

/// Standard-library modules (and their submodules) a component cannot use, and why.
const REFUSED: &[(&str, &str)] = &[
    ("socket", NETWORK),
    ("ssl", NETWORK),
    ("select", NETWORK),
    ("selectors", NETWORK),
    ("socketserver", NETWORK),
    ("http.client", NETWORK),
    ("http.server", NETWORK),
    ("urllib.request", NETWORK),
    ("ftplib", NETWORK),
    ("smtplib", NETWORK),
    ("poplib", NETWORK),
    ("imaplib", NETWORK),
    ("xmlrpc", NETWORK),
    (
        "asyncio",
        "a component cannot run its event loop (no sockets, no threads)",
    ),
    ("subprocess", PROCESSES),
    ("multiprocessing", PROCESSES),
    ("pty", PROCESSES),
    ("webbrowser", PROCESSES),
    ("threading", THREADS),
    ("_thread", THREADS),
    ("concurrent", THREADS),
    ("zoneinfo", "a component has no time-zone database"),
    ("ctypes", MISSING),
    ("mmap", MISSING),
    ("fcntl", MISSING),
    ("termios", MISSING),
    ("tty", MISSING),
    ("pwd", MISSING),
    ("grp", MISSING),
    ("resource", MISSING),
    ("curses", MISSING),
    ("readline", MISSING),
    ("tkinter", MISSING),
    ("bz2", MISSING),
    ("lzma", MISSING),
];

/// Modules the standard library imports only when a function of it runs, loaded with the
/// module that needs them.
const COMPANIONS: &[(&str, &[&str])] = &[
    ("datetime", &["_strptime"]),
    ("time", &["_strptime"]),
    ("calendar", &["_strptime"]),
    (
        "xml.dom.minidom",
        &[
            "xml.dom.expatbuilder",
            "xml.dom.minicompat",
            "xml.dom.xmlbuilder",
        ],
    ),
];

/// The text codecs `str.encode` and `bytes.decode` look up by name, loaded always (a codec
/// not loaded at build time is an unknown encoding at call time).
const CODECS: &[&str] = &[
    "encodings.ascii",
    "encodings.latin_1",
    "encodings.utf_16",
    "encodings.utf_16_le",
    "encodings.utf_16_be",
    "encodings.utf_32",
    "encodings.utf_8_sig",
    "encodings.cp1252",
    "encodings.cp437",
    "encodings.idna",
    "encodings.punycode",
    "encodings.unicode_escape",
    "encodings.raw_unicode_escape",
    "encodings.hex_codec",
    "encodings.base64_codec",
    "encodings.rot_13",
];

/// Why a module cannot be used in a component, if it cannot.
pub(super) fn refused(name: &str) -> Option<&'static str> {
    REFUSED
        .iter()
        .find(|(m, _)| name == *m || name.strip_prefix(m).is_some_and(|r| r.starts_with('.')))
        .map(|(_, why)| *why)
}

/// Check app.py's imports: every one refused names its module, line and why. Else the
/// modules to load at build time (each must import) and those to try (submodules or not).
pub(super) fn check(
    imports: &[Import],
    tool: &str,
) -> Result<(Vec<String>, Vec<String>), BuildError> {
    let mut problems = Vec::new();
    let mut preload: Vec<String> = Vec::new();
    let mut optional: Vec<String> = CODECS.iter().map(|c| c.to_string()).collect();
    for i in imports {
        if let Some(why) = refused(&i.name) {
            problems.push(format!("`{}` (line {}): {why}", i.name, i.line));
            continue;
        }
        if i.optional {
            optional.push(i.name.clone());
            continue;
        }
        if i.origin == "other" {
            problems.push(format!(
                "`{}` (line {}): it is not in the standard library, and a component has no pip packages",
                i.name, i.line
            ));
            continue;
        }
        if i.origin == "bindings" {
            continue;
        }
        for (m, with) in COMPANIONS {
            if i.name == *m {
                optional.extend(with.iter().map(|w| w.to_string()));
            }
        }
        if !preload.contains(&i.name) {
            preload.push(i.name.clone());
        }
    }
    if !problems.is_empty() {
        return Err(BuildError::Python {
            tool: tool.to_string(),
            message: format!(
                "app.py imports what a Python component cannot use:\n  {}",
                problems.join("\n  ")
            ),
            hint: "drop the import, or register the tool as a script instead: `register_script` with language \"python\" runs it in the OS sandbox, with `dependencies` for packages and `capabilities.network` for hosts (a script reads its arguments as JSON on stdin and prints its result: toolsmith://guide)".into(),
        });
    }
    optional.dedup();
    Ok((preload, optional))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn import(name: &str, optional: bool, origin: &str) -> Import {
        Import {
            name: name.into(),
            line: 3,
            optional,
            origin: origin.into(),
        }
    }

    #[test]
    fn what_cannot_work_is_refused_by_name() {
        let e = check(
            &[
                import("hashlib", false, "stdlib"),
                import("socket", false, "stdlib"),
                import("urllib", false, "stdlib"),
                import("urllib.request", true, "stdlib"),
                import("concurrent.futures", false, "stdlib"),
                import("numpy", false, "other"),
            ],
            "t",
        )
        .unwrap_err();
        let text = e.to_string();
        for m in [
            "`socket` (line 3)",
            "`urllib.request`",
            "`concurrent.futures`",
            "`numpy`",
        ] {
            assert!(text.contains(m), "{m}: {text}");
        }
        assert!(!text.contains("hashlib"), "{text}");
        assert!(
            toolsmith_error::Hint::hint(&e).is_some_and(|h| h.contains("register_script")),
            "{e:?}"
        );
    }

    #[test]
    fn what_works_is_loaded_at_build_time() {
        let (preload, optional) = check(
            &[
                import("hashlib", false, "stdlib"),
                import("datetime", false, "stdlib"),
                import("helpers", false, "local"),
                import("wit_world", false, "bindings"),
                import("typing.Any", true, "stdlib"),
                import("urllib.parse", false, "stdlib"),
            ],
            "t",
        )
        .expect("allowed");
        assert_eq!(preload, ["hashlib", "datetime", "helpers", "urllib.parse"]);
        for m in ["_strptime", "typing.Any", "encodings.cp1252"] {
            assert!(optional.iter().any(|o| o == m), "{m}: {optional:?}");
        }
        assert_eq!(refused("socketserver"), Some(NETWORK));
        assert_eq!(refused("sockets"), None);
    }
}
