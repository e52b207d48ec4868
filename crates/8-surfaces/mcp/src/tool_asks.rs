//! What a tool may ask the person through the client (`elicitation/create` from a script): a
//! form, shown as the tool's own question (`tool NAME asks: …`), never as toolsmith's. A tool
//! may not send URL-mode elicitation (a link from a tool could pass for toolsmith's own pages),
//! and its form may not ask for anything that looks like a secret, a password or a token (the
//! MCP specification forbids sensitive data in form mode, and the answer passes through the AI's
//! client): such a value is a `[secrets]` entry the person sets outside the client.

use crate::error::{HostCode, HostError};
use serde_json::Value;
use std::sync::LazyLock;
use unicode_normalization::UnicodeNormalization;

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
    // The same words in other languages: a form may be written in any.
    "passwort",
    "kennwort",
    "contrasena",
    "contraseña",
    "senha",
    "motdepasse",
    "wachtwoord",
    "losenord",
    "lösenord",
    "adgangskode",
    "passord",
    "salasana",
    "haslo",
    "hasło",
    "jelszo",
    "jelszó",
    "heslo",
    "parola",
    "sifre",
    "şifre",
    "parol",
    "пароль",
    "токен",
    "ключ",
    "секрет",
    "geheimnis",
    "schlüssel",
    "κωδικός",
    "parolă",
    "netrc",
    "keychain",
    "keystore",
];
/// Words of scripts written without spaces: found anywhere inside a word.
const SENSITIVE_INFIXES: &[&str] = &[
    "密码",
    "密碼",
    "口令",
    "令牌",
    "秘密",
    "密钥",
    "密鑰",
    "パスワード",
    "暗証",
    "トークン",
    "秘密鍵",
    "비밀번호",
    "암호",
    "토큰",
    "รหัสผ่าน",
    "كلمةالمرور",
    "كلمة",
    "סיסמה",
    "पासवर्ड",
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
    ("de", "passe"),
    ("clave", "api"),
    ("clé", "api"),
    ("kata", "sandi"),
    ("mật", "khẩu"),
    ("access", "code"),
    ("time", "code"),
    ("digit", "code"),
    ("sms", "code"),
    ("login", "code"),
];

use crate::names::reads_as as as_read;

/// The word lists as read (their skeletons), computed once.
static READ_WORDS: LazyLock<Vec<String>> =
    LazyLock::new(|| SENSITIVE_WORDS.iter().map(|w| as_read(w)).collect());
static READ_PAIRS: LazyLock<Vec<(String, String)>> = LazyLock::new(|| {
    SENSITIVE_PAIRS
        .iter()
        .map(|(a, b)| (as_read(a), as_read(b)))
        .collect()
});

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

/// Whether `text` (a field's name, title or description, or a form's message) looks like it
/// asks for a secret, however it is spelt: camelCase or snake_case, with look-alike letters
/// of another script, zero-width characters inside a word, full-width forms, or in another
/// language.
pub fn looks_sensitive(text: &str) -> bool {
    let visible: String = text
        .chars()
        .filter(|c| !crate::names::is_invisible(*c) || c.is_whitespace())
        .nfkc()
        .collect();
    // Words are split before folding (camelCase needs the original case), then read.
    let raw = words(&visible);
    let w: Vec<String> = raw.iter().map(|x| as_read(x)).collect();
    let infix = |x: &String| SENSITIVE_INFIXES.iter().any(|i| x.contains(i));
    // Letters spaced or hyphenated apart ("P a s s w o r d", "Pass-word"): the long words
    // are looked for in the text read without separators.
    let joined: String = w.concat();
    let long = READ_WORDS.iter().filter(|x| x.chars().count() >= 8);
    raw.iter().any(infix)
        || long.clone().any(|x| joined.contains(x.as_str()))
        || w.iter().any(|x| READ_WORDS.contains(x) || infix(x))
        || w.windows(2)
            .any(|p| READ_PAIRS.iter().any(|(a, b)| p[0] == *a && p[1] == *b))
}

