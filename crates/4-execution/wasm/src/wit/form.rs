//! The JSON Schema an AI writes, read as WIT: each schema node has one `Form`, shared by the
//! WIT generator (`toolsmith-build`'s `wit_gen`, schema → WIT) and the schema-guided value
//! conversion of a component call (`args`, `result`), so both sides agree on how a value
//! travels.
//!
//! A free-form value (no `type`, an object without `properties` or `additionalProperties`, an
//! array without `items`, a union of branches JSON cannot tell apart) travels as its JSON text
//! in a WIT `string`; `null` beside another type (`anyOf` with `null`, `type: [T, "null"]`) is
//! an `option`; `prefixItems` a `tuple`; `additionalProperties` alone a
//! `list<tuple<string, T>>`; `anyOf`/`oneOf` of different JSON types a `variant` with a case
//! per type (`integer`, `number`, `string`, `boolean`, `array`, `object`).

use serde_json::{Map, Value};
use std::borrow::Cow;

/// A scalar JSON type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    /// `string`: WIT `string`.
    String,
    /// `integer`: WIT `s64`.
    Integer,
    /// `number`: WIT `f64`.
    Number,
    /// `boolean`: WIT `bool`.
    Boolean,
}

/// The JSON type of a union's branch: its case in the WIT `variant`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An integer.
    Integer,
    /// A number (an integer too when no branch is `integer`).
    Number,
    /// A string.
    String,
    /// `true` or `false`.
    Boolean,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl Kind {
    /// The variant case's name.
    pub fn case(self) -> &'static str {
        match self {
            Kind::Integer => "integer",
            Kind::Number => "number",
            Kind::String => "string",
            Kind::Boolean => "boolean",
            Kind::Array => "array",
            Kind::Object => "object",
        }
    }

    /// Whether the JSON value `v` is of this kind (exactly: an integer is not a number here).
    pub fn holds(self, v: &Value) -> bool {
        match self {
            Kind::Integer => v.is_i64() || v.is_u64(),
            Kind::Number => v.is_f64(),
            Kind::String => v.is_string(),
            Kind::Boolean => v.is_boolean(),
            Kind::Array => v.is_array(),
            Kind::Object => v.is_object(),
        }
    }
}

