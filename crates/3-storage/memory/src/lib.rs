//! Per-tool persistent memory: a small key–value store per tool, kept as one JSON file per tool
//! under the toolbox's git-ignored `.toolsmith/memory/` and replaced atomically on every write.
//!
//! Memory survives restarts and is never committed: it is a tool's working state, not its
//! source. A write holds the tool's file lock (`<tool>.lock`), so writers in every process are
//! serialized.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use thiserror::Error;
use toolsmith_error::{HostCode, HostError};

/// The largest value one key may hold, in bytes of JSON.
pub const MAX_VALUE_BYTES: usize = 1 << 20;
/// The most keys one tool may keep.
pub const MAX_KEYS: usize = 10_000;

/// What went wrong with memory.
/// Each variant is told by its `#[error]` message; the fields are what the message names.
#[allow(missing_docs)]
#[derive(Debug, Error)]
pub enum MemoryError {
    #[error("invalid tool name: {0}")]
    Name(#[from] toolsmith_names::NameError),
    #[error("the key must be a non-empty string of at most 256 characters")]
    BadKey,
    #[error("the value is {bytes} bytes of JSON; one key holds at most {MAX_VALUE_BYTES}")]
    TooLarge { bytes: usize },
    #[error("tool {tool:?} already keeps {MAX_KEYS} keys")]
    TooManyKeys { tool: String },
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not valid memory JSON: {message}")]
    Corrupt { path: PathBuf, message: String },
}

impl toolsmith_error::Hint for MemoryError {
    /// What to do about it.
    fn hint(&self) -> Option<String> {
        Some(match self {
            MemoryError::Name(e) => return e.hint(),
            MemoryError::BadKey => "use a short non-empty key such as \"last_run\"".into(),
            MemoryError::TooLarge { .. } => "store less per key, or split it".into(),
            MemoryError::TooManyKeys { .. } => "delete keys the tool no longer needs".into(),
            MemoryError::Io { .. } => "check permissions and free space".into(),
            MemoryError::Corrupt { path, .. } => {
                format!("fix or delete {} (it is not committed)", path.display())
            }
        })
    }
}

/// The memory of every tool of one toolbox.
#[derive(Debug, Clone)]
pub struct Memory {
    dir: PathBuf,
}

impl Memory {
    /// The memory of the toolbox at `root` (`<root>/.toolsmith/memory/`).
    pub fn for_toolbox(root: &Path) -> Memory {
        Memory::at(root.join(".toolsmith").join("memory"))
    }

    /// Memory kept in `dir`, one `<tool>.json` per tool.
    pub fn at(dir: PathBuf) -> Memory {
        Memory { dir }
    }

    fn file(&self, tool: &str) -> Result<PathBuf, MemoryError> {
        toolsmith_names::validate(tool)?;
        Ok(self.dir.join(format!("{tool}.json")))
    }

    fn load(&self, tool: &str) -> Result<Map<String, Value>, MemoryError> {
        let path = self.file(tool)?;
        match std::fs::read(&path) {
            Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
                Ok(Value::Object(m)) => Ok(m),
                Ok(_) => Err(MemoryError::Corrupt {
                    path,
                    message: "not a JSON object".into(),
                }),
                Err(e) => Err(MemoryError::Corrupt {
                    path,
                    message: e.to_string(),
                }),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
            Err(source) => Err(MemoryError::Io {
                action: "read",
                path,
                source,
            }),
        }
    }

