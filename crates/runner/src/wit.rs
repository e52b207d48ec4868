//! A component function's WIT types as JSON: the JSON Schema of its parameters and result
//! (what MCP lists), MCP arguments converted to typed `Val`s (checked, an error naming the
//! field), and a returned `Val` as JSON.
//!
//! The mapping, one way for each type: records are objects (a field's JSON name is its WIT
//! name with `-` as `_`: WIT `max-len` is `max_len`; parameters likewise),
//! `list` and tuples arrays, `option` a value or `null` (an optional field may be left out),
//! enums a string, flags an array of strings, a variant case without a payload its name and
//! one with a payload `{"case": payload}`, a nested `result` `{"ok": …}` or `{"err": …}`.
//! The function's own `result<T, E>` is not a value: `ok` is the tool's result, `err` its
//! error (MCP `isError`). Resources, futures, streams and maps cannot be carried by JSON and
//! are refused when the component is loaded.

use serde_json::{Map, Value, json};
use wasmtime::component::{Type, Val};

/// Why a type cannot be a tool's parameter or result.
pub fn unsupported(ty: &Type) -> Option<String> {
    match ty {
        Type::Own(_) | Type::Borrow(_) => Some("a resource handle".into()),
        Type::Future(_) | Type::Stream(_) | Type::ErrorContext => {
            Some("an asynchronous value (future, stream or error-context)".into())
        }
        Type::Map(_) => Some("a map (use a list of records)".into()),
        Type::List(l) => unsupported(&l.ty()),
        Type::FixedLengthList(l) => unsupported(&l.ty()),
        Type::Option(o) => unsupported(&o.ty()),
        Type::Record(r) => r.fields().find_map(|f| unsupported(&f.ty)),
        Type::Tuple(t) => t.types().find_map(|t| unsupported(&t)),
        Type::Variant(v) => v.cases().find_map(|c| c.ty.as_ref().and_then(unsupported)),
        Type::Result(r) => r
            .ok()
            .as_ref()
            .and_then(unsupported)
            .or_else(|| r.err().as_ref().and_then(unsupported)),
        _ => None,
    }
}

/// The JSON Schema of a value of `ty`.
pub fn schema(ty: &Type) -> Value {
    let int = |min: i64, max: u64| json!({"type": "integer", "minimum": min, "maximum": max});
    match ty {
        Type::Bool => json!({"type": "boolean"}),
        Type::S8 => int(i8::MIN.into(), i8::MAX as u64),
        Type::U8 => int(0, u8::MAX.into()),
        Type::S16 => int(i16::MIN.into(), i16::MAX as u64),
        Type::U16 => int(0, u16::MAX.into()),
        Type::S32 => int(i32::MIN.into(), i32::MAX as u64),
        Type::U32 => int(0, u32::MAX.into()),
        Type::S64 => int(i64::MIN, i64::MAX as u64),
        Type::U64 => int(0, u64::MAX),
        Type::Float32 | Type::Float64 => json!({"type": "number"}),
        Type::Char => json!({"type": "string", "minLength": 1, "maxLength": 1}),
        Type::String => json!({"type": "string"}),
        Type::List(l) => json!({"type": "array", "items": schema(&l.ty())}),
        Type::FixedLengthList(l) => {
            json!({"type": "array", "items": schema(&l.ty()), "minItems": l.len(), "maxItems": l.len()})
        }
        Type::Record(r) => object(r.fields().map(|f| (f.name.to_string(), f.ty))),
        Type::Tuple(t) => {
            let items: Vec<Value> = t.types().map(|t| schema(&t)).collect();
            let n = items.len();
            json!({"type": "array", "prefixItems": items, "items": false, "minItems": n, "maxItems": n})
        }
        Type::Variant(v) => {
            let cases: Vec<Value> = v
                .cases()
                .map(|c| match &c.ty {
                    None => json!({"const": c.name}),
                    Some(t) => single(c.name, schema(t)),
                })
                .collect();
            json!({"oneOf": cases})
        }
        Type::Enum(e) => json!({"type": "string", "enum": e.names().collect::<Vec<_>>()}),
        Type::Option(o) => json!({"anyOf": [schema(&o.ty()), {"type": "null"}]}),
        Type::Result(r) => {
            let side = |t: Option<Type>| t.map_or(json!({"type": "null"}), |t| schema(&t));
            json!({"oneOf": [single("ok", side(r.ok())), single("err", side(r.err()))]})
        }
        Type::Flags(f) => json!({
            "type": "array",
            "items": {"type": "string", "enum": f.names().collect::<Vec<_>>()},
            "uniqueItems": true
        }),
        // Refused at load (`unsupported`); never listed.
        Type::Own(_)
        | Type::Borrow(_)
        | Type::Future(_)
        | Type::Stream(_)
        | Type::ErrorContext
        | Type::Map(_) => json!(false),
    }
}