/// How one schema node maps to WIT.
#[derive(Debug, Clone, PartialEq)]
pub enum Form<'a> {
    /// Any JSON value: its JSON text in a WIT `string`.
    Free,
    /// A scalar.
    Scalar(Scalar),
    /// A string `enum` (or `const`) whose values are all WIT names: a WIT `enum`.
    Enum(Vec<&'a str>),
    /// `null`, or a value of the inner schema: a WIT `option`.
    Nullable(Cow<'a, Value>),
    /// `items`: a WIT `list`.
    List(&'a Value),
    /// `prefixItems` (or `items` as an array): a WIT `tuple`.
    Tuple(Vec<&'a Value>),
    /// `additionalProperties` and no `properties`: a WIT `list<tuple<string, T>>`.
    Map(&'a Value),
    /// `properties` (in name order) and `required`: a WIT `record`.
    Record {
        /// Each property's JSON name and schema, sorted by name.
        props: Vec<(&'a str, &'a Value)>,
        /// The required properties.
        required: Vec<&'a str>,
    },
    /// `anyOf`/`oneOf` of different JSON types: a WIT `variant`, a case per kind.
    Union(Vec<(Kind, Cow<'a, Value>)>),
}

/// Why a schema has no WIT form: the keyword and what to do.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    /// The keyword (`$ref`, `allOf`, `type`, …), relative to the node.
    pub keyword: String,
    /// Why, and what to do.
    pub message: String,
}

fn refused(keyword: &str, message: impl Into<String>) -> Refused {
    Refused {
        keyword: keyword.to_string(),
        message: message.into(),
    }
}

/// The form of a schema node.
pub fn classify(s: &Value) -> Result<Form<'_>, Refused> {
    match s {
        Value::Bool(true) => Ok(Form::Free),
        Value::Object(o) => classify_map(o),
        _ => Err(refused("", "a schema is an object (or `true`, any value)")),
    }
}

/// The form of a schema node given as its object.
pub fn classify_map(o: &Map<String, Value>) -> Result<Form<'_>, Refused> {
    if o.contains_key("$ref") {
        return Err(refused(
            "$ref",
            "a reference (write the referenced schema in its place)",
        ));
    }
    if let Some(all) = o.get("allOf") {
        return match all.as_array().map(Vec::as_slice) {
            Some([one]) => classify(one),
            _ => Err(refused(
                "allOf",
                "several schemas to combine (write them as one schema)",
            )),
        };
    }
    if let Some(c) = o.get("const") {
        return Ok(enum_form(std::slice::from_ref(c), o));
    }
    if let Some(values) = o.get("enum") {
        let values = values
            .as_array()
            .ok_or_else(|| refused("enum", "`enum` is not an array"))?;
        return Ok(enum_form(values, o));
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = o.get(key) {
            let branches = branches
                .as_array()
                .ok_or_else(|| refused(key, format!("`{key}` is not an array")))?;
            return union_form(branches.iter().map(Cow::Borrowed).collect());
        }
    }
    match o.get("type") {
        None => untyped(o),
        Some(Value::String(t)) => typed(t, o),
        Some(Value::Array(types)) => {
            let names = types
                .iter()
                .map(Value::as_str)
                .collect::<Option<Vec<&str>>>()
                .ok_or_else(|| refused("type", "a type that is not a string"))?;
            let null = names.contains(&"null");
            let one = |t: &str| {
                let mut c = o.clone();
                c.insert("type".into(), Value::String(t.to_string()));
                Value::Object(c)
            };
            match names
                .iter()
                .filter(|t| **t != "null")
                .collect::<Vec<_>>()
                .as_slice()
            {
                [] => Ok(Form::Free),
                [t] if !null => typed(t, o),
                [t] => Ok(Form::Nullable(Cow::Owned(one(t)))),
                _ => union_form(names.iter().map(|t| Cow::Owned(one(t))).collect()),
            }
        }
        Some(_) => Err(refused("type", "`type` is neither a string nor an array")),
    }
}

/// `enum` (or `const`) values: strings that are WIT names an `enum`, one JSON type that
/// type, `null` among them an `option`; anything else free-form.
fn enum_form<'a>(values: &'a [Value], o: &Map<String, Value>) -> Form<'a> {
    if values.iter().any(Value::is_null) {
        let rest: Vec<Value> = values.iter().filter(|v| !v.is_null()).cloned().collect();
        if rest.is_empty() {
            return Form::Free;
        }
        let mut inner = o.clone();
        inner.remove("const");
        inner.insert("enum".into(), Value::Array(rest));
        return Form::Nullable(Cow::Owned(Value::Object(inner)));
    }
    if let Some(strings) = values.iter().map(Value::as_str).collect::<Option<Vec<_>>>() {
        let mut names: Vec<String> = Vec::new();
        for s in &strings {
            match wit_name(s) {
                Some(n) if !names.contains(&n) => names.push(n),
                _ => return Form::Scalar(Scalar::String),
            }
        }
        return if strings.is_empty() {
            Form::Free
        } else {
            Form::Enum(strings)
        };
    }
    if values.iter().all(|v| v.is_i64() || v.is_u64()) {
        Form::Scalar(Scalar::Integer)
    } else if values.iter().all(Value::is_number) {
        Form::Scalar(Scalar::Number)
    } else if values.iter().all(Value::is_boolean) {
        Form::Scalar(Scalar::Boolean)
    } else {
        Form::Free
    }
}

/// Whether a branch is only `null`.
fn is_null_schema(s: &Value) -> bool {
    s.get("type").and_then(Value::as_str) == Some("null")
        || s.get("const").is_some_and(Value::is_null)
        || s.get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| !e.is_empty() && e.iter().all(Value::is_null))
}

