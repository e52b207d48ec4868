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
//!
//! Where the tool declares its schemas (a WIT toolsmith generated from them, `form`), values
//! are converted as the schema says: a free-form value is JSON text, a union a bare value, a
//! map an object, a property by its JSON name (`maxLen` for the field `max-len`).

mod args;
pub mod form;
mod result;

pub use args::{Mismatch, params, params_guided, value};
pub use result::{to_json, to_json_guided};

use serde_json::{Map, Value, json};
use wasmtime::component::Type;

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
