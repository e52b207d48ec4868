//! What a tool may ask the person through the client (`elicitation/create` from a script): a
//! form, shown as the tool's own question (`tool NAME asks: …`), never as toolsmith's. A tool
//! may not send URL-mode elicitation (a link from a tool could pass for toolsmith's own pages),
//! and its form may not ask for anything that looks like a secret, a password or a token (the
//! MCP specification forbids sensitive data in form mode, and the answer passes through the AI's
//! client): such a value is a `[secrets]` entry the person sets outside the client.

use crate::error::{HostCode, HostError};
use serde_json::Value;

/// Words that make a form field look like it asks for a secret.
const SENSITIVE_WORDS: &[&str] = &[
    "secret",
    "secrets",
    "password",
    "passwords",
    "passwd",
    "passphrase",
    "pwd",
    "passcode",
    "token",
    "apikey",
    "apitoken",
    "accesstoken",
    "authtoken",
    "accesskey",
    "secretkey",
    "privatekey",
    "bearer",
    "pat",
    "credential",
    "credentials",
    "mnemonic",
    "otp",
    "totp",
    "2fa",
    "mfa",
    "pin",
    "cvv",
    "ssn",
];
/// Word pairs that do ("api key", "private key", ...).
const SENSITIVE_PAIRS: &[(&str, &str)] = &[
    ("api", "key"),
    ("private", "key"),
    ("access", "key"),
    ("secret", "key"),
    ("signing", "key"),
    ("ssh", "key"),
    ("auth", "key"),
    ("session", "key"),
    ("auth", "code"),
    ("card", "number"),
    ("access", "token"),
    ("seed", "phrase"),
    ("recovery", "phrase"),
    ("recovery", "code"),
    ("security", "code"),
    ("verification", "code"),
];

