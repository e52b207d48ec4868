//! MCP arguments to a component function's typed parameters, checked: an error names the
//! argument. Guided by the declared input schema where it has one (`form`).

use super::form::{self, Form};
use super::json_name;
use serde_json::{Map, Value};
use wasmtime::component::{Type, Val};

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
    params_guided(params, args, None)
}

/// Convert the MCP arguments to the function's parameters as the declared input schema
/// `schema` says (its properties by their JSON names, free-form values as JSON text, …);
/// without one (or one that is no object of properties), by the WIT types alone.
pub fn params_guided(
    params: &[(String, Type)],
    args: &Value,
    schema: Option<&Map<String, Value>>,
) -> Result<Vec<Val>, Mismatch> {
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
    let props = match schema.map(form::classify_map) {
        Some(Ok(Form::Record { props, .. })) => props,
        _ => Vec::new(),
    };
    fields(params.iter().map(|(n, t)| (n.as_str(), t)), obj, "", &props)
        .map(|v| v.into_iter().map(|(_, v)| v).collect())
}

/// The JSON name of the WIT field `name` and its schema: the declared property whose WIT name
/// it is, else its own JSON name.
fn property<'s>(name: &str, props: &[(&'s str, &'s Value)]) -> (String, Option<&'s Value>) {
    props
        .iter()
        .find(|(k, _)| form::wit_name(k).as_deref() == Some(name))
        .map(|(k, s)| (k.to_string(), Some(*s)))
        .unwrap_or_else(|| (json_name(name), None))
}

