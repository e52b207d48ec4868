//! Authentication of HTTP requests: a shared bearer token (compared in constant time), or
//! OAuth 2.1 resource-server mode (JWT access tokens checked against the issuer's JWKS:
//! signature, issuer, audience = this server's URL, expiry), with the Protected Resource
//! Metadata document of RFC 9728 for discovery. A request without valid credentials gets
//! `401` and a `WWW-Authenticate` challenge; an authenticated OAuth request carries a
//! [`Principal`] (the configured claim) that becomes the commit's `Actor:` trailer.

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
use subtle::ConstantTimeEq;

/// Where RFC 9728's metadata document is served.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Errors setting up authentication (at start-up, never per request).
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The bearer token's file could not be read.
    #[error("could not read the token file {path}: {source}")]
    ReadToken {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The bearer token's file holds no token.
    #[error("the token file {0} is empty")]
    EmptyToken(PathBuf),
    /// A generated token could not be saved.
    #[error("could not write a new token to {path}: {source}")]
    WriteToken {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The issuer is not https (nor loopback).
    #[error("the OAuth issuer {0:?} must be an https:// URL (http:// only for loopback)")]
    InsecureIssuer(String),
    /// The issuer's metadata or keys could not be fetched.
    #[error("could not fetch {url}: {reason}")]
    Fetch {
        /// What was fetched.
        url: String,
        /// Why it failed.
        reason: String,
    },
    /// The issuer publishes no key toolsmith can check a signature with.
    #[error("the issuer's JWKS at {url} has no usable signing key")]
    NoKeys {
        /// The JWKS address.
        url: String,
    },
}

impl crate::error::Hint for AuthError {
    /// What a person can do about it.
    fn hint(&self) -> Option<String> {
        Some({
            match self {
                AuthError::ReadToken { .. } | AuthError::EmptyToken(_) => {
                    "put one line of random text in the file (e.g. `openssl rand -hex 32 > FILE`), or leave out --token-file to have one generated".into()
                }
                AuthError::WriteToken { .. } => {
                    "make the data directory writable, or give --token-file".into()
                }
                AuthError::InsecureIssuer(_) => "give the issuer's https:// URL".into(),
                AuthError::Fetch { .. } | AuthError::NoKeys { .. } => {
                    "check --oauth-issuer: it must serve /.well-known/oauth-authorization-server or /.well-known/openid-configuration with a jwks_uri".into()
                }
            }
        })
    }
}

/// The authenticated caller of an OAuth request (the configured claim's value).
#[derive(Debug, Clone)]
pub struct Principal(pub String);

/// How requests are authenticated.
pub enum Auth {
    /// Loopback only: no credentials (a single user on their own machine).
    Open,
    /// `Authorization: Bearer <token>` with this token.
    Token(Vec<u8>),
    /// JWT access tokens from an OAuth 2.1 authorization server.
    OAuth(OAuth),
}

/// OAuth 2.1 resource-server settings and the issuer's keys.
pub struct OAuth {
    /// The authorization server (tokens' `iss`).
    pub issuer: String,
    /// This server's URL: the required audience and the RFC 9728 `resource`.
    pub resource: String,
    /// The claim whose value names the person (the `Actor:` trailer).
    pub actor_claim: String,
    jwks_uri: String,
    keys: RwLock<(JwkSet, Instant)>,
}

/// Read `--token-file`, or the generated token (created with mode 0600 on first start).
/// Returns the token and, when it was just created, the file to tell the user about.
pub fn load_token(
    file: Option<&Path>,
    data_dir: &Path,
) -> Result<(Vec<u8>, Option<PathBuf>), AuthError> {
    let (path, created) = match file {
        Some(p) => (p.to_path_buf(), false),
        None => {
            let p = data_dir.join("http-token");
            let created = !p.exists();
            if created {
                write_new_token(&p)?;
            }
            (p, created)
        }
    };
    let text = std::fs::read_to_string(&path).map_err(|source| AuthError::ReadToken {
        path: path.clone(),
        source,
    })?;
    let token = text.trim();
    if token.is_empty() {
        return Err(AuthError::EmptyToken(path));
    }
    Ok((token.as_bytes().to_vec(), created.then_some(path)))
}

fn write_new_token(path: &Path) -> Result<(), AuthError> {
    use std::io::Write;
    let err = |source| AuthError::WriteToken {
        path: path.to_path_buf(),
        source,
    };
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| err(std::io::Error::other(e.to_string())))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(err)?;
    }
    let mut f = crate::platform::create_private(path).map_err(err)?;
    writeln!(f, "{}", hex::encode(bytes)).map_err(err)?;
    Ok(())
}

