//! OCI artifacts against the reference registry (Debian's `docker-registry`, installed by
//! scripts/setup.sh) on 127.0.0.1: a WASM and a script tool round trip, a pinned digest, a
//! tampered layer in the registry's storage, bad references, credentials from the docker
//! config file (a registry with htpasswd auth), the CLI and a real MCP client. The registry's
//! own HTTP API and the git CLI are the oracles.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use toolsmith::app::App;
use toolsmith::error::Hint;
use toolsmith::runner::script::NoHost;
use toolsmith::share::{self, ImportRequest, ShareError};
use toolsmith::toolbox::Toolbox;

/// A `docker-registry serve` on a free loopback port with its storage in a temp dir; killed
/// on drop.
struct Registry {
    child: Child,
    addr: String,
    storage: PathBuf,
    _dir: tempfile::TempDir,
}

/// A bcrypt hash of "s3cret-pw" (cost 4), for the htpasswd registry.
const HTPASSWD: &str = "tester:$2b$04$XI7SJdrOd90z/pWVpSRI2ucxPDWEQqQhuuFf9AuzjtlLxE9gfB.ki\n";

impl Registry {
    fn start(with_auth: bool) -> Registry {
        let dir = tempfile::tempdir().unwrap();
        let storage = dir.path().join("storage");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr = format!("127.0.0.1:{port}");
        let mut config = format!(
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {addr}\n",
            storage.display()
        );
        if with_auth {
            let pw = dir.path().join("htpasswd");
            std::fs::write(&pw, HTPASSWD).unwrap();
            config.push_str(&format!(
                "auth:\n  htpasswd:\n    realm: toolsmith-test\n    path: {}\n",
                pw.display()
            ));
        }
        let cfg = dir.path().join("config.yml");
        std::fs::write(&cfg, config).unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&cfg)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("docker-registry runs (scripts/setup.sh installs Debian's docker-registry)");
        let reg = Registry {
            child,
            addr,
            storage,
            _dir: dir,
        };
        for _ in 0..200 {
            if std::net::TcpStream::connect(&reg.addr).is_ok() {
                return reg;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        panic!("docker-registry did not listen on {}", reg.addr);
    }

    /// The raw manifest at `repo:reference`, from the registry's HTTP API.
    fn manifest(&self, repo: &str, reference: &str) -> Value {
        let mut res = ureq::get(&format!(
            "http://{}/v2/{repo}/manifests/{reference}",
            self.addr
        ))
        .header("Accept", "application/vnd.oci.image.manifest.v1+json")
        .call()
        .expect("the registry serves the manifest");
        res.body_mut().read_json().unwrap()
    }

    /// The file holding blob `digest` in the registry's storage.
    fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").unwrap();
        self.storage.join(format!(
            "docker/registry/v2/blobs/sha256/{}/{hex}/data",
            &hex[..2]
        ))
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn oci_req(source: &str, name: Option<&str>) -> ImportRequest {
    ImportRequest {
        source: source.to_string(),
        reference: None,
        path: None,
        name: name.map(str::to_string),
        gist_base: None,
    }
}

async fn call(tb: &Toolbox, name: &str, args: Value) -> Value {
    // Imported tools are held until a person trusts them (tests/it/team.rs checks that).
    toolsmith::trust::trust(tb, name).unwrap();
    let app = App::new(
        tb.clone(),
        toolsmith::config::Config::from_env().expect("config"),
    );
    let out = app.call(name, args, &NoHost).await.expect("the call works");
    out.structured.unwrap_or(json!(out.text))
}

/// The files of a tool directory, tool.toml without its [origin] and name lines.
fn files_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
            let mut bytes = std::fs::read(e.path()).unwrap();
            if rel == "tool.toml" {
                let text = String::from_utf8(bytes).unwrap();
                let text = text.split("\n[origin]").next().unwrap();
                bytes = text
                    .lines()
                    .filter(|l| !l.starts_with("name ="))
                    .collect::<Vec<_>>()
                    .join("\n")
                    .trim_end()
                    .as_bytes()
                    .to_vec();
            }
            (rel, bytes)
        })
        .collect();
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_round_trip_pinned_by_digest_and_tampering_is_refused() {
    let reg = Registry::start(false);
    let tmp = tempfile::tempdir().unwrap();
    let src = Toolbox::init(
        &tmp.path().join("src"),
        &toolsmith::toolbox::seed_files(),
        "test",
    )
    .unwrap();
    let dest = Toolbox::init(&tmp.path().join("dest"), &[], "test").unwrap();

    // A WASM tool in the CNCF wasm layout, with its manifest, lockfile and source.
    let target = format!("{}/tools/word_count:1.0", reg.addr);
    let out = share::export_oci(&src, "word_count", &target).unwrap();
    let m = reg.manifest("tools/word_count", "1.0");
    assert_eq!(m["mediaType"], "application/vnd.oci.image.manifest.v1+json");
    assert_eq!(
        m["config"]["mediaType"],
        "application/vnd.wasm.config.v0+json"
    );
    let types: Vec<&str> = m["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["mediaType"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "application/wasm",
            share::OCI_TOOL_MANIFEST_MEDIA_TYPE,
            share::OCI_LOCKFILE_MEDIA_TYPE,
            share::OCI_SOURCE_MEDIA_TYPE
        ]
    );
    assert_eq!(
        m["layers"][0]["annotations"]["org.opencontainers.image.title"],
        "tool.wasm"
    );
    // The digest reported is the registry's: the manifest is addressable by it.
    assert_eq!(
        reg.manifest("tools/word_count", &out.digest)["config"],
        m["config"]
    );
    // Publishing the same tool again gives the same digest.
    assert_eq!(
        share::export_oci(&src, "word_count", &target)
            .unwrap()
            .digest,
        out.digest
    );

    let imported =
        share::import_tool(&dest, &oci_req(&format!("oci://{target}"), None), "test").unwrap();
    assert_eq!(imported.tools[0].name, "word_count");
    assert_eq!(imported.source_commit, out.digest);
    assert_clean(dest.root());
    assert_eq!(
        files_of(&dest.tools_dir().join("word_count")),
        files_of(&src.tools_dir().join("word_count"))
    );
    let toml = std::fs::read_to_string(dest.tools_dir().join("word_count/tool.toml")).unwrap();
    assert!(
        toml.contains(&format!(
            "[origin]\nurl = \"oci://{}/tools/word_count\"\nref = \"1.0\"\ndigest = \"{}\"",
            reg.addr, out.digest
        )),
        "{toml}"
    );
    let log = git(dest.root(), &["log", "-1", "--format=%B"]);
    assert!(
        log.contains(&format!("Source-Digest: {}", out.digest)),
        "{log}"
    );
    assert_eq!(
        call(&dest, "word_count", json!({"text": "one two three"})).await["words"],
        3
    );

    // A script tool as one tar layer, imported by its digest under another name.
    let s = share::export_oci(
        &src,
        "slugify",
        &format!("{}/tools/slugify:latest", reg.addr),
    )
    .unwrap();
    assert_eq!(s.layers.len(), 1);
    assert_eq!(s.layers[0].media_type, share::OCI_TOOL_MEDIA_TYPE);
    let m = reg.manifest("tools/slugify", "latest");
    assert_eq!(m["artifactType"], "application/vnd.toolsmith.tool.v1");
    assert_eq!(
        s.pinned,
        format!("oci://{}/tools/slugify@{}", reg.addr, s.digest)
    );
    share::import_tool(&dest, &oci_req(&s.pinned, Some("slug2")), "test").unwrap();
    let toml = std::fs::read_to_string(dest.tools_dir().join("slug2/tool.toml")).unwrap();
    assert!(toml.contains("name = \"slug2\""), "{toml}");
    assert!(
        toml.contains(&format!("digest = \"{}\"", s.digest)) && !toml.contains("ref ="),
        "{toml}"
    );
    assert_eq!(
        files_of(&dest.tools_dir().join("slug2")),
        files_of(&src.tools_dir().join("slugify"))
    );
    assert_eq!(
        call(&dest, "slug2", json!({"text": "Hi There"})).await["slug"],
        "hi-there"
    );
    assert_clean(dest.root());

    // update_tool follows a tag (shown, applied only when asked); a digest import stays put.
    share::import_tool(
        &dest,
        &oci_req(
            &format!("oci://{}/tools/slugify:latest", reg.addr),
            Some("slug3"),
        ),
        "test",
    )
    .unwrap();
    let p = src.tools_dir().join("slugify/tool.toml");
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(&p, text.replacen("Turn a text", "EVIL: turn a text", 1)).unwrap();
    git(
        src.root(),
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@x",
            "commit",
            "-qam",
            "change",
        ],
    );
    let s2 = share::export_oci(
        &src,
        "slugify",
        &format!("{}/tools/slugify:latest", reg.addr),
    )
    .unwrap();
    assert_ne!(s2.digest, s.digest);
    let u = share::update_tool(&dest, "slug3", false, None, "test", None).unwrap();
    assert!(!u.up_to_date && !u.applied, "{u:?}");
    assert_eq!(u.changed_fields[0].field, "description");
    assert_eq!(u.to_commit, s2.digest);
    assert_eq!(u.from_commit.as_deref(), Some(s.digest.as_str()));
    let e = share::update_tool(&dest, "slug3", true, Some(&s.digest), "test", None).unwrap_err();
    assert!(matches!(e, ShareError::OriginMoved { .. }), "{e}");
    let u = share::update_tool(&dest, "slug3", true, Some(&s2.digest), "test", None).unwrap();
    assert!(u.applied);
    let toml = std::fs::read_to_string(dest.tools_dir().join("slug3/tool.toml")).unwrap();
    assert!(toml.contains(&format!("digest = \"{}\"", s2.digest)) && toml.contains("EVIL"));
    assert!(
        share::update_tool(&dest, "slug2", false, None, "test", None)
            .unwrap()
            .up_to_date
    );
    assert_clean(dest.root());

    // A name clash is refused like any import.
    let e = share::import_tool(&dest, &oci_req(&s.pinned, Some("word_count")), "test").unwrap_err();
    assert!(matches!(e, ShareError::Exists { .. }), "{e}");

    // Tampering with a layer in the registry's storage: refused, nothing written.
    let wasm_digest = out.layers[0].digest.clone();
    let blob = reg.blob_file(&wasm_digest);
    let mut bytes = std::fs::read(&blob).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&blob, &bytes).unwrap();
    let before = commit_count(dest.root());
    let e = share::import_tool(
        &dest,
        &oci_req(&format!("oci://{target}"), Some("wc_tampered")),
        "test",
    )
    .unwrap_err();
    assert!(matches!(e, ShareError::OciDigest { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("tool.wasm (application/wasm)") && msg.contains(&wasm_digest),
        "{msg}"
    );
    assert!(e.hint().unwrap().contains("digest"), "{:?}", e.hint());
    assert!(!dest.tools_dir().join("wc_tampered").exists());
    assert_eq!(commit_count(dest.root()), before);
    assert_clean(dest.root());

    // Bad references, each with what is wrong and a hint.
    let cases: Vec<(String, &str)> = vec![
        ("oci://word_count:1.0".into(), "no registry host"),
        (format!("oci://{}/Tools/X:1", reg.addr), "lowercase"),
        (format!("oci://{}/tools/x@sha256:abc", reg.addr), "digest"),
        (format!("oci://{}/tools/nope:1.0", reg.addr), "no artifact"),
        (
            format!("oci://{}/tools/slugify@sha256:{}", reg.addr, "0".repeat(64)),
            "no artifact",
        ),
    ];
    for (source, expect) in cases {
        let e = share::import_tool(&dest, &oci_req(&source, None), "test").unwrap_err();
        assert!(e.to_string().contains(expect), "{source}: {e}");
        assert!(e.hint().is_some(), "{source}: {e}");
    }
    let mut r = oci_req(&s.pinned, Some("x"));
    r.reference = Some("main".into());
    let e = share::import_tool(&dest, &r, "test").unwrap_err();
    assert!(e.to_string().contains("`ref`"), "{e}");
    // Publishing to a digest, or a tool that does not exist, is refused before any upload.
    let e = share::export_oci(
        &src,
        "slugify",
        &format!("{}/t/x@sha256:{}", reg.addr, "1".repeat(64)),
    )
    .unwrap_err();
    assert!(matches!(e, ShareError::OciReference { .. }), "{e}");
    assert!(share::export_oci(&src, "nope", &format!("{}/t/x:1", reg.addr)).is_err());
    assert_clean(dest.root());
}

fn cli(toolbox: &Path, docker_config: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--toolbox")
        .arg(toolbox)
        .args(args)
        .env("DOCKER_CONFIG", docker_config)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn cli_uses_docker_config_credentials_and_mcp_round_trips() {
    let reg = Registry::start(true);
    let tmp = tempfile::tempdir().unwrap();
    let src = Toolbox::init(
        &tmp.path().join("src"),
        &toolsmith::toolbox::seed_files(),
        "test",
    )
    .unwrap();
    let dest = Toolbox::init(&tmp.path().join("dest"), &[], "test").unwrap();
    let none = tmp.path().join("no-docker-config");
    let good = tmp.path().join("docker-good");
    let broken = tmp.path().join("docker-broken");
    std::fs::create_dir_all(&good).unwrap();
    std::fs::create_dir_all(&broken).unwrap();
    use base64::Engine;
    let auth = base64::engine::general_purpose::STANDARD.encode("tester:s3cret-pw");
    std::fs::write(
        good.join("config.json"),
        json!({"auths": {reg.addr.clone(): {"auth": auth}}}).to_string(),
    )
    .unwrap();
    std::fs::write(broken.join("config.json"), "{ not json").unwrap();
    let target = format!("{}/team/slugify:2", reg.addr);

    // Without credentials the registry refuses, and the error says where they come from.
    let (ok, _, err) = cli(src.root(), &none, &["export", "slugify", "--oci", &target]);
    assert!(!ok);
    assert!(
        err.contains("refused or failed") && err.contains("docker login"),
        "{err}"
    );
    // A docker config that cannot be read is an error, not anonymous access.
    let (ok, _, err) = cli(
        src.root(),
        &broken,
        &["export", "slugify", "--oci", &target],
    );
    assert!(!ok);
    assert!(err.contains("config.json"), "{err}");
    // With them, publish and import through the CLI.
    let (ok, out, err) = cli(src.root(), &good, &["export", "slugify", "--oci", &target]);
    assert!(ok, "{err}");
    assert!(out.contains("published slugify (script)"), "{out}");
    let pinned = out
        .lines()
        .find_map(|l| l.strip_prefix("import exactly this with: toolsmith import "))
        .unwrap()
        .to_string();
    let (ok, out, err) = cli(dest.root(), &good, &["import", &pinned]);
    assert!(ok, "{err}");
    assert!(out.contains("imported slugify (script)"), "{out}");
    assert_clean(dest.root());
    let (ok, _, err) = cli(dest.root(), &good, &["import", "oci://slugify:2"]);
    assert!(!ok);
    assert!(
        err.contains("no registry host") && err.contains("hint:"),
        "{err}"
    );

    // Over MCP with the Python SDK: export_tool { oci }, import_tool { source: oci://…@digest }.
    let base = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = std::env::var("TOOLSMITH_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|_| base.join("target/test-venv/bin/python"));
    let out = Command::new(python)
        .arg(base.join("tests/py/oci_mcp.py"))
        .args([
            "--toolsmith",
            env!("CARGO_BIN_EXE_toolsmith"),
            "--registry",
            &reg.addr,
        ])
        .arg("--toolbox")
        .arg(src.root())
        .env("DOCKER_CONFIG", &good)
        .output()
        .expect("python runs (scripts/setup.sh makes target/test-venv)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "oci_mcp.py failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(s["export_error"], false, "{s}");
    assert_eq!(
        s["export"]["config"]["media_type"],
        "application/vnd.wasm.config.v0+json"
    );
    assert_eq!(s["import_error"], false, "{s}");
    assert_eq!(s["import"]["source_commit"], s["export"]["digest"], "{s}");
    assert_eq!(s["listed"], true, "{s}");
    // An import from a registry is held until a person on this machine trusts it: the client
    // sees why, and what the person runs.
    let call = s["call"].as_str().unwrap();
    assert!(call.contains("is held"), "{s}");
    assert!(call.contains("toolsmith trust wc_from_oci"), "{s}");
    assert_eq!(s["bad_ref_error"], true, "{s}");
    assert!(s["bad_ref"].as_str().unwrap().contains("hint"), "{s}");
    assert_clean(src.root());
}