/// `anyOf`/`oneOf` (or several types): `null` branches make an `option`; one other branch is
/// that branch, several of different JSON types a union, else free-form.
fn union_form(branches: Vec<Cow<'_, Value>>) -> Result<Form<'_>, Refused> {
    let nullable = branches.iter().any(|b| is_null_schema(b));
    let rest: Vec<Cow<'_, Value>> = branches
        .into_iter()
        .filter(|b| !is_null_schema(b))
        .collect();
    let inner: Cow<'_, Value> = match rest.len() {
        0 => return Ok(Form::Free),
        1 => rest
            .into_iter()
            .next()
            .unwrap_or(Cow::Owned(Value::Bool(true))),
        _ => {
            let mut cases: Vec<(Kind, Cow<'_, Value>)> = Vec::new();
            let mut inner_null = false;
            for b in rest {
                let (kind, null) = match kind_of(&b) {
                    Some(k) => k,
                    None => return Ok(Form::Free),
                };
                inner_null |= null;
                if cases.iter().any(|(k, _)| *k == kind) {
                    return Ok(Form::Free);
                }
                cases.push((kind, b));
            }
            if nullable || inner_null {
                let branches: Vec<Value> = cases.into_iter().map(|(_, b)| b.into_owned()).collect();
                return Ok(Form::Nullable(Cow::Owned(
                    serde_json::json!({ "anyOf": branches }),
                )));
            }
            return Ok(Form::Union(cases));
        }
    };
    if nullable {
        Ok(Form::Nullable(inner))
    } else {
        match inner {
            Cow::Borrowed(b) => classify(b),
            // Only `type` arrays make branches of their own, and one type is read directly.
            Cow::Owned(_) => Ok(Form::Free),
        }
    }
}

/// The JSON type of a union branch (and whether it admits `null` itself), or None when it
/// has none (free-form, or a union).
fn kind_of(b: &Value) -> Option<(Kind, bool)> {
    Some(match classify(b).ok()? {
        Form::Scalar(Scalar::String) | Form::Enum(_) => (Kind::String, false),
        Form::Scalar(Scalar::Integer) => (Kind::Integer, false),
        Form::Scalar(Scalar::Number) => (Kind::Number, false),
        Form::Scalar(Scalar::Boolean) => (Kind::Boolean, false),
        Form::List(_) | Form::Tuple(_) => (Kind::Array, false),
        Form::Map(_) | Form::Record { .. } => (Kind::Object, false),
        Form::Nullable(inner) => (kind_of(&inner)?.0, true),
        Form::Free | Form::Union(_) => return None,
    })
}

fn typed<'a>(t: &str, o: &'a Map<String, Value>) -> Result<Form<'a>, Refused> {
    Ok(match t {
        "string" => Form::Scalar(Scalar::String),
        "integer" => Form::Scalar(Scalar::Integer),
        "number" => Form::Scalar(Scalar::Number),
        "boolean" => Form::Scalar(Scalar::Boolean),
        "null" => Form::Free,
        "array" => array_form(o)?,
        "object" => object_form(o)?,
        other => {
            return Err(refused(
                "type",
                format!(
                    "type {other:?} is not a JSON Schema type (string, integer, number, boolean, array, object, null)"
                ),
            ));
        }
    })
}

/// No `type`: an object or an array by its keywords, else free-form.
fn untyped(o: &Map<String, Value>) -> Result<Form<'_>, Refused> {
    if o.contains_key("properties") || o.contains_key("additionalProperties") {
        object_form(o)
    } else if o.contains_key("items") || o.contains_key("prefixItems") {
        array_form(o)
    } else {
        Ok(Form::Free)
    }
}

fn array_form(o: &Map<String, Value>) -> Result<Form<'_>, Refused> {
    fn tuple(items: &[Value]) -> Form<'_> {
        if items.is_empty() {
            Form::Free
        } else {
            Form::Tuple(items.iter().collect())
        }
    }
    match (o.get("prefixItems"), o.get("items")) {
        (Some(p), rest) => {
            let p = p
                .as_array()
                .ok_or_else(|| refused("prefixItems", "`prefixItems` is not an array"))?;
            Ok(match rest {
                None | Some(Value::Bool(false)) => tuple(p),
                // More items of another schema after the tuple's: any array.
                Some(_) => Form::Free,
            })
        }
        (None, Some(Value::Array(items))) => Ok(tuple(items)),
        // Free items make a free array; a refused one is reported at its own path.
        (None, Some(items)) => Ok(match classify(items) {
            Ok(Form::Free) => Form::Free,
            _ => Form::List(items),
        }),
        (None, None) => Ok(Form::Free),
    }
}

fn object_form(o: &Map<String, Value>) -> Result<Form<'_>, Refused> {
    if let Some(props) = o.get("properties") {
        let props = props
            .as_object()
            .ok_or_else(|| refused("properties", "`properties` is not an object"))?;
        if !props.is_empty() {
            let mut props: Vec<(&str, &Value)> =
                props.iter().map(|(k, v)| (k.as_str(), v)).collect();
            props.sort_by(|a, b| a.0.cmp(b.0));
            let required = o
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            return Ok(Form::Record { props, required });
        }
    }
    match o.get("additionalProperties") {
        Some(v @ Value::Object(_)) => Ok(match classify(v) {
            Ok(Form::Free) => Form::Free,
            _ => Form::Map(v),
        }),
        _ => Ok(Form::Free),
    }
}