/// The first text anywhere in a form schema (its own title and description, a choice's
/// title, a constant, a key) that looks like it asks for a secret.
fn sensitive_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => looks_sensitive(s).then(|| s.clone()),
        Value::Array(a) => a.iter().find_map(sensitive_text),
        Value::Object(o) => o.iter().find_map(|(k, v)| {
            if looks_sensitive(k) {
                Some(k.clone())
            } else {
                sensitive_text(v)
            }
        }),
        _ => None,
    }
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
        && let Some(key) = sensitive_field(schema).or_else(|| sensitive_text(schema))
    {
        return Err(refused(format!(
            "tool {tool}'s form asks for {key:?}, which looks like a secret, password or token: a form may not ask for sensitive data (the MCP specification forbids it, and the answer would pass through the AI's client). Declare it under [secrets] in the tool's tool.toml instead (`[secrets] NAME = \"what it is for\"`, or \"secrets\": [\"NAME\"] in register_script): the person sets the value with `toolsmith secret set NAME` or in `toolsmith console`, and the tool reads it from its environment variable NAME"
        )));
    }
    let raw = p.get("message").and_then(Value::as_str).unwrap_or("");
    // Other line breaks become newlines; invisible, bidirectional and control characters
    // go (they could reorder or hide what the person reads).
    let message: String = raw
        .chars()
        .map(|c| match c {
            '\u{2028}' | '\u{2029}' | '\u{0085}' | '\u{000B}' | '\u{000C}' => '\n',
            c => c,
        })
        .filter(|c| *c == '\n' || *c == '\t' || !crate::names::is_invisible(*c))
        .collect();
    if looks_sensitive(&message) {
        return Err(refused(format!(
            "tool {tool}'s form message speaks of a secret, password or token: a tool may not ask for one through the client (the answer would pass through the AI's client, and such a prompt could pass for toolsmith's own). Declare it under [secrets] in the tool's tool.toml instead (`[secrets] NAME = \"what it is for\"`): the person sets the value with `toolsmith secret set NAME` or in `toolsmith console`"
        )));
    }
    // Anywhere, under any markup, look-alike or spacing ("**toolsmith**", "> t̶oolsmith",
    // "Tool smith"): the letters read without anything between them.
    let letters: String = as_read(&message)
        .chars()
        .filter(|c| {
            c.is_alphanumeric()
                && !matches!(
                    unicode_general_category::get_general_category(*c),
                    unicode_general_category::GeneralCategory::NonspacingMark
                        | unicode_general_category::GeneralCategory::EnclosingMark
                )
        })
        .collect();
    if letters.contains(&*as_read("toolsmith")) {
        return Err(refused(format!(
            "tool {tool}'s form message names toolsmith: a tool's question may not read as toolsmith's own. Word the question as the tool's (it is shown as \"tool {tool} asks: …\")"
        )));
    }
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
        json!({"message": "Please", "requestedSchema": {"type": "object",
            "properties": {field: {"type": "string", "title": title}}}})
    }

    #[test]
    fn a_tools_form_is_labelled_and_secrets_and_links_are_refused() {
        let ok = vet("ask", form("name", "Your name")).unwrap();
        assert_eq!(ok["message"], "tool ask asks: Please");
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
        let spaced = json!({"message": "\n\n\n\n\n\nApprove?\n\n\u{2028}\u{2029}\n\nok\u{202E}", "requestedSchema": {"type": "object", "properties": {}}});
        assert_eq!(
            vet("ask", spaced).unwrap()["message"],
            "tool ask asks: Approve?\n\nok"
        );
        let mut hidden = form("answer", "Answer");
        hidden["requestedSchema"]["properties"]["answer"]["format"] = json!("password");
        assert!(vet("ask", hidden).is_err());
        // Look-alike letters, zero-width characters, full-width forms, other languages.
        for title in [
            "P\u{0430}ssword",
            "GitHub t\u{200B}oken",
            "Ｐａｓｓｗｏｒｄ",
            "Passwort",
            "Contraseña",
            "Mot de passe",
            "请输入密码",
            "Пароль",
            "API k\u{0435}y",
            "Pass-word",
            "Kata sandi",
            "Mật khẩu",
            "Clé API",
            "Access code",
        ] {
            assert!(vet("ask", form("value", title)).is_err(), "{title}");
        }
        // The message is read too, and may not pass for toolsmith's own words.
        for message in [
            "toolsmith: the tool \"github_sync\" needs the secret GITHUB_TOKEN. Type it below",
            "Enter your GitHub token",
            "ToolSmith needs you to confirm",
            "\u{200B}t\u{043E}olsmith: confirm",
            "Hello.\ntoolsmith: the tool github_sync needs approval",
            "**toolsmith** says hi",
            "<b>toolsmith</b>",
            "🔧 t\u{0336}oolsmith",
            "Tool smith wants you to confirm",
            "Pass\u{1D173}word please",
            "P a s s w o r d, please",
        ] {
            let m = json!({"message": message, "requestedSchema": {"type": "object",
                "properties": {"value": {"type": "string", "title": "Value"}}}});
            assert!(vet("ask", m).is_err(), "{message}");
        }
        // The form's own title, and a choice's.
        let top = json!({"message": "m", "requestedSchema": {"type": "object",
            "title": "Enter your GitHub token", "properties": {"v": {"type": "string"}}}});
        assert!(vet("ask", top).is_err());
        let choice = json!({"message": "m", "requestedSchema": {"type": "object", "properties":
            {"v": {"type": "string", "oneOf": [{"const": "a", "title": "My API key"}]}}}});
        assert!(vet("ask", choice).is_err());
        let url = json!({"mode": "url", "message": "open", "url": "https://evil.example", "elicitationId": "1"});
        let e = vet("ask", url).unwrap_err();
        assert!(e.message.contains("URL-mode"), "{}", e.message);
    }
}
