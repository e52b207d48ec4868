//! The domains of `capabilities.network = [...]`: what an entry may be, and which entry (if
//! any) lets a host through. Host names compare case-insensitively and without a trailing dot;
//! `*.example.com` covers every subdomain of example.com but not example.com itself.

use std::net::IpAddr;

/// Why `entry` is not a domain entry, or Ok.
pub fn check(entry: &str) -> Result<(), String> {
    if entry.contains("://") {
        return Err("has a scheme: list the host only".into());
    }
    if entry.contains('/') {
        return Err("has a path: list the host only".into());
    }
    if entry.parse::<IpAddr>().is_ok() {
        return Ok(());
    }
    let name = entry.strip_prefix("*.").unwrap_or(entry);
    if name.contains(':') {
        return Err("has a port: every port of a listed host is allowed".into());
    }
    if name.is_empty() || name == "*" {
        return Err("is not a host name (`network = true` allows every host)".into());
    }
    if name.len() > 253 {
        return Err("is longer than a host name may be".into());
    }
    let labels_ok = name.trim_end_matches('.').split('.').all(|l| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    });
    if !labels_ok {
        return Err(
            "is not a host name (letters, digits, `-` and dots; `*.` only at the start)".into(),
        );
    }
    if entry.starts_with("*.") && !name.contains('.') {
        return Err("would cover a whole top-level domain".into());
    }
    Ok(())
}

/// The host of an `http://` or `https://` URL, lowercase, without brackets or port.
pub fn url_host(url: &str) -> Option<String> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let authority = rest.split(['/', '?', '#']).next()?;
    if authority.contains('@') {
        return None;
    }
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next()?
    } else {
        authority.split(':').next()?
    };
    let h = normal(host);
    (!h.is_empty()).then_some(h)
}

fn normal(host: &str) -> String {
    let h = host.trim_end_matches('.').to_ascii_lowercase();
    // `[::1]` as written in URLs and CONNECT lines.
    h.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .map(str::to_string)
        .unwrap_or(h)
}

/// The entry of `list` that allows `host`, if one does.
pub fn allowing<'a>(list: &'a [String], host: &str) -> Option<&'a str> {
    let host = normal(host);
    if host.is_empty() {
        return None;
    }
    let host_ip = host.parse::<IpAddr>().ok();
    list.iter().map(String::as_str).find(|entry| {
        if let Some(suffix) = entry.strip_prefix("*.") {
            let suffix = normal(suffix);
            host_ip.is_none()
                && host.len() > suffix.len() + 1
                && host.ends_with(&suffix)
                && host.as_bytes()[host.len() - suffix.len() - 1] == b'.'
        } else {
            match (entry.parse::<IpAddr>().ok(), host_ip) {
                (Some(a), Some(b)) => a == b,
                (None, None) => normal(entry) == host,
                _ => false,
            }
        }
    })
}

/// Whether `entry` names one address or `localhost` itself: only then may the host it allows
/// resolve to a loopback or link-local address (a name like `api.example.com` that resolves to
/// 127.0.0.1 or 169.254.169.254 would otherwise reach this machine's own services).
pub fn names_local(entry: &str) -> bool {
    entry.parse::<IpAddr>().is_ok() || normal(entry) == "localhost"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn entries_are_hosts_wildcards_or_addresses() {
        for ok in [
            "api.github.com",
            "*.github.com",
            "127.0.0.1",
            "::1",
            "localhost",
            "a_b.example.org.",
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
        for bad in [
            "https://x.com",
            "x.com/path",
            "x.com:443",
            "*",
            "*.com",
            "",
            "a..b",
            "-a.com",
            "*.*.x.com",
            "a b.com",
        ] {
            assert!(check(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn hosts_match_exactly_or_as_subdomains_of_a_wildcard() {
        let l = list(&["api.github.com", "*.example.com", "127.0.0.1", "::1"]);
        assert_eq!(allowing(&l, "API.GitHub.com."), Some("api.github.com"));
        assert_eq!(allowing(&l, "github.com"), None);
        assert_eq!(allowing(&l, "evil-api.github.com"), None);
        assert_eq!(allowing(&l, "a.b.example.com"), Some("*.example.com"));
        assert_eq!(allowing(&l, "example.com"), None);
        assert_eq!(allowing(&l, "badexample.com"), None);
        assert_eq!(allowing(&l, "127.0.0.1"), Some("127.0.0.1"));
        assert_eq!(allowing(&l, "127.0.0.2"), None);
        assert_eq!(allowing(&l, "[::1]"), Some("::1"));
        assert_eq!(allowing(&l, "localhost"), None);
        assert_eq!(allowing(&l, ""), None);
    }

    #[test]
    fn only_addresses_and_localhost_name_local_hosts() {
        assert!(names_local("127.0.0.1"));
        assert!(names_local("LocalHost"));
        assert!(!names_local("api.github.com"));
        assert!(!names_local("*.example.com"));
    }
}