/// An object's fields by name: each present or optional, nothing unknown.
fn fields<'a>(
    decl: impl Iterator<Item = (&'a str, &'a Type)> + Clone,
    obj: &Map<String, Value>,
    path: &str,
    props: &[(&str, &Value)],
) -> Result<Vec<(String, Val)>, Mismatch> {
    let keys: Vec<(String, Option<&Value>)> =
        decl.clone().map(|(n, _)| property(n, props)).collect();
    if let Some(k) = obj.keys().find(|k| !keys.iter().any(|(j, _)| j == *k)) {
        let known: Vec<&str> = keys.iter().map(|(k, _)| k.as_str()).collect();
        return Err(Mismatch {
            path: join(path, k),
            message: format!("no such field (expected: {})", known.join(", ")),
        });
    }
    decl.zip(keys)
        .map(|((name, ty), (key, schema))| {
            let at = join(path, &key);
            let v = match obj.get(&key) {
                Some(v) => guided(ty, v, &at, schema)?,
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
    guided(ty, v, path, None)
}

/// Convert one JSON value to a `Val` of `ty` as its declared schema says, where the schema has
/// a form the type is (see `form`); else by the type alone.
fn guided(ty: &Type, v: &Value, path: &str, schema: Option<&Value>) -> Result<Val, Mismatch> {
    if let Some(s) = schema
        && let Ok(f) = form::classify(s)
        && let Some(val) = by_form(ty, v, path, &f)?
    {
        return Ok(val);
    }
    let bad = |expected: String| Mismatch {
        path: path.to_string(),
        message: format!("expected {expected}, got {}", kind_shown(v)),
    };
    if let (Type::Option(o), Some(_)) = (ty, schema) {
        // Not required, so an option: the schema is the value's.
        return match v {
            Value::Null => Ok(Val::Option(None)),
            x => Ok(Val::Option(Some(Box::new(guided(
                &o.ty(),
                x,
                path,
                schema,
            )?)))),
        };
    }
    unguided(ty, v, path, bad)
}

/// The value as the schema's form says, or None when the form is not the type's.
fn by_form(ty: &Type, v: &Value, path: &str, f: &Form<'_>) -> Result<Option<Val>, Mismatch> {
    let bad = |expected: &str| Mismatch {
        path: path.to_string(),
        message: format!("expected {expected}, got {}", kind_shown(v)),
    };
    let at = |i: usize| join(path, &i.to_string());
    Ok(Some(match (ty, f) {
        (Type::String, Form::Free) => Val::String(v.to_string()),
        (Type::Option(o), Form::Nullable(inner)) => match v {
            Value::Null => Val::Option(None),
            x => Val::Option(Some(Box::new(guided(&o.ty(), x, path, Some(inner))?))),
        },
        (Type::List(l), Form::List(items)) => {
            let a = v.as_array().ok_or_else(|| bad("an array"))?;
            let t = l.ty();
            Val::List(
                a.iter()
                    .enumerate()
                    .map(|(i, x)| guided(&t, x, &at(i), Some(items)))
                    .collect::<Result<_, _>>()?,
            )
        }
        (Type::List(l), Form::Map(values)) => {
            let Type::Tuple(pair) = l.ty() else {
                return Ok(None);
            };
            let Some(t) = pair.types().nth(1) else {
                return Ok(None);
            };
            let o = v.as_object().ok_or_else(|| bad("an object"))?;
            Val::List(
                o.iter()
                    .map(|(k, x)| {
                        let val = guided(&t, x, &join(path, k), Some(values))?;
                        Ok(Val::Tuple(vec![Val::String(k.clone()), val]))
                    })
                    .collect::<Result<_, Mismatch>>()?,
            )
        }
        (Type::Tuple(t), Form::Tuple(items)) => {
            let types: Vec<Type> = t.types().collect();
            let a = v
                .as_array()
                .filter(|a| a.len() == types.len())
                .ok_or_else(|| bad(&format!("an array of {} items", types.len())))?;
            Val::Tuple(
                types
                    .iter()
                    .zip(a)
                    .enumerate()
                    .map(|(i, (t, x))| guided(t, x, &at(i), items.get(i).copied()))
                    .collect::<Result<_, _>>()?,
            )
        }
        (Type::Record(r), Form::Record { props, .. }) => {
            let o = v.as_object().ok_or_else(|| bad("an object"))?;
            let decl: Vec<(String, Type)> =
                r.fields().map(|f| (f.name.to_string(), f.ty)).collect();
            Val::Record(fields(
                decl.iter().map(|(n, t)| (n.as_str(), t)),
                o,
                path,
                props,
            )?)
        }
        (Type::Variant(var), Form::Union(cases)) => {
            let names: Vec<&str> = var.cases().map(|c| c.name).collect();
            if names.len() != cases.len()
                || names.iter().zip(cases).any(|(n, (k, _))| *n != k.case())
            {
                return Ok(None);
            }
            let kinds: Vec<&str> = cases.iter().map(|(k, _)| k.case()).collect();
            let i = cases
                .iter()
                .position(|(k, _)| k.holds(v))
                .or_else(|| {
                    // An integer where only a number is, or a whole number where only an
                    // integer is.
                    let want = match v {
                        Value::Number(n) if n.is_f64() => form::Kind::Integer,
                        Value::Number(_) => form::Kind::Number,
                        _ => return None,
                    };
                    let whole = v.as_f64().is_some_and(|f| f.fract() == 0.0);
                    cases
                        .iter()
                        .position(|(k, _)| *k == want && (want == form::Kind::Number || whole))
                })
                .ok_or_else(|| bad(&format!("one of: {}", kinds.join(", "))))?;
            let case = var.cases().nth(i).ok_or_else(|| bad("a case"))?;
            let payload = match case.ty {
                Some(t) => {
                    let x = if cases[i].0 == form::Kind::Integer && v.is_f64() {
                        serde_json::json!(v.as_f64().unwrap_or_default() as i64)
                    } else {
                        v.clone()
                    };
                    Some(Box::new(guided(&t, &x, path, Some(&cases[i].1))?))
                }
                None => None,
            };
            Val::Variant(case.name.to_string(), payload)
        }
        (Type::Enum(e), Form::Enum(values)) => {
            let names: Vec<&str> = e.names().collect();
            let case = v
                .as_str()
                .filter(|x| values.contains(x))
                .and_then(form::wit_name)
                .filter(|c| names.contains(&c.as_str()))
                .ok_or_else(|| bad(&format!("one of {}", values.join(", "))))?;
            Val::Enum(case)
        }
        _ => return Ok(None),
    }))
}

/// Convert one JSON value to a `Val` of `ty` by its WIT type alone.
fn unguided(
    ty: &Type,
    v: &Value,
    path: &str,
    bad: impl Fn(String) -> Mismatch,
) -> Result<Val, Mismatch> {
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
            fields(decl.iter().map(|(n, t)| (n.as_str(), t)), obj, path, &[]).map(Val::Record)
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