/// The words of a field name or title: split at non-alphanumerics and camelCase boundaries,
/// lower-cased.
fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in s.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Whether `text` (a field's name, title or description) looks like it asks for a secret.
pub fn looks_sensitive(text: &str) -> bool {
    let w = words(text);
    w.iter().any(|x| SENSITIVE_WORDS.contains(&x.as_str()))
        || w.windows(2).any(|p| {
            SENSITIVE_PAIRS
                .iter()
                .any(|(a, b)| p[0] == *a && p[1] == *b)
        })
}

/// The first field of a form schema (at any depth) that looks like it asks for a secret.
fn sensitive_field(schema: &Value) -> Option<String> {
    let props = schema.get("properties").and_then(Value::as_object)?;
    for (key, prop) in props {
        let text = |k: &str| prop.get(k).and_then(Value::as_str).unwrap_or("");
        let hidden = prop.get("format").and_then(Value::as_str) == Some("password")
            || prop.get("writeOnly").and_then(Value::as_bool) == Some(true);
        if hidden
            || [key.as_str(), text("title"), text("description")]
                .iter()
                .any(|t| looks_sensitive(t))
        {
            return Some(key.clone());
        }
        // A nested object or array of objects (not a form the specification allows, but a
        // client may still show it).
        for inner in [Some(prop), prop.get("items")].into_iter().flatten() {
            if let Some(k) = sensitive_field(inner) {
                return Some(format!("{key}.{k}"));
            }
        }
    }
    None
}

fn refused(message: String) -> HostError {
    HostError::new(HostCode::Refused, message)
}

/// Check a tool's elicitation request and label it as the tool's. `tool` names who asks
/// (a stored tool's name, or `execute_code`).
pub fn vet(tool: &str, mut params: Value) -> Result<Value, HostError> {
    let Some(p) = params.as_object_mut() else {
        return Err(HostError::new(
            HostCode::InvalidParams,
            "elicitation/create needs {\"message\": string, \"requestedSchema\": object schema}",
        ));
    };
    let mode = p.get("mode").and_then(Value::as_str).unwrap_or("form");
    if mode != "form" || p.contains_key("url") {
        return Err(refused(format!(
            "tool {tool} may not send URL-mode elicitation: a link from a tool could pass for toolsmith's own pages. Ask with a form (mode \"form\"), or return the link in the tool's result for the AI to pass on"
        )));
    }
    if let Some(schema) = p.get("requestedSchema")
        && let Some(key) = sensitive_field(schema)
    {
        return Err(refused(format!(
            "tool {tool}'s form asks for {key:?}, which looks like a secret, password or token: a form may not ask for sensitive data (the MCP specification forbids it, and the answer would pass through the AI's client). Declare it under [secrets] in the tool's tool.toml instead (`[secrets] NAME = \"what it is for\"`, or \"secrets\": [\"NAME\"] in register_script): the person sets the value with `toolsmith secret set NAME` or in `toolsmith console`, and the tool reads it from its environment variable NAME"
        )));
    }
    let message = p.get("message").and_then(Value::as_str).unwrap_or("");
    // Blank lines could push the label out of sight of the words that follow it.
    let mut tidy = String::new();
    for line in message.trim().lines() {
        if !(line.trim().is_empty() && tidy.ends_with("\n\n")) {
            tidy.push_str(line.trim_end());
            tidy.push('\n');
        }
    }
    let labelled = format!("tool {tool} asks: {}", tidy.trim_end());
    p.insert("message".into(), Value::String(labelled));
    p.insert("mode".into(), Value::String("form".into()));
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form(field: &str, title: &str) -> Value {
        json!({"message": "toolsmith: please", "requestedSchema": {"type": "object",
            "properties": {field: {"type": "string", "title": title}}}})
    }

    #[test]
    fn a_tools_form_is_labelled_and_secrets_and_links_are_refused() {
        let ok = vet("ask", form("name", "Your name")).unwrap();
        assert_eq!(ok["message"], "tool ask asks: toolsmith: please");
        for (field, title) in [
            ("githubToken", ""),
            ("GITHUB_TOKEN", ""),
            ("pass", "Password"),
            ("k", "Your API key"),
            ("apiKey", ""),
            ("x", "One-time code (OTP)"),
            ("client_secret", ""),
        ] {
            let e = vet("ask", form(field, title)).unwrap_err();
            assert!(e.message.contains("[secrets]"), "{field}: {}", e.message);
        }
        for (field, title) in [
            ("option", "Options"),
            ("keyboard", "Top notch"),
            ("tokenizer_name", "Spinner"),
            ("max_tokens", "How many tokens to generate"),
            ("pattern", "A pattern"),
        ] {
            assert!(vet("ask", form(field, title)).is_ok(), "{field}");
        }
        for (field, title) in [
            ("pat", "GitHub PAT"),
            ("auth", "Bearer value"),
            ("words", "Your seed phrase"),
            ("githubAccessToken", ""),
        ] {
            assert!(vet("ask", form(field, title)).is_err(), "{field}");
        }
        // Nested deeper than a form allows: still looked at.
        let nested = json!({"message": "m", "requestedSchema": {"type": "object", "properties":
            {"login": {"type": "object", "properties": {"password": {"type": "string"}}}}}});
        let e = vet("ask", nested).unwrap_err();
        assert!(e.message.contains("login.password"), "{}", e.message);
        // Blank lines cannot push the label away from the words.
        let spaced = json!({"message": "\n\n\n\n\n\ntoolsmith: approve?\n\n\n\nok", "requestedSchema": {"type": "object", "properties": {}}});
        assert_eq!(
            vet("ask", spaced).unwrap()["message"],
            "tool ask asks: toolsmith: approve?\n\nok"
        );
        let mut hidden = form("answer", "Answer");
        hidden["requestedSchema"]["properties"]["answer"]["format"] = json!("password");
        assert!(vet("ask", hidden).is_err());
        let url = json!({"mode": "url", "message": "open", "url": "https://evil.example", "elicitationId": "1"});
        let e = vet("ask", url).unwrap_err();
        assert!(e.message.contains("URL-mode"), "{}", e.message);
    }
}