fn fetch_json(url: &str) -> Result<Value, AuthError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let fail = |reason: String| AuthError::Fetch {
        url: url.to_string(),
        reason,
    };
    let mut resp = agent.get(url).call().map_err(|e| fail(e.to_string()))?;
    resp.body_mut()
        .read_json::<Value>()
        .map_err(|e| fail(e.to_string()))
}

fn is_loopback_http(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("http://") else {
        return false;
    };
    let host = rest.split(['/', '?']).next().unwrap_or("");
    let host = host.rsplit_once(':').map_or(host, |(h, _)| h);
    matches!(host, "127.0.0.1" | "localhost" | "[::1]")
}

impl OAuth {
    /// Discover the issuer's JWKS (RFC 8414 metadata, else OpenID discovery) and load it.
    /// Blocking: call at start-up.
    pub fn discover(issuer: &str, resource: &str, actor_claim: &str) -> Result<OAuth, AuthError> {
        let issuer = issuer.trim_end_matches('/').to_string();
        if !issuer.starts_with("https://") && !is_loopback_http(&issuer) {
            return Err(AuthError::InsecureIssuer(issuer));
        }
        let candidates = [
            format!("{issuer}/.well-known/oauth-authorization-server"),
            format!("{issuer}/.well-known/openid-configuration"),
        ];
        let mut last = None;
        let mut jwks_uri = None;
        for url in &candidates {
            match fetch_json(url) {
                Ok(meta) => {
                    if let Some(u) = meta.get("jwks_uri").and_then(Value::as_str) {
                        jwks_uri = Some(u.to_string());
                        break;
                    }
                    last = Some(AuthError::Fetch {
                        url: url.clone(),
                        reason: "the metadata has no jwks_uri".into(),
                    });
                }
                Err(e) => last = Some(e),
            }
        }
        let Some(jwks_uri) = jwks_uri else {
            return Err(last.unwrap_or(AuthError::Fetch {
                url: issuer.clone(),
                reason: "no metadata".into(),
            }));
        };
        let keys = fetch_jwks(&jwks_uri)?;
        Ok(OAuth {
            issuer,
            resource: resource.to_string(),
            actor_claim: actor_claim.to_string(),
            jwks_uri,
            keys: RwLock::new((keys, Instant::now())),
        })
    }

    /// The RFC 9728 Protected Resource Metadata document.
    pub fn metadata(&self) -> Value {
        json!({
            "resource": self.resource,
            "authorization_servers": [self.issuer],
            "bearer_methods_supported": ["header"],
            "resource_name": "toolsmith",
        })
    }

