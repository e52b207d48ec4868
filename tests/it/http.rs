//! `toolsmith serve --http` hygiene on 127.0.0.1: a slow client is cut off by the header and
//! body read timeouts while others are served, malformed JSON and batches get 400 with a
//! JSON-RPC error (not 415), the session cap closes the least recently used session, and the
//! server card is served (with `server.json` carrying the crate version).

use crate::support;

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;
use support::{HttpServer, McpHttp, example_box};

/// Read until the server closes the connection (or 20 s pass); what it sent.
fn read_until_closed(s: &mut TcpStream) -> (bool, String) {
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return (true, String::from_utf8_lossy(&got).into_owned()),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return (false, String::from_utf8_lossy(&got).into_owned());
            }
            Err(_) => return (true, String::from_utf8_lossy(&got).into_owned()),
        }
    }
}

#[test]
fn slow_clients_are_cut_off_and_others_are_served() {
    let (_tmp, tb) = example_box();
    let server = HttpServer::start(&tb, &["--read-timeout", "1"], &[]);

    // Headers that never finish.
    let mut slow_headers = TcpStream::connect(&server.addr).unwrap();
    slow_headers
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .unwrap();
    // A body that never finishes.
    let mut slow_body = TcpStream::connect(&server.addr).unwrap();
    slow_body
        .write_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{\"jsonrpc\":",
        )
        .unwrap();

    // Meanwhile a normal client works.
    let mut c = McpHttp::new(&server.url, None);
    assert_eq!(c.initialize("ok-client").status, 200);
    let list = c.request("tools/list", json!({}));
    assert!(
        list["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{list}"
    );

    let (closed, sent) = read_until_closed(&mut slow_headers);
    assert!(
        closed,
        "a client that never finished its headers was not disconnected; got {sent:?}"
    );
    let (closed, sent) = read_until_closed(&mut slow_body);
    assert!(sent.starts_with("HTTP/1.1 408"), "slow body: {sent:?}");
    assert!(
        sent.contains("did not arrive within"),
        "slow body: {sent:?}"
    );
    assert!(closed || !sent.is_empty());

    // The server is still healthy.
    let again = c.request("tools/list", json!({}));
    assert_eq!(again["result"]["tools"], list["result"]["tools"]);
}

fn error_of(r: &support::Reply) -> Value {
    let v: Value =
        serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", r.body));
    v["error"].clone()
}

#[test]
fn malformed_json_and_batches_get_400_with_json_rpc_errors() {
    let (_tmp, tb) = example_box();
    let server = HttpServer::start(&tb, &[], &[]);
    let mut c = McpHttp::new(&server.url, None);
    assert_eq!(c.initialize("hygiene").status, 200);

    let r = c.post_raw(
        "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ",
        "application/json",
    );
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(error_of(&r)["code"], -32700, "{}", r.body);
    assert_eq!(
        r.headers.get("content-type").and_then(|v| v.to_str().ok()),
        Some("application/json")
    );

    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    ]);
    let r = c.post_raw(&batch.to_string(), "application/json");
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(error_of(&r)["code"], -32600, "{}", r.body);
    assert!(
        error_of(&r)["message"].as_str().unwrap().contains("batch"),
        "{}",
        r.body
    );

    let r = c.post_raw("{\"hello\": \"world\"}", "application/json");
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(error_of(&r)["code"], -32600, "{}", r.body);

    // The session survives bad requests.
    let pong = c.request("ping", json!({}));
    assert!(pong.get("result").is_some(), "{pong}");
}

#[test]
fn the_session_cap_closes_the_least_recently_used_session() {
    let (_tmp, tb) = example_box();
    let server = HttpServer::start(&tb, &["--max-sessions", "2"], &[]);
    let mut a = McpHttp::new(&server.url, None);
    let mut b = McpHttp::new(&server.url, None);
    assert_eq!(a.initialize("a").status, 200);
    assert_eq!(b.initialize("b").status, 200);
    // a is used after b: b is now the least recently used.
    assert!(a.request("ping", json!({})).get("result").is_some());
    let mut c = McpHttp::new(&server.url, None);
    assert_eq!(c.initialize("c").status, 200);

    let gone = b.request_reply("ping", json!({}));
    assert_eq!(
        gone.status, 404,
        "the least recently used session should be closed: {}",
        gone.body
    );
    assert!(a.request("ping", json!({})).get("result").is_some());
    assert!(c.request("ping", json!({})).get("result").is_some());
    // A closed session's client can start over.
    b.session = None;
    assert_eq!(b.initialize("b-again").status, 200);
    assert!(b.request("ping", json!({})).get("result").is_some());
}

#[test]
fn the_server_card_is_served_and_server_json_carries_this_version() {
    let (_tmp, tb) = example_box();
    let server = HttpServer::start(&tb, &[], &[]);
    let card: Value = support::agent()
        .get(&format!(
            "http://{}/.well-known/mcp/server-card.json",
            server.addr
        ))
        .call()
        .unwrap()
        .into_body()
        .read_json()
        .unwrap();
    assert_eq!(card["name"], "toolsmith");
    assert_eq!(card["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(card["transports"][0]["type"], "streamable-http");
    assert_eq!(card["transports"][0]["url"], server.url);
    assert!(card["capabilities"]["tools"].is_object(), "{card}");
    assert_eq!(card["auth"]["required"], false);

    // With a token the card still answers without one, and says a bearer token is needed.
    let token = tb.parent().unwrap().join("token");
    std::fs::write(&token, "t0ken").unwrap();
    let guarded = HttpServer::start(
        &tb,
        &[
            "--token-file",
            token.to_str().unwrap(),
            "--public-url",
            "https://tools.example.com/mcp",
        ],
        &[],
    );
    let card: Value = support::agent()
        .get(&format!(
            "http://{}/.well-known/mcp/server-card.json",
            guarded.addr
        ))
        .call()
        .unwrap()
        .into_body()
        .read_json()
        .unwrap();
    assert_eq!(
        card["auth"],
        json!({"required": true, "schemes": ["bearer"]})
    );

    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/server.json")).unwrap();
    let sj: Value = serde_json::from_str(&text).expect("server.json parses");
    assert!(
        sj["$schema"].as_str().unwrap().contains("2025-12-11"),
        "{sj}"
    );
    assert_eq!(sj["version"], env!("CARGO_PKG_VERSION"));
    assert!(sj["description"].as_str().unwrap().len() <= 100);
    let pkg = &sj["packages"][0];
    assert_eq!(pkg["registryType"], "cargo");
    assert_eq!(pkg["identifier"], env!("CARGO_PKG_NAME"));
    assert_eq!(pkg["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(pkg["transport"]["type"], "stdio");
}
