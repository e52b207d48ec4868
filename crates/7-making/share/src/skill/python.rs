//! The Python a skill's scripts need: the skill's own modules a script imports, and pip
//! requirements (requirements.txt, else well-known packages of its imports; the rest reported
//! as missing).

use crate::converted::{language_of, text_of};
use crate::history::FileAt;

/// Python modules of the standard library (for telling dependencies from stdlib imports).
#[rustfmt::skip]
const PY_STDLIB: &[&str] = &[
    "__future__", "abc", "argparse", "array", "ast", "asyncio", "base64", "binascii", "bisect",
    "builtins", "bz2", "calendar", "cmath", "codecs", "collections", "colorsys", "concurrent",
    "configparser", "contextlib", "copy", "csv", "ctypes", "dataclasses", "datetime", "decimal",
    "difflib", "email", "enum", "errno", "fnmatch", "fractions", "functools", "gc", "getpass",
    "glob", "gzip", "hashlib", "heapq", "hmac", "html", "http", "importlib", "inspect", "io",
    "ipaddress", "itertools", "json", "keyword", "logging", "lzma", "math", "mimetypes",
    "multiprocessing", "numbers", "operator", "os", "pathlib", "pickle", "platform", "pprint",
    "queue", "random", "re", "secrets", "select", "shlex", "shutil", "signal", "socket",
    "sqlite3", "ssl", "stat", "statistics", "string", "struct", "subprocess", "sys", "tarfile",
    "tempfile", "textwrap", "threading", "time", "timeit", "tomllib", "traceback", "types",
    "typing", "unicodedata", "unittest", "urllib", "uuid", "warnings", "weakref", "xml",
    "zipfile", "zlib", "zoneinfo",
];

/// pip packages of well-known imports whose names differ or are certain.
const PY_PACKAGES: &[(&str, &str)] = &[
    ("PIL", "pillow"),
    ("yaml", "pyyaml"),
    ("cv2", "opencv-python"),
    ("bs4", "beautifulsoup4"),
    ("sklearn", "scikit-learn"),
    ("numpy", "numpy"),
    ("pandas", "pandas"),
    ("requests", "requests"),
    ("playwright", "playwright"),
    ("imageio", "imageio"),
];

/// The top-level modules a Python source imports.
pub(super) fn py_imports(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        let names: Vec<&str> = if let Some(rest) = l.strip_prefix("import ") {
            rest.split(',')
                .map(|m| m.split_whitespace().next().unwrap_or(""))
                .collect()
        } else if let Some(rest) = l.strip_prefix("from ") {
            vec![rest.split_whitespace().next().unwrap_or("")]
        } else {
            continue;
        };
        for n in names {
            let top = n.split('.').next().unwrap_or("").to_string();
            if !top.is_empty() && !out.contains(&top) {
                out.push(top);
            }
        }
    }
    out
}

/// The pip requirements of a skill's code (requirements.txt, else the known packages its
/// Python imports), and the imports it could not map to a package.
pub(super) fn python_dependencies(
    files: &[FileAt],
    code: &[&FileAt],
) -> (Vec<String>, Vec<String>) {
    let local: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let p = f.path.strip_suffix(".py")?;
            Some(p.rsplit('/').next().unwrap_or(p).to_string())
        })
        .chain(
            files
                .iter()
                .filter_map(|f| f.path.split_once('/').map(|(d, _)| d.to_string())),
        )
        .collect();
    let requirements: Vec<String> = files
        .iter()
        .find(|f| f.path == "requirements.txt")
        .and_then(text_of)
        .map(|t| {
            t.lines()
                .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
                .filter(|l| !l.is_empty() && !l.starts_with('-'))
                .collect()
        })
        .unwrap_or_default();
    let mut declared = requirements.clone();
    let mut missing = Vec::new();
    for f in code {
        for m in py_imports(text_of(f).unwrap_or("")) {
            if PY_STDLIB.contains(&m.as_str()) || local.contains(&m) {
                continue;
            }
            let in_requirements = requirements
                .iter()
                .any(|r| r.to_ascii_lowercase().starts_with(&m.to_ascii_lowercase()));
            match PY_PACKAGES.iter().find(|(i, _)| *i == m) {
                _ if in_requirements => {}
                Some((_, pkg))
                    if !requirements
                        .iter()
                        .any(|r| r.to_ascii_lowercase().starts_with(pkg)) =>
                {
                    if !declared.iter().any(|d| d == pkg) {
                        declared.push(pkg.to_string());
                    }
                }
                Some(_) => {}
                None => {
                    if !missing.contains(&m) {
                        missing.push(m);
                    }
                }
            }
        }
    }
    (declared, missing)
}

/// Python module names a file of the skill provides (`helper` for `scripts/helper.py`, `core`
/// for `core/…`).
pub(super) fn module_names(f: &FileAt) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(p) = f.path.strip_suffix(".py") {
        out.push(p.rsplit('/').next().unwrap_or(p).to_string());
    }
    if let Some((dir, _)) = f.path.split_once('/') {
        out.push(dir.to_string());
    }
    out
}

/// The skill's Python files `script` imports, directly or through each other (itself first).
pub(super) fn local_code<'a>(files: &'a [FileAt], script: &'a FileAt) -> Vec<&'a FileAt> {
    let mut out = vec![script];
    let mut i = 0;
    while i < out.len() {
        let imports = if language_of(&out[i].path) == Some("python") {
            py_imports(text_of(out[i]).unwrap_or(""))
        } else {
            Vec::new()
        };
        for f in files {
            if language_of(&f.path) == Some("python")
                && !out.iter().any(|o| o.path == f.path)
                && module_names(f).iter().any(|m| imports.contains(m))
            {
                out.push(f);
            }
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_dependencies_are_inferred_or_missing() {
        let f = |p: &str, t: &str| FileAt {
            path: p.into(),
            bytes: t.as_bytes().to_vec(),
            executable: false,
        };
        let files = vec![
            f(
                "scripts/a.py",
                "import json, os\nfrom PIL import Image\nimport helper\nimport weirdlib\n",
            ),
            f("scripts/helper.py", "import numpy as np\n"),
        ];
        let code: Vec<&FileAt> = files.iter().collect();
        let (declared, missing) = python_dependencies(&files, &code);
        assert_eq!(declared, ["pillow", "numpy"]);
        assert_eq!(missing, ["weirdlib"]);
    }
}
