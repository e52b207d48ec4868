//! macOS: Seatbelt through `/usr/bin/sandbox-exec -p PROFILE`, with the profile generated from
//! the tool's grants (the approach of comparable coding agents). Deny by default; reads only of
//! the system directories, the interpreter, the tool and declared roots (so the home directory
//! stays unreadable); writes only to scratch and declared write roots; no network unless
//! granted; signals and process inspection only inside the sandbox.
//!
//! `profile` is a pure function (unit-tested on every platform); running it is macOS only.

use super::{Endpoint, Grants, Net};
use std::fmt::Write;
use std::path::Path;

/// The Seatbelt front end that ships with macOS.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// Devices every script may read and write.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/dtracehelper",
    "/dev/tty",
];

/// A string literal in SBPL (Scheme-like: backslash and double quote escaped; control
/// characters refused by dropping them, paths never need them).
fn quote(p: &Path) -> String {
    let mut s = String::from("\"");
    for c in p.to_string_lossy().chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            c if c.is_control() => {}
            c => s.push(c),
        }
    }
    s.push('"');
    s
}

/// The SBPL profile for the grants. Paths must already be resolved (`/private/var/...`,
/// not `/var/...`): Seatbelt matches real paths.
pub fn profile(g: &Grants) -> String {
    let mut p = String::new();
    p.push_str("(version 1)\n(deny default)\n");
    p.push_str("(allow process-exec process-fork)\n");
    p.push_str("(allow signal (target same-sandbox))\n");
    p.push_str("(allow process-info* (target same-sandbox))\n");
    p.push_str("(allow sysctl-read)\n");
    p.push_str("(allow ipc-posix-sem ipc-posix-shm-read-data)\n");
    p.push_str("(allow mach-lookup (global-name \"com.apple.system.opendirectoryd.libinfo\") (global-name \"com.apple.system.notification_center\") (global-name \"com.apple.trustd.agent\"))\n");
    p.push_str("(allow file-read-metadata (literal \"/\") (literal \"/private\") (literal \"/var\") (literal \"/tmp\") (literal \"/etc\"))\n");
    let reads: Vec<String> = g
        .system
        .iter()
        .chain(&g.read)
        .map(|d| format!("(subpath {})", quote(d)))
        .collect();
    if !reads.is_empty() {
        let _ = writeln!(p, "(allow file-read* {})", reads.join(" "));
    }
    let devices: Vec<String> = DEVICES
        .iter()
        .map(|d| format!("(literal {})", quote(Path::new(d))))
        .collect();
    let _ = writeln!(
        p,
        "(allow file-read* file-write-data file-ioctl {})",
        devices.join(" ")
    );
    let writes: Vec<String> = std::iter::once(&g.scratch)
        .chain(&g.write)
        .map(|d| format!("(subpath {})", quote(d)))
        .collect();
    let _ = writeln!(p, "(allow file-read* file-write* {})", writes.join(" "));
    match &g.network {
        Net::Any => {
            p.push_str("(allow network*)\n(allow system-socket)\n");
            p.push_str("(allow mach-lookup (global-name \"com.apple.dnssd.service\") (global-name \"com.apple.SystemConfiguration.configd\"))\n");
        }
        // Only the filtering proxy's loopback port; it resolves names itself.
        Net::Proxy(Endpoint::Tcp(port)) => {
            let _ = writeln!(
                p,
                "(allow system-socket)\n(allow network-outbound (remote tcp \"localhost:{port}\"))"
            );
        }
        Net::Proxy(Endpoint::Unix { .. }) | Net::None => {}
    }
    p
}

/// Whether Seatbelt can be used here: Ok, or why not.
#[cfg(target_os = "macos")]
pub fn status() -> Result<(), String> {
    if Path::new(SANDBOX_EXEC).is_file() {
        Ok(())
    } else {
        Err(format!("{SANDBOX_EXEC} is missing"))
    }
}

/// Grants with every path resolved, as Seatbelt needs them (`/var` is `/private/var`, ...).
#[cfg(target_os = "macos")]
pub fn resolved(g: &Grants) -> Grants {
    let r = |p: &std::path::PathBuf| p.canonicalize().unwrap_or_else(|_| p.clone());
    Grants {
        network: g.network.clone(),
        scratch: r(&g.scratch),
        system: g.system.iter().map(r).collect(),
        read: g.read.iter().map(r).collect(),
        write: g.write.iter().map(r).collect(),
        cwd: g.cwd.as_ref().map(r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn grants(network: bool) -> Grants {
        Grants {
            network: if network { Net::Any } else { Net::None },
            scratch: PathBuf::from("/private/var/folders/xy/T/toolsmith-run-1"),
            system: vec![PathBuf::from("/usr"), PathBuf::from("/System")],
            read: vec![PathBuf::from("/Users/ann/box/tools/wc")],
            write: vec![PathBuf::from("/Users/ann/data/out")],
            cwd: None,
        }
    }

    #[test]
    fn denies_by_default_and_reads_only_what_is_granted() {
        let p = profile(&grants(false));
        assert!(p.starts_with("(version 1)\n(deny default)\n"), "{p}");
        assert!(p.contains(
            "(allow file-read* (subpath \"/usr\") (subpath \"/System\") (subpath \"/Users/ann/box/tools/wc\"))"
        ), "{p}");
        // The home directory is not readable as a whole.
        assert!(!p.contains("(subpath \"/Users/ann\")"), "{p}");
        assert!(!p.contains("(allow file-read*)"), "{p}");
    }

    #[test]
    fn writes_only_to_scratch_and_declared_write_roots() {
        let p = profile(&grants(false));
        let writes: Vec<&str> = p.lines().filter(|l| l.contains("file-write*")).collect();
        assert_eq!(
            writes,
            vec![
                "(allow file-read* file-write* (subpath \"/private/var/folders/xy/T/toolsmith-run-1\") (subpath \"/Users/ann/data/out\"))"
            ]
        );
    }

    #[test]
    fn network_only_when_granted() {
        assert!(!profile(&grants(false)).contains("network"));
        let p = profile(&grants(true));
        assert!(p.contains("(allow network*)"), "{p}");
    }

    #[test]
    fn a_domain_list_reaches_only_the_proxy_port() {
        let mut g = grants(false);
        g.network = Net::Proxy(Endpoint::Tcp(40123));
        let p = profile(&g);
        assert!(
            p.contains("(allow network-outbound (remote tcp \"localhost:40123\"))"),
            "{p}"
        );
        assert!(!p.contains("(allow network*)"), "{p}");
    }

    #[test]
    fn paths_are_quoted_safely() {
        let mut g = grants(false);
        g.read = vec![PathBuf::from("/tmp/a\"b\\c) (allow default")];
        let p = profile(&g);
        assert!(
            p.contains("(subpath \"/tmp/a\\\"b\\\\c) (allow default\")"),
            "{p}"
        );
        // The injected text stays inside the string literal: no unquoted "(allow default".
        assert!(!p.contains("\n(allow default"));
    }
}