    /// Write the whole map: a temporary file in the same directory, renamed over the old one.
    fn save(&self, tool: &str, map: &Map<String, Value>) -> Result<(), MemoryError> {
        let path = self.file(tool)?;
        let io = |action: &'static str, path: &Path| {
            let path = path.to_path_buf();
            move |source| MemoryError::Io {
                action,
                path,
                source,
            }
        };
        if map.is_empty() {
            return match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io("remove", &path)(e)),
                _ => Ok(()),
            };
        }
        std::fs::create_dir_all(&self.dir).map_err(io("create", &self.dir))?;
        let bytes = serde_json::to_vec_pretty(map).unwrap_or_default();
        toolsmith_platform::write_atomic(&path, &bytes, toolsmith_platform::Atomic::RECORD)
            .map_err(io("write", &path))
    }

    /// The lock of `tool`'s file (`<tool>.lock` beside it), held by a read-modify-write: a
    /// server and a CLI command, or two calls, never lose each other's change. Reads take no
    /// lock: a file is only ever replaced whole.
    fn guard(&self, tool: &str) -> Result<std::fs::File, MemoryError> {
        let path = self.file(tool)?.with_extension("lock");
        toolsmith_platform::lock(&path).map_err(|source| MemoryError::Io {
            action: "lock",
            path,
            source,
        })
    }

    /// The value of `key`, if set.
    pub fn get(&self, tool: &str, key: &str) -> Result<Option<Value>, MemoryError> {
        check_key(key)?;
        Ok(self.load(tool)?.remove(key))
    }

    /// Set `key` to `value`; returns the previous value.
    pub fn set(&self, tool: &str, key: &str, value: Value) -> Result<Option<Value>, MemoryError> {
        check_key(key)?;
        let bytes = value.to_string().len();
        if bytes > MAX_VALUE_BYTES {
            return Err(MemoryError::TooLarge { bytes });
        }
        let _g = self.guard(tool)?;
        let mut map = self.load(tool)?;
        if !map.contains_key(key) && map.len() >= MAX_KEYS {
            return Err(MemoryError::TooManyKeys {
                tool: tool.to_string(),
            });
        }
        let old = map.insert(key.to_string(), value);
        self.save(tool, &map)?;
        Ok(old)
    }

    /// Delete `key`; returns whether it existed.
    pub fn delete(&self, tool: &str, key: &str) -> Result<bool, MemoryError> {
        check_key(key)?;
        let _g = self.guard(tool)?;
        let mut map = self.load(tool)?;
        let existed = map.remove(key).is_some();
        if existed {
            self.save(tool, &map)?;
        }
        Ok(existed)
    }

    /// The keys of a tool, sorted, optionally only those starting with `prefix`.
    pub fn list(&self, tool: &str, prefix: Option<&str>) -> Result<Vec<String>, MemoryError> {
        let mut keys: Vec<String> = self
            .load(tool)?
            .keys()
            .filter(|k| prefix.is_none_or(|p| k.starts_with(p)))
            .cloned()
            .collect();
        keys.sort();
        Ok(keys)
    }

    /// Keys and bytes per tool (or of one tool).
    pub fn stats(&self, tool: Option<&str>) -> Result<Value, MemoryError> {
        let mut tools = Vec::new();
        let names: Vec<String> = match tool {
            Some(t) => vec![t.to_string()],
            None => {
                let mut v: Vec<String> = std::fs::read_dir(&self.dir)
                    .map(|rd| {
                        rd.filter_map(Result::ok)
                            .filter_map(|e| {
                                let n = e.file_name().to_string_lossy().into_owned();
                                n.strip_suffix(".json").map(str::to_string)
                            })
                            .filter(|n| toolsmith_names::validate(n).is_ok())
                            .collect()
                    })
                    .unwrap_or_default();
                v.sort();
                v
            }
        };
        let (mut total_keys, mut total_bytes) = (0usize, 0u64);
        for name in names {
            let map = self.load(&name)?;
            let bytes = std::fs::metadata(self.file(&name)?)
                .map(|m| m.len())
                .unwrap_or(0);
            total_keys += map.len();
            total_bytes += bytes;
            tools.push(json!({"tool": name, "keys": map.len(), "bytes": bytes}));
        }
        Ok(json!({"tools": tools, "keys": total_keys, "bytes": total_bytes, "dir": self.dir}))
    }

    /// Answer a tool's memory request (`memory/*`, parsed by [`MemoryOp::parse`]) for `tool`:
    /// its result, or how the host refuses it.
    pub fn answer(&self, tool: &str, op: MemoryOp) -> Result<Value, HostError> {
        let fail = |e: MemoryError| HostError::new(HostCode::Refused, e.to_string());
        match op {
            MemoryOp::Get { key } => {
                let v = self.get(tool, &key).map_err(fail)?;
                Ok(json!({"key": key, "found": v.is_some(), "value": v}))
            }
            MemoryOp::Set { key, value } => {
                let old = self.set(tool, &key, value).map_err(fail)?;
                Ok(json!({"key": key, "previous": old}))
            }
            MemoryOp::Delete { key } => {
                let existed = self.delete(tool, &key).map_err(fail)?;
                Ok(json!({"key": key, "deleted": existed}))
            }
            MemoryOp::List { prefix } => {
                Ok(json!({"keys": self.list(tool, prefix.as_deref()).map_err(fail)?}))
            }
        }
    }
}