/// `{"name": value}` with exactly that key.
fn single(name: &str, value: Value) -> Value {
    json!({"type": "object", "properties": {name: value}, "required": [name], "additionalProperties": false})
}

/// The JSON name of a WIT field or parameter: `-` written `_` (WIT identifiers are kebab-case,
/// MCP arguments conventionally snake_case).
pub fn json_name(wit: &str) -> String {
    wit.replace('-', "_")
}

/// The schema of an object whose fields are `fields` (option fields may be left out).
pub fn object(fields: impl Iterator<Item = (String, Type)>) -> Value {
    let mut props = Map::new();
    let mut required = Vec::new();
    for (name, ty) in fields {
        if !matches!(ty, Type::Option(_)) {
            required.push(Value::String(json_name(&name)));
        }
        props.insert(json_name(&name), schema(&ty));
    }
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

/// The MCP output schema of a function returning `ty` (the `ok` side of a result): only an
/// object can be MCP structured content, so other types have none.
pub fn output_schema(ty: Option<&Type>) -> Option<Value> {
    let ty = match ty {
        Some(Type::Result(r)) => r.ok()?,
        Some(t) => t.clone(),
        None => return None,
    };
    matches!(ty, Type::Record(_)).then(|| schema(&ty))
}

/// A JSON value that does not fit a WIT type: where and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// Where in the arguments, e.g. `at.label` or `shape.rect.x` (empty: the arguments).
    pub path: String,
    /// Why it does not fit.
    pub message: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "argument `{}`: {}", self.path, self.message)
        }
    }
}