/// Whether a value of this schema may be `null`.
pub fn admits_null(s: &Value) -> bool {
    matches!(classify(s), Ok(Form::Free | Form::Nullable(_)))
}

/// The WIT name of a JSON name, when it has one: words split at `_`, `-` and a lower-case
/// letter or digit followed by a capital, lower-cased, joined by `-` (`max_len` and `maxLen`
/// are `max-len`); a word starting with a digit joins the one before (`x_1` is `x1`).
/// None for an empty name, one starting with a digit, or other characters than ASCII letters,
/// digits, `_` and `-`.
pub fn wit_name(json: &str) -> Option<String> {
    if !json
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return None;
    }
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut prev: Option<char> = None;
    for c in json.chars() {
        if c == '_' || c == '-' {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
        } else {
            if c.is_ascii_uppercase()
                && prev.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit())
                && !word.is_empty()
            {
                words.push(std::mem::take(&mut word));
            }
            word.push(c.to_ascii_lowercase());
        }
        prev = Some(c);
    }
    if !word.is_empty() {
        words.push(word);
    }
    let mut out: Vec<String> = Vec::new();
    for w in words {
        match out.last_mut() {
            Some(last) if w.starts_with(|c: char| c.is_ascii_digit()) => last.push_str(&w),
            None if w.starts_with(|c: char| c.is_ascii_digit()) => return None,
            _ => out.push(w),
        }
    }
    (!out.is_empty()).then(|| out.join("-"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_become_wit_names() {
        for (json, wit) in [
            ("max_len", Some("max-len")),
            ("maxLen", Some("max-len")),
            ("A", Some("a")),
            ("x_1", Some("x1")),
            ("_private", Some("private")),
            ("HTTPServer", Some("httpserver")),
            ("1st", None),
            ("größe", None),
            ("", None),
            ("__", None),
        ] {
            assert_eq!(wit_name(json).as_deref(), wit, "{json}");
        }
    }

    #[test]
    fn forms_of_the_schemas_an_ai_writes() {
        let f = |s: Value| format!("{:?}", classify(&s).map(|f| std::mem::discriminant(&f)));
        let d = |f: Form<'_>| format!("{:?}", Ok::<_, Refused>(std::mem::discriminant(&f)));
        assert_eq!(f(json!({})), d(Form::Free));
        assert_eq!(f(json!({"description": "anything"})), d(Form::Free));
        assert_eq!(f(json!({"type": "object"})), d(Form::Free));
        assert_eq!(f(json!({"type": "array"})), d(Form::Free));
        assert_eq!(
            f(json!({"type": ["string", "null"]})),
            d(Form::Nullable(Cow::Owned(json!({}))))
        );
        assert_eq!(
            f(json!({"anyOf": [{"type": "integer"}, {"type": "null"}]})),
            d(Form::Nullable(Cow::Owned(json!({}))))
        );
        assert_eq!(
            f(json!({"anyOf": [{"type": "integer"}, {"type": "string"}]})),
            d(Form::Union(vec![]))
        );
        assert_eq!(
            f(json!({"anyOf": [{"type": "integer"}, {"type": "integer", "minimum": 3}]})),
            d(Form::Free)
        );
        assert_eq!(
            f(json!({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]})),
            d(Form::Tuple(vec![]))
        );
        assert_eq!(
            f(json!({"type": "object", "additionalProperties": {"type": "integer"}})),
            d(Form::Map(&json!({})))
        );
        assert_eq!(
            f(json!({"enum": ["New York", "Paris"]})),
            d(Form::Scalar(Scalar::String))
        );
        assert_eq!(f(json!({"enum": [1, 2]})), d(Form::Scalar(Scalar::Integer)));
        assert_eq!(
            f(json!({"type": ["integer", "string"]})),
            d(Form::Union(vec![]))
        );
        let e = classify(&json!({"$ref": "#/$defs/x"})).unwrap_err();
        assert_eq!(e.keyword, "$ref");
    }
}
