//! A component function's returned value as JSON, guided by the declared output schema
//! where it has one (`form`).

use super::form::{self, Form};
use super::json_name;
use serde_json::{Map, Value, json};
use wasmtime::component::Val;

/// A returned value as JSON.
pub fn to_json(v: &Val) -> Value {
    out(v, None)
}

/// A returned value as JSON as the declared output schema `schema` says (free-form values
/// decoded from their JSON text, a union's case its bare value, a map an object, a property by
/// its JSON name, an absent optional property left out unless the schema admits `null`);
/// without one, by the value alone.
pub fn to_json_guided(v: &Val, schema: Option<&Map<String, Value>>) -> Value {
    match schema.map(form::classify_map) {
        Some(Ok(f)) => with_form(v, &f),
        _ => plain(v),
    }
}

fn out(v: &Val, schema: Option<&Value>) -> Value {
    match schema.map(form::classify) {
        Some(Ok(f)) => with_form(v, &f),
        _ => plain(v),
    }
}

fn with_form(v: &Val, f: &Form<'_>) -> Value {
    by_form(v, f)
        .or_else(|| match v {
            // Not required, so an option: the schema is the value's.
            Val::Option(o) => Some(o.as_deref().map_or(Value::Null, |x| with_form(x, f))),
            _ => None,
        })
        .unwrap_or_else(|| plain(v))
}

/// The value as the schema's form says, or None when the form is not the value's.
fn by_form(v: &Val, f: &Form<'_>) -> Option<Value> {
    Some(match (v, f) {
        (Val::String(s), Form::Free) => {
            serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
        }
        (Val::Option(o), Form::Nullable(inner)) => {
            o.as_deref().map_or(Value::Null, |x| out(x, Some(inner)))
        }
        (Val::List(items), Form::List(s)) => {
            Value::Array(items.iter().map(|x| out(x, Some(s))).collect())
        }
        (Val::List(items), Form::Map(s)) => {
            let mut o = Map::new();
            for item in items {
                let Val::Tuple(pair) = item else { return None };
                let [Val::String(k), x] = pair.as_slice() else {
                    return None;
                };
                o.insert(k.clone(), out(x, Some(s)));
            }
            Value::Object(o)
        }
        (Val::Tuple(items), Form::Tuple(s)) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, x)| out(x, s.get(i).copied()))
                .collect(),
        ),
        (Val::Record(fields), Form::Record { props, required }) => {
            let mut o = Map::new();
            for (name, x) in fields {
                let found = props
                    .iter()
                    .find(|(k, _)| form::wit_name(k).as_deref() == Some(name.as_str()));
                let (key, s) = match found {
                    Some((k, s)) => (k.to_string(), Some(*s)),
                    None => (json_name(name), None),
                };
                if matches!(x, Val::Option(None))
                    && !s.is_none_or(form::admits_null)
                    && !required.contains(&key.as_str())
                {
                    // Left out: the schema says neither `null` nor required.
                    continue;
                }
                o.insert(key, out(x, s));
            }
            Value::Object(o)
        }
        (Val::Variant(case, Some(p)), Form::Union(cases)) => {
            let (_, s) = cases.iter().find(|(k, _)| k.case() == case)?;
            out(p, Some(s))
        }
        (Val::Enum(case), Form::Enum(values)) => {
            let v = values
                .iter()
                .find(|x| form::wit_name(x).as_deref() == Some(case.as_str()))?;
            Value::String(v.to_string())
        }
        _ => return None,
    })
}

/// A value as JSON by itself.
fn plain(v: &Val) -> Value {
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
