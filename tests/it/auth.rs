//! Authentication of `serve --http`: a bearer token (from a file, or generated with mode 0600
//! and shown once), and OAuth 2.1 resource-server mode against a real local issuer (keys made
//! here with openssl, the metadata and JWKS served by Python's http.server on 127.0.0.1):
//! missing, wrong, expired, wrong-audience and wrongly signed tokens are refused, a good one
//! works, and the token's claim lands in the commit's `Actor:` trailer.

use crate::common;
use crate::support;

use base64::Engine;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use support::{HttpServer, McpHttp, example_box, free_port};

fn assert_refused(r: &support::Reply, why: &str) {
    assert_eq!(r.status, 401, "{why}: {}", r.body);
    let challenge = r
        .headers
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_else(|| panic!("{why}: no WWW-Authenticate"));
    assert!(challenge.starts_with("Bearer "), "{why}: {challenge}");
}

#[test]
fn a_token_file_is_required_and_compared() {
    let (tmp, tb) = example_box();
    let file = tmp.path().join("token");
    std::fs::write(&file, "correct-horse-battery-staple\n").unwrap();
    let server = HttpServer::start(&tb, &["--token-file", file.to_str().unwrap()], &[]);

    assert_refused(
        &McpHttp::new(&server.url, None).initialize("none"),
        "no token",
    );
    assert_refused(
        &McpHttp::new(&server.url, Some("correct-horse-battery-stapl")).initialize("wrong"),
        "a wrong token",
    );
    assert_refused(
        &McpHttp::new(&server.url, Some("correct-horse-battery-staple-")).initialize("longer"),
        "a longer token",
    );
    let mut ok = McpHttp::new(&server.url, Some("correct-horse-battery-staple"));
    assert_eq!(ok.initialize("right").status, 200);
    let list = ok.request("tools/list", json!({}));
    assert!(
        list["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{list}"
    );
    // Each request is checked, not just the first.
    let mut stolen = McpHttp::new(&server.url, None);
    stolen.session = ok.session.clone();
    assert_refused(
        &stolen.request_reply("tools/list", json!({})),
        "a session id without the token",
    );
}

#[test]
fn a_generated_token_is_private_and_shown_once() {
    let (tmp, tb) = example_box();
    let data = tmp.path().join("data");
    let env = [("XDG_DATA_HOME", data.to_str().unwrap())];
    let server = HttpServer::start(&tb, &["--require-token"], &env);
    let file = data.join("toolsmith-auth/http-token");
    let token = std::fs::read_to_string(&file).unwrap().trim().to_string();
    assert!(token.len() >= 32, "{token:?}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the token file is readable by others");
    assert_refused(
        &McpHttp::new(&server.url, None).initialize("none"),
        "no token",
    );
    assert_eq!(
        McpHttp::new(&server.url, Some(&token))
            .initialize("ok")
            .status,
        200
    );
    assert!(
        server.stderr_text().contains(&token),
        "the new token was not shown"
    );
    drop(server);

    // The second start reuses the token and does not print it.
    let again = HttpServer::start(&tb, &["--require-token"], &env);
    assert_eq!(
        McpHttp::new(&again.url, Some(&token))
            .initialize("ok")
            .status,
        200
    );
    assert!(
        !again.stderr_text().contains(&token),
        "{}",
        again.stderr_text()
    );
}

/// A local OAuth issuer: an Ed25519 key made with openssl, its metadata and JWKS served by
/// Python's http.server.
struct Issuer {
    url: String,
    key_der: Vec<u8>,
    other_key_der: Vec<u8>,
    server: Child,
}

impl Drop for Issuer {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

fn openssl_ed25519(dir: &Path, name: &str) -> (Vec<u8>, Vec<u8>) {
    let key = dir.join(format!("{name}.der"));
    let st = Command::new("openssl")
        .args([
            "genpkey",
            "-algorithm",
            "ed25519",
            "-outform",
            "DER",
            "-out",
        ])
        .arg(&key)
        .status()
        .expect("openssl runs");
    assert!(st.success());
    let out = Command::new("openssl")
        .args(["pkey", "-inform", "DER", "-in"])
        .arg(&key)
        .args(["-pubout", "-outform", "DER"])
        .output()
        .unwrap();
    assert!(out.status.success());
    // SubjectPublicKeyInfo of Ed25519: a 12-byte prefix, then the 32-byte key.
    let public = out.stdout[out.stdout.len() - 32..].to_vec();
    (std::fs::read(&key).unwrap(), public)
}

impl Issuer {
    fn start(dir: &Path) -> Issuer {
        let root = dir.join("issuer");
        std::fs::create_dir_all(root.join(".well-known")).unwrap();
        let (key_der, public) = openssl_ed25519(dir, "signing");
        let (other_key_der, _) = openssl_ed25519(dir, "other");
        let port = free_port();
        let url = format!("http://127.0.0.1:{port}");
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let jwks = json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": b64.encode(&public), "kid": "k1", "alg": "EdDSA", "use": "sig"}]});
        std::fs::write(root.join("jwks.json"), jwks.to_string()).unwrap();
        let meta = json!({"issuer": url, "jwks_uri": format!("{url}/jwks.json"), "authorization_endpoint": format!("{url}/authorize"), "token_endpoint": format!("{url}/token"), "response_types_supported": ["code"]});
        std::fs::write(
            root.join(".well-known/oauth-authorization-server"),
            meta.to_string(),
        )
        .unwrap();
        let python = std::env::var("TOOLSMITH_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
        let server = Command::new(python)
            .args(["-m", "http.server", "--bind", "127.0.0.1", "--directory"])
            .arg(&root)
            .arg(port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python http.server");
        let up = (0..200).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(25));
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        assert!(up, "the local issuer did not start");
        Issuer {
            url,
            key_der,
            other_key_der,
            server,
        }
    }

    fn token_with(&self, claims: Value, der: &[u8]) -> String {
        let mut h = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::EdDSA);
        h.kid = Some("k1".into());
        jsonwebtoken::encode(&h, &claims, &jsonwebtoken::EncodingKey::from_ed_der(der)).unwrap()
    }

    fn token(&self, claims: Value) -> String {
        self.token_with(claims, &self.key_der)
    }
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[test]
fn oauth_tokens_from_a_local_issuer_and_the_actor_trailer() {
    let (tmp, tb) = example_box();
    let issuer = Issuer::start(tmp.path());
    let server = HttpServer::start(
        &tb,
        &["--oauth-issuer", &issuer.url, "--actor-claim", "email"],
        &[],
    );
    let resource = server.url.clone();

    // Protected Resource Metadata (RFC 9728) is public.
    let meta: Value = support::agent()
        .get(&format!(
            "http://{}/.well-known/oauth-protected-resource/mcp",
            server.addr
        ))
        .call()
        .unwrap()
        .into_body()
        .read_json()
        .unwrap();
    assert_eq!(meta["resource"], resource);
    assert_eq!(meta["authorization_servers"], json!([issuer.url]));

    let good = json!({"iss": issuer.url, "aud": resource, "sub": "u-123", "email": "alice@example.com", "exp": now() + 600, "iat": now()});
    let r = McpHttp::new(&server.url, None).initialize("none");
    assert_refused(&r, "no token");
    let challenge = r.headers.get("www-authenticate").unwrap().to_str().unwrap();
    assert!(
        challenge.contains(&format!(
            "resource_metadata=\"http://{}/.well-known/oauth-protected-resource",
            server.addr
        )),
        "{challenge}"
    );
    assert_refused(
        &McpHttp::new(&server.url, Some("not-a-jwt")).initialize("junk"),
        "a wrong token",
    );
    let mut expired = good.clone();
    expired["exp"] = json!(now() - 3600);
    assert_refused(
        &McpHttp::new(&server.url, Some(&issuer.token(expired))).initialize("x"),
        "an expired token",
    );
    let mut other_aud = good.clone();
    other_aud["aud"] = json!("http://127.0.0.1:1/mcp");
    assert_refused(
        &McpHttp::new(&server.url, Some(&issuer.token(other_aud))).initialize("x"),
        "a wrong audience",
    );
    let mut other_iss = good.clone();
    other_iss["iss"] = json!("http://127.0.0.1:1");
    assert_refused(
        &McpHttp::new(&server.url, Some(&issuer.token(other_iss))).initialize("x"),
        "a wrong issuer",
    );
    let forged = issuer.token_with(good.clone(), &issuer.other_key_der);
    assert_refused(
        &McpHttp::new(&server.url, Some(&forged)).initialize("x"),
        "a token signed by another key",
    );

    let before = common::commit_count(&tb);
    let mut c = McpHttp::new(&server.url, Some(&issuer.token(good)));
    assert_eq!(c.initialize("editor-ai").status, 200);
    let r = c.request(
        "tools/call",
        json!({"name": "delete_tool", "arguments": {"name": "word_count"}}),
    );
    assert_ne!(r["result"]["isError"], json!(true), "{r}");
    assert_eq!(common::commit_count(&tb), before + 1);
    let message = common::git(&tb, &["log", "-1", "--format=%B"]);
    assert!(message.contains("Actor: alice@example.com"), "{message}");
    common::assert_clean(&tb);
}

#[test]
fn bad_auth_settings_are_refused_before_listening() {
    let (tmp, tb) = example_box();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
            .arg("--toolbox")
            .arg(&tb)
            .arg("serve")
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?} started");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let missing = tmp.path().join("no-such-token");
    let err = run(&[
        "--http",
        "127.0.0.1:0",
        "--token-file",
        missing.to_str().unwrap(),
    ]);
    assert!(
        err.contains("could not read the token file") && err.contains("hint:"),
        "{err}"
    );
    let empty = tmp.path().join("empty-token");
    std::fs::write(&empty, "\n").unwrap();
    let err = run(&[
        "--http",
        "127.0.0.1:0",
        "--token-file",
        empty.to_str().unwrap(),
    ]);
    assert!(err.contains("is empty") && err.contains("hint:"), "{err}");
    let err = run(&[
        "--http",
        "0.0.0.0:0",
        "--allow-remote",
        "--oauth-issuer",
        "http://127.0.0.1:1",
    ]);
    assert!(err.contains("--public-url"), "{err}");
    let err = run(&[
        "--http",
        "127.0.0.1:0",
        "--oauth-issuer",
        "http://issuer.example.com",
    ]);
    assert!(err.contains("https://"), "{err}");
    let err = run(&["--token-file", empty.to_str().unwrap()]);
    assert!(err.contains("apply to --http only"), "{err}");
}