/// A tool's memory request, as the script protocol's `memory/get`, `memory/set`,
/// `memory/delete` and `memory/list` carry it.
#[derive(Debug, Clone, PartialEq)]
pub enum MemoryOp {
    /// `memory/get {key}`
    Get {
        /// The key read.
        key: String,
    },
    /// `memory/set {key, value}`
    Set {
        /// The key written.
        key: String,
        /// Its new value (`null` when the request has none).
        value: Value,
    },
    /// `memory/delete {key}`
    Delete {
        /// The key removed.
        key: String,
    },
    /// `memory/list {prefix?}`
    List {
        /// Only keys starting with it, when given.
        prefix: Option<String>,
    },
}

impl MemoryOp {
    /// The request `method` (one of `memory/*`) with `params`; an unknown memory method or a
    /// missing `key` is refused as the host refuses it.
    pub fn parse(method: &str, mut params: Value) -> Result<MemoryOp, HostError> {
        let key = || {
            params
                .get("key")
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or(HostError::new(
                    HostCode::InvalidParams,
                    format!("{method} needs a string `key`"),
                ))
        };
        Ok(match method {
            "memory/get" => MemoryOp::Get { key: key()? },
            "memory/set" => MemoryOp::Set {
                key: key()?,
                value: params
                    .get_mut("value")
                    .map(Value::take)
                    .unwrap_or(Value::Null),
            },
            "memory/delete" => MemoryOp::Delete { key: key()? },
            "memory/list" => MemoryOp::List {
                prefix: params
                    .get("prefix")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            },
            other => {
                return Err(HostError::new(
                    HostCode::MethodNotFound,
                    format!("unknown memory method {other:?}"),
                ));
            }
        })
    }

    /// Its method's name in the script protocol.
    pub fn method(&self) -> &'static str {
        match self {
            MemoryOp::Get { .. } => "memory/get",
            MemoryOp::Set { .. } => "memory/set",
            MemoryOp::Delete { .. } => "memory/delete",
            MemoryOp::List { .. } => "memory/list",
        }
    }
}

fn check_key(key: &str) -> Result<(), MemoryError> {
    if key.is_empty() || key.chars().count() > 256 {
        return Err(MemoryError::BadKey);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memory_request_is_parsed_once_and_answered_by_its_kind() {
        let tmp = tempfile::tempdir().unwrap();
        let m = Memory::at(tmp.path().to_path_buf());
        let op = |method: &str, params: Value| MemoryOp::parse(method, params).unwrap();
        let set = op("memory/set", json!({"key": "k", "value": [1, 2]}));
        assert_eq!(set.method(), "memory/set");
        assert_eq!(m.answer("t", set).unwrap()["previous"], Value::Null);
        let got = m
            .answer("t", op("memory/get", json!({"key": "k"})))
            .unwrap();
        assert_eq!(got["value"], json!([1, 2]));
        let listed = m
            .answer("t", op("memory/list", json!({"prefix": "k"})))
            .unwrap();
        assert_eq!(listed["keys"], json!(["k"]));
        assert_eq!(
            MemoryOp::parse("memory/get", json!({})).unwrap_err().code,
            HostCode::InvalidParams
        );
        assert_eq!(
            MemoryOp::parse("memory/wipe", json!({"key": "k"}))
                .unwrap_err()
                .code,
            HostCode::MethodNotFound
        );
    }

    #[test]
    fn set_get_list_delete_persist_across_instances() {
        let tmp = tempfile::tempdir().unwrap();
        let m = Memory::at(tmp.path().join("mem"));
        assert_eq!(m.get("t", "a").unwrap(), None);
        m.set("t", "a", json!({"n": 1})).unwrap();
        m.set("t", "b", json!("x")).unwrap();
        let again = Memory::at(tmp.path().join("mem"));
        assert_eq!(again.get("t", "a").unwrap(), Some(json!({"n": 1})));
        assert_eq!(again.list("t", None).unwrap(), vec!["a", "b"]);
        assert!(again.delete("t", "a").unwrap());
        assert!(!again.delete("t", "a").unwrap());
        assert_eq!(again.stats(None).unwrap()["keys"], 1);
        assert!(m.get("../x", "a").is_err());
        assert!(m.set("t", "", json!(1)).is_err());
    }
}