fn join(path: &str, part: &str) -> String {
    if path.is_empty() {
        part.to_string()
    } else {
        format!("{path}.{part}")
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Convert the MCP arguments (an object) to the function's parameters, in order.
pub fn params(params: &[(String, Type)], args: &Value) -> Result<Vec<Val>, Mismatch> {
    let empty = Map::new();
    let obj = match args {
        Value::Object(o) => o,
        Value::Null => &empty,
        other => {
            return Err(Mismatch {
                path: String::new(),
                message: format!("the arguments must be an object, got {}", kind(other)),
            });
        }
    };
    fields(params.iter().map(|(n, t)| (n.as_str(), t)), obj, "")
        .map(|v| v.into_iter().map(|(_, v)| v).collect())
}

/// An object's fields by name: each present or optional, nothing unknown.
fn fields<'a>(
    decl: impl Iterator<Item = (&'a str, &'a Type)> + Clone,
    obj: &Map<String, Value>,
    path: &str,
) -> Result<Vec<(String, Val)>, Mismatch> {
    if let Some(k) = obj
        .keys()
        .find(|k| !decl.clone().any(|(n, _)| json_name(n) == k.as_str()))
    {
        let known: Vec<String> = decl.clone().map(|(n, _)| json_name(n)).collect();
        return Err(Mismatch {
            path: join(path, k),
            message: format!("no such field (expected: {})", known.join(", ")),
        });
    }
    decl.map(|(name, ty)| {
        let key = json_name(name);
        let at = join(path, &key);
        let v = match obj.get(&key) {
            Some(v) => value(ty, v, &at)?,
            None if matches!(ty, Type::Option(_)) => Val::Option(None),
            None => {
                return Err(Mismatch {
                    path: at,
                    message: "missing (it is required)".into(),
                });
            }
        };
        Ok((name.to_string(), v))
    })
    .collect()
}

/// Convert one JSON value to a `Val` of `ty`.
pub fn value(ty: &Type, v: &Value, path: &str) -> Result<Val, Mismatch> {
    let bad = |expected: String| Mismatch {
        path: path.to_string(),
        message: format!("expected {expected}, got {}", kind_shown(v)),
    };
    macro_rules! int {
        ($variant:ident, $t:ty, $name:literal) => {{
            let n = match v {
                Value::Number(n) => n
                    .as_i64()
                    .and_then(|i| <$t>::try_from(i).ok())
                    .or_else(|| n.as_u64().and_then(|u| <$t>::try_from(u).ok())),
                _ => None,
            };
            n.map(Val::$variant).ok_or_else(|| {
                bad(format!(
                    "an integer from {} to {} ({})",
                    <$t>::MIN,
                    <$t>::MAX,
                    $name
                ))
            })
        }};
    }
    match ty {
        Type::Bool => v
            .as_bool()
            .map(Val::Bool)
            .ok_or_else(|| bad("a boolean".into())),
        Type::S8 => int!(S8, i8, "s8"),
        Type::U8 => int!(U8, u8, "u8"),
        Type::S16 => int!(S16, i16, "s16"),
        Type::U16 => int!(U16, u16, "u16"),
        Type::S32 => int!(S32, i32, "s32"),
        Type::U32 => int!(U32, u32, "u32"),
        Type::S64 => int!(S64, i64, "s64"),
        Type::U64 => int!(U64, u64, "u64"),
        Type::Float32 => v
            .as_f64()
            .map(|f| Val::Float32(f as f32))
            .ok_or_else(|| bad("a number".into())),
        Type::Float64 => v
            .as_f64()
            .map(Val::Float64)
            .ok_or_else(|| bad("a number".into())),
        Type::Char => {
            let mut chars = v.as_str().map(|s| s.chars());
            match chars.as_mut().map(|c| (c.next(), c.next())) {
                Some((Some(c), None)) => Ok(Val::Char(c)),
                _ => Err(bad("a string of one character".into())),
            }
        }
        Type::String => v
            .as_str()
            .map(|s| Val::String(s.to_string()))
            .ok_or_else(|| bad("a string".into())),
        Type::List(l) => {
            let items = v.as_array().ok_or_else(|| bad("an array".into()))?;
            let t = l.ty();
            items
                .iter()
                .enumerate()
                .map(|(i, x)| value(&t, x, &join(path, &i.to_string())))
                .collect::<Result<_, _>>()
                .map(Val::List)
        }
        Type::FixedLengthList(l) => {
            let items = v
                .as_array()
                .filter(|a| a.len() == l.len() as usize)
                .ok_or_else(|| bad(format!("an array of {} items", l.len())))?;
            let t = l.ty();
            items
                .iter()
                .enumerate()
                .map(|(i, x)| value(&t, x, &join(path, &i.to_string())))
                .collect::<Result<_, _>>()
                .map(Val::FixedLengthList)
        }
        Type::Record(r) => {
            let obj = v.as_object().ok_or_else(|| bad("an object".into()))?;
            let decl: Vec<(String, Type)> =
                r.fields().map(|f| (f.name.to_string(), f.ty)).collect();
            fields(decl.iter().map(|(n, t)| (n.as_str(), t)), obj, path).map(Val::Record)
        }
        Type::Tuple(t) => {
            let types: Vec<Type> = t.types().collect();
            let items = v
                .as_array()
                .filter(|a| a.len() == types.len())
                .ok_or_else(|| bad(format!("an array of {} items", types.len())))?;
            types
                .iter()
                .zip(items)
                .enumerate()
                .map(|(i, (t, x))| value(t, x, &join(path, &i.to_string())))
                .collect::<Result<_, _>>()
                .map(Val::Tuple)
        }
        Type::Variant(var) => {
            let names: Vec<&str> = var.cases().map(|c| c.name).collect();
            let expected = || {
                bad(format!(
                    "one of {} (a case with a value as {{\"case\": value}})",
                    names.join(", ")
                ))
            };
            let (name, payload) = case_of(v).ok_or_else(expected)?;
            let case = var.cases().find(|c| c.name == name).ok_or_else(expected)?;
            match (&case.ty, payload) {
                (None, None) => Ok(Val::Variant(name.to_string(), None)),
                (Some(t), Some(p)) => Ok(Val::Variant(
                    name.to_string(),
                    Some(Box::new(value(t, p, &join(path, name))?)),
                )),
                (None, Some(_)) => Err(Mismatch {
                    path: path.to_string(),
                    message: format!("case {name} takes no value: give it as \"{name}\""),
                }),
                (Some(_), None) => Err(Mismatch {
                    path: path.to_string(),
                    message: format!("case {name} needs a value: give it as {{\"{name}\": …}}"),
                }),
            }
        }
        Type::Enum(e) => {
            let names: Vec<&str> = e.names().collect();
            match v.as_str() {
                Some(s) if names.contains(&s) => Ok(Val::Enum(s.to_string())),
                _ => Err(bad(format!("one of {}", names.join(", ")))),
            }
        }
        Type::Option(o) => match v {
            Value::Null => Ok(Val::Option(None)),
            x => Ok(Val::Option(Some(Box::new(value(&o.ty(), x, path)?)))),
        },
        Type::Result(r) => {
            let (name, payload) = case_of(v)
                .filter(|(n, _)| *n == "ok" || *n == "err")
                .ok_or_else(|| bad("{\"ok\": …} or {\"err\": …}".into()))?;
            let side = if name == "ok" { r.ok() } else { r.err() };
            let inner = match (side, payload) {
                (None, None | Some(Value::Null)) => None,
                (Some(t), Some(p)) => Some(Box::new(value(&t, p, &join(path, name))?)),
                (None, Some(_)) | (Some(_), None) => {
                    return Err(bad(format!("{{\"{name}\": …}} with a value of its type")));
                }
            };
            Ok(Val::Result(if name == "ok" {
                Ok(inner)
            } else {
                Err(inner)
            }))
        }
        Type::Flags(f) => {
            let names: Vec<&str> = f.names().collect();
            let items = v
                .as_array()
                .ok_or_else(|| bad("an array of flag names".into()))?;
            items
                .iter()
                .map(|x| match x.as_str() {
                    Some(s) if names.contains(&s) => Ok(s.to_string()),
                    _ => Err(Mismatch {
                        path: path.to_string(),
                        message: format!(
                            "expected flag names from {}, got {}",
                            names.join(", "),
                            kind_shown(x)
                        ),
                    }),
                })
                .collect::<Result<_, _>>()
                .map(Val::Flags)
        }
        Type::Own(_)
        | Type::Borrow(_)
        | Type::Future(_)
        | Type::Stream(_)
        | Type::ErrorContext
        | Type::Map(_) => Err(bad("a value JSON cannot carry".into())),
    }
}

/// A case given as `"name"` or `{"name": payload}`.
fn case_of(v: &Value) -> Option<(&str, Option<&Value>)> {
    match v {
        Value::String(s) => Some((s.as_str(), None)),
        Value::Object(o) if o.len() == 1 => o.iter().next().map(|(k, v)| (k.as_str(), Some(v))),
        _ => None,
    }
}

/// A value as an error message shows it: short.
fn kind_shown(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() <= 40 {
        format!("{} {text}", kind(v))
    } else {
        kind(v).to_string()
    }
}

/// A returned value as JSON.
pub fn to_json(v: &Val) -> Value {
    match v {
        Val::Bool(b) => json!(b),
        Val::S8(n) => json!(n),
        Val::U8(n) => json!(n),
        Val::S16(n) => json!(n),
        Val::U16(n) => json!(n),
        Val::S32(n) => json!(n),
        Val::U32(n) => json!(n),
        Val::S64(n) => json!(n),
        Val::U64(n) => json!(n),
        Val::Float32(f) => json!(f),
        Val::Float64(f) => json!(f),
        Val::Char(c) => json!(c.to_string()),
        Val::String(s) => json!(s),
        Val::List(items) | Val::Tuple(items) | Val::FixedLengthList(items) => {
            Value::Array(items.iter().map(to_json).collect())
        }
        Val::Record(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| (json_name(k), to_json(v)))
                .collect(),
        ),
        Val::Variant(name, None) | Val::Enum(name) => json!(name),
        Val::Variant(name, Some(p)) => json!({ name: to_json(p) }),
        Val::Option(o) => o.as_deref().map_or(Value::Null, to_json),
        Val::Result(r) => {
            let (name, inner) = match r {
                Ok(i) => ("ok", i),
                Err(i) => ("err", i),
            };
            json!({ name: inner.as_deref().map_or(Value::Null, to_json) })
        }
        Val::Flags(f) => json!(f),
        // Refused at load; a host never receives one.
        Val::Map(_) | Val::Resource(_) | Val::Future(_) | Val::Stream(_) | Val::ErrorContext(_) => {
            Value::Null
        }
    }
}
