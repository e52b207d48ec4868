//! Who may use the console: the person who opened the one-time login link printed in their
//! terminal. The link's token is single-use and expires; using it opens a session (a random
//! id in a cookie that is HttpOnly and SameSite=Strict, kept in this process's memory only).
//! Every request must name the console's own address as its `Host` (DNS rebinding); every form
//! post must carry the session's CSRF token, and must not come from another origin (`Origin`,
//! `Sec-Fetch-Site`). A notice the console shows (what a form post did) is kept with the
//! session and shown once: nothing in a URL becomes the console's words. The MCP client never sees any of it: a link it is given (the approvals
//! page) opens nothing without the session.

use axum::http::HeaderMap;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use subtle::ConstantTimeEq;

/// The session cookie's name.
pub const COOKIE: &str = "toolsmith_console";
/// How long the login link stays valid when unused.
pub const LOGIN_TTL: Duration = Duration::from_secs(15 * 60);
/// How long a session lasts.
pub const SESSION_TTL: Duration = Duration::from_secs(12 * 3600);

/// A random token of `bytes` bytes, as hex.
pub fn token(bytes: usize) -> std::io::Result<String> {
    crate::platform::random_hex(bytes)
}

/// An open session.
#[derive(Clone)]
pub struct Login {
    /// The CSRF token every form of this session carries.
    pub csrf: String,
    id: String,
    expires: Instant,
}

/// The console's login link and sessions.
pub struct Auth {
    /// `127.0.0.1:PORT`: the only Host accepted.
    host: String,
    login: Mutex<Option<(String, Instant)>>,
    sessions: Mutex<HashMap<String, Login>>,
    /// Each session's notice for its next page (written by the console only).
    notices: Mutex<HashMap<String, String>>,
}

/// Why a request was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Another Host header than the console's address.
    WrongHost,
    /// No (valid) session cookie.
    NoSession,
    /// A form post from another origin, or without this session's CSRF token.
    CrossSite,
}

fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

fn header<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

impl Auth {
    /// The auth of a console at `host` (`127.0.0.1:PORT`), with a new login token.
    pub fn new(host: String) -> std::io::Result<(Auth, String)> {
        let login = token(32)?;
        Ok((
            Auth {
                host,
                login: Mutex::new(Some((login.clone(), Instant::now() + LOGIN_TTL))),
                sessions: Mutex::new(HashMap::new()),
                notices: Mutex::new(HashMap::new()),
            },
            login,
        ))
    }

    /// The console's origin (`http://127.0.0.1:PORT`).
    pub fn origin(&self) -> String {
        format!("http://{}", self.host)
    }

    /// Refuse another Host than the console's own (a page of another name resolving here).
    pub fn check_host(&self, h: &HeaderMap) -> Result<(), Refusal> {
        match header(h, "host") {
            Some(v) if v == self.host => Ok(()),
            _ => Err(Refusal::WrongHost),
        }
    }

    /// Use the login token: a new session id, once.
    pub fn login(&self, given: &str) -> Option<String> {
        let mut slot = self.login.lock().unwrap_or_else(|p| p.into_inner());
        let valid = slot
            .as_ref()
            .is_some_and(|(t, exp)| same(t, given) && *exp > Instant::now());
        if !valid {
            return None;
        }
        *slot = None;
        let id = token(32).ok()?;
        let csrf = token(32).ok()?;
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                id.clone(),
                Login {
                    csrf,
                    id: id.clone(),
                    expires: Instant::now() + SESSION_TTL,
                },
            );
        Some(id)
    }

    /// The session of the request's cookie.
    pub fn session(&self, h: &HeaderMap) -> Result<Login, Refusal> {
        let id = h
            .get_all("cookie")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|kv| kv.trim().split_once('='))
            .find(|(k, _)| *k == COOKIE)
            .map(|(_, v)| v.to_string())
            .ok_or(Refusal::NoSession)?;
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        sessions.retain(|_, s| s.expires > now);
        sessions
            .iter()
            .find(|(k, _)| same(k, &id))
            .map(|(_, s)| s.clone())
            .ok_or(Refusal::NoSession)
    }

    /// A form post: the session, from the console's own pages, with its CSRF token.
    pub fn check_post(&self, h: &HeaderMap, csrf: &str) -> Result<Login, Refusal> {
        let s = self.session(h)?;
        let origin = self.origin();
        if header(h, "origin").is_some_and(|o| o != origin)
            || header(h, "sec-fetch-site").is_some_and(|v| v != "same-origin")
            || !same(&s.csrf, csrf)
        {
            return Err(Refusal::CrossSite);
        }
        Ok(s)
    }

    /// Keep `notice` (the console's own words) for the session's next page.
    pub fn tell(&self, s: &Login, notice: String) {
        self.notices
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(s.id.clone(), notice);
    }

    /// The session's notice, once: taken by the page that shows it.
    pub fn take_notice(&self, s: &Login) -> Option<String> {
        self.notices
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&s.id)
    }

    /// The Set-Cookie value of a new session.
    pub fn cookie(id: &str) -> String {
        format!("{COOKIE}={id}; HttpOnly; SameSite=Strict; Path=/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn the_link_opens_one_session_and_posts_need_its_token_and_origin() {
        let (auth, login) = Auth::new("127.0.0.1:9".into()).unwrap();
        assert!(
            auth.check_host(&headers(&[("host", "127.0.0.1:9")]))
                .is_ok()
        );
        assert_eq!(
            auth.check_host(&headers(&[("host", "evil.example:9")])),
            Err(Refusal::WrongHost)
        );
        assert!(auth.login("0000").is_none());
        let id = auth.login(&login).unwrap();
        assert!(auth.login(&login).is_none(), "single use");
        let cookie = format!("other=1; {COOKIE}={id}");
        let s = auth.session(&headers(&[("cookie", &cookie)])).unwrap();
        assert!(auth.session(&headers(&[])).is_err());
        let own = [
            ("cookie", cookie.as_str()),
            ("origin", "http://127.0.0.1:9"),
        ];
        assert!(auth.check_post(&headers(&own), &s.csrf).is_ok());
        assert_eq!(
            auth.check_post(&headers(&own), "wrong").err(),
            Some(Refusal::CrossSite)
        );
        let other = [
            ("cookie", cookie.as_str()),
            ("origin", "http://127.0.0.1:10"),
        ];
        assert_eq!(
            auth.check_post(&headers(&other), &s.csrf).err(),
            Some(Refusal::CrossSite)
        );
        // A notice is the session's, shown once.
        auth.tell(&s, "Approved.".into());
        assert_eq!(auth.take_notice(&s).as_deref(), Some("Approved."));
        assert_eq!(auth.take_notice(&s), None);
    }
}