    /// Validate a JWT access token; the principal named by the actor claim.
    async fn validate(&self, token: &str) -> Result<Principal, String> {
        let header = jsonwebtoken::decode_header(token).map_err(|e| format!("not a JWT: {e}"))?;
        if !matches!(
            header.alg,
            Algorithm::RS256
                | Algorithm::RS384
                | Algorithm::RS512
                | Algorithm::PS256
                | Algorithm::PS384
                | Algorithm::PS512
                | Algorithm::ES256
                | Algorithm::ES384
                | Algorithm::EdDSA
        ) {
            return Err(format!(
                "signing algorithm {:?} is not accepted",
                header.alg
            ));
        }
        let mut key = self.key(header.kid.as_deref(), header.alg);
        if key.is_none() {
            // A key rotation: refetch the JWKS, at most every 30 s.
            self.refresh().await;
            key = self.key(header.kid.as_deref(), header.alg);
        }
        let key = key.ok_or_else(|| "no key of the issuer matches the token".to_string())?;
        let mut v = Validation::new(header.alg);
        v.set_audience(&[&self.resource]);
        v.set_issuer(&[&self.issuer]);
        v.set_required_spec_claims(&["exp", "aud", "iss"]);
        v.leeway = 30;
        let data = jsonwebtoken::decode::<serde_json::Map<String, Value>>(token, &key, &v)
            .map_err(|e| format!("invalid token: {e}"))?;
        let actor = data
            .claims
            .get(&self.actor_claim)
            .and_then(Value::as_str)
            .map(|s| {
                s.chars()
                    .filter(|c| !c.is_control())
                    .take(200)
                    .collect::<String>()
            })
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| format!("the token has no {:?} claim", self.actor_claim))?;
        Ok(Principal(actor))
    }

    fn key(&self, kid: Option<&str>, alg: Algorithm) -> Option<DecodingKey> {
        let guard = self.keys.read().ok()?;
        let set = &guard.0;
        let jwk = match kid {
            Some(k) => set.find(k)?,
            None => set.keys.iter().find(|k| {
                k.common
                    .key_algorithm
                    .map(|a| format!("{a:?}") == format!("{alg:?}"))
                    .unwrap_or(true)
            })?,
        };
        DecodingKey::from_jwk(jwk).ok()
    }

    async fn refresh(&self) {
        let stale = self
            .keys
            .read()
            .map(|g| g.1.elapsed() > Duration::from_secs(30))
            .unwrap_or(false);
        if !stale {
            return;
        }
        let uri = self.jwks_uri.clone();
        match crate::platform::blocking(move || fetch_jwks(&uri)).await {
            Ok(Ok(set)) => {
                if let Ok(mut g) = self.keys.write() {
                    *g = (set, Instant::now());
                }
            }
            Ok(Err(e)) => tracing::warn!("refreshing the issuer's keys failed: {e}"),
            Err(e) => tracing::warn!("refreshing the issuer's keys failed: {e}"),
        }
    }
}

fn fetch_jwks(url: &str) -> Result<JwkSet, AuthError> {
    let v = fetch_json(url)?;
    let set: JwkSet = serde_json::from_value(v).map_err(|e| AuthError::Fetch {
        url: url.to_string(),
        reason: format!("not a JWK set: {e}"),
    })?;
    if set.keys.is_empty() {
        return Err(AuthError::NoKeys {
            url: url.to_string(),
        });
    }
    Ok(set)
}

/// The `401` answer with its challenge.
fn challenge(auth: &Auth, error: Option<&str>) -> Response {
    let mut value = String::from("Bearer realm=\"toolsmith\"");
    if let Auth::OAuth(o) = auth {
        let meta = o
            .resource
            .split_once("://")
            .and_then(|(scheme, rest)| {
                let host = rest.split('/').next()?;
                Some(format!("{scheme}://{host}{METADATA_PATH}"))
            })
            .unwrap_or_default();
        value.push_str(&format!(", resource_metadata=\"{meta}\""));
    }
    if let Some(e) = error {
        value.push_str(&format!(
            ", error=\"invalid_token\", error_description=\"{}\"",
            e.replace(['"', '\\'], "'")
        ));
    }
    let body = json!({
        "error": if error.is_some() { "invalid_token" } else { "unauthorized" },
        "error_description": error.unwrap_or("this server requires an access token: send `Authorization: Bearer <token>`"),
    });
    let mut resp = (
        StatusCode::UNAUTHORIZED,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response();
    if let Ok(v) = HeaderValue::from_str(&value) {
        resp.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    resp
}

/// Middleware: let a request through only with valid credentials.
pub async fn require(State(auth): State<Arc<Auth>>, mut req: Request, next: Next) -> Response {
    if matches!(*auth, Auth::Open) || req.uri().path().starts_with("/.well-known/") {
        return next.run(req).await;
    }
    let presented = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then(|| token.trim().to_string())
        });
    let Some(token) = presented else {
        return challenge(&auth, None);
    };
    match &*auth {
        Auth::Open => {}
        Auth::Token(expected) => {
            if !bool::from(token.as_bytes().ct_eq(expected)) {
                return challenge(&auth, Some("the token is not valid for this server"));
            }
        }
        Auth::OAuth(o) => match o.validate(&token).await {
            Ok(p) => {
                req.extensions_mut().insert(p);
            }
            Err(e) => return challenge(&auth, Some(&e)),
        },
    }
    next.run(req).await
}

/// The principal of an authenticated request, from the HTTP request rmcp attaches to the
/// MCP request's extensions.
pub fn principal(ext: &rmcp::model::Extensions) -> Option<String> {
    ext.get::<axum::http::request::Parts>()
        .and_then(|p| p.extensions.get::<Principal>())
        .map(|p| p.0.clone())
}
