//! SPEC §2: authentication, Host and Origin.

use serde_json::{Value, json};

use super::case;
use super::common::{CHAT, opt_in, user};
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::scenario::{BASIC, KEYED, Setup, own};

const OWN_PAGE: crate::scenario::Scenario = own("mcp-plain", || Setup::mcp(None));

/// No key; a host name and an origin the configuration lets in.
const CONFIGURED: crate::scenario::Scenario = own("configured-hosts", || {
    let mut setup = Setup::plain();
    setup.config["allowed_hosts"] = json!(["myapp.test"]);
    setup.config["trusted_origins"] = json!(["https://trusted.example"]);
    setup
});

/// The key a Latin-1 keyboard types: `clé-sécrète-mediacheck`.
const LATIN1_KEY: &str = "cl\u{e9}-s\u{e9}cr\u{e8}te-mediacheck";

/// A key with letters outside ASCII (inside Latin-1).
const NON_ASCII_KEY: crate::scenario::Scenario = own("latin1-key", || {
    let mut setup = Setup::plain();
    setup.config["api_key"] = json!(LATIN1_KEY);
    setup.api_key = Some(LATIN1_KEY.into());
    setup
});

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "auth.non-ascii-key-in-utf8-and-latin1",
            "2.2",
            Must,
            NON_ASCII_KEY,
            "a key with é and è matches sent as UTF-8 or as Latin-1, in either header; the same key with one letter changed, without accents, or half in each encoding is 401",
            non_ascii_key,
            ["latin1-keys-refused", "utf8-x-api-key-as-latin1", "utf8-bearer-as-latin1"]
        ),
        case!(
            "auth.allowed-hosts-are-served",
            "2.5",
            Must,
            CONFIGURED,
            "without a key, a Host named in allowed_hosts (any case, any port) is served and one that only resembles it is 403",
            allowed_hosts,
            ["config-hosts-ignored"]
        ),
        case!(
            "auth.mcp-from-own-page-or-trusted-origin",
            "2.7",
            Must,
            CONFIGURED,
            "an MCP request from the server's own page or a trusted_origins entry is answered, its Content-Type application/json with a charset parameter or in any case too; from a loopback name or an allowed host that is not the page's own, 403",
            mcp_from_trusted,
            ["config-hosts-ignored", "own-page-off", "own-page-json-exact"]
        ),
        case!(
            "auth.trusted-origins-and-allowed-hosts-may-post",
            "2.6",
            Must,
            CONFIGURED,
            "without a key, a POST from a trusted_origins entry (with or without a trailing /) or from an allowed host is answered; the same origin with another scheme or a longer name is 403",
            trusted_origins,
            ["config-hosts-ignored"]
        ),
        case!(
            "auth.rejects-missing-key",
            "2.4",
            Must,
            KEYED,
            "a protected route without the key is 401 with the exact body",
            rejects_missing_key,
            ["auth-off", "auth-body"]
        ),
        case!("auth.rejects-wrong-key", "2.4", Must, KEYED, "a wrong key is 401", rejects_wrong_key, ["auth-off"]),
        case!(
            "auth.near-miss-keys-are-401",
            "2.1",
            Must,
            KEYED,
            "every near miss of the key is 401 with the exact body: prefixes, suffixes, the key and more, one character changed, case, a tab, empty, no or another scheme, in both headers",
            wrong_key_table,
            ["key-prefix-match", "auth-off"]
        ),
        case!(
            "auth.accepts-both-header-forms",
            "2.2",
            Must,
            KEYED,
            "Authorization: bearer <key> (any case) and x-api-key: <key> are accepted",
            accepts_both_forms,
            ["bearer-only", "empty-bearer-is-a-key"]
        ),
        case!(
            "auth.health-is-public",
            "2.3",
            Must,
            KEYED,
            "GET and HEAD of /health, /api/health, / and /web/<asset> need no key; other methods on them do",
            health_is_public,
            // The second breaks 3.1 on the alias only: the wire monitor reads every health answer.
            ["health-needs-key", "api-health-stub"]
        ),
        case!(
            "auth.options-need-no-key",
            "2.3",
            Must,
            KEYED,
            "OPTIONS without the key, plain and as a CORS preflight, is never 401 on any route (keyed or not)",
            options_need_no_key,
            ["options-need-key"]
        ),
        case!(
            "auth.protects-every-route",
            "2.3",
            Must,
            KEYED,
            "/v1/models, /v1/status, /mcp, /tool-media/… and every POST need the key",
            protects_every_route,
            ["auth-off", "status-refusal-as-text"]
        ),
        case!(
            "auth.host-check-without-key",
            "2.5",
            Must,
            BASIC,
            "without a key, a foreign Host is 403; a request without a Host is served over HTTP/1.0, and over HTTP/1.1 served or 400 (HTTP/1.1 requires one), never 403",
            host_check,
            ["host-check-off", "hostless-refused"]
        ),
        case!(
            "auth.foreign-hosts-are-403",
            "2.5",
            Must,
            BASIC,
            "without a key, a Host that is foreign or only looks local (suffix, prefix, a loopback name inside another) is 403; loopback names and addresses in any case are served",
            host_table,
            ["host-suffix-match", "host-check-off", "host-port-split-first-colon"]
        ),
        case!(
            "auth.foreign-origins-are-403",
            "2.6",
            Must,
            BASIC,
            "without a key, a /v1/* POST from a foreign or look-alike http(s) Origin, or Origin: null, is 403; the own Host, loopback names, an extension's page, and a GET are not refused",
            origin_table,
            ["origin-substring-match", "origin-null-trusted", "other-schemes-refused"]
        ),
        case!(
            "auth.mcp-only-from-own-page",
            "2.7",
            Must,
            OWN_PAGE,
            "an MCP request that is not JSON is 415; from a foreign Origin 403",
            own_page_only,
            ["own-page-off"]
        ),
    ]
}

fn exact_401() -> Value {
    json!({"error": {"type": "authentication_error", "message": "missing or wrong API key"}})
}

async fn rejects_missing_key(ctx: Ctx) -> CheckResult {
    for path in ["/v1/models", "/v1/status", "/mcp"] {
        let reply = ctx.http.get(path).without_key().send().await?;
        expect_eq(&format!("GET {path} status"), 401, reply.status)?;
        expect_eq(&format!("GET {path} body"), exact_401(), reply.json()?)?;
    }
    Ok(())
}

async fn rejects_wrong_key(ctx: Ctx) -> CheckResult {
    let reply = ctx.http.get("/v1/models").without_key().header("authorization", b"Bearer not-the-key").send().await?;
    expect_eq("status", 401, reply.status)?;
    expect_eq("body", exact_401(), reply.json()?)
}

async fn accepts_both_forms(ctx: Ctx) -> CheckResult {
    let key = ctx.http.key().unwrap_or_default().to_string();
    let bearer = ctx
        .http
        .get("/v1/models")
        .without_key()
        .header("authorization", format!("bearer {key}").as_bytes())
        .send()
        .await?;
    expect_eq("status with lower-case bearer", 200, bearer.status)?;
    let x_api_key = ctx.http.get("/v1/models").without_key().header("x-api-key", key.as_bytes()).send().await?;
    expect_eq("status with x-api-key", 200, x_api_key.status)?;
    // An Authorization with no key after "Bearer" counts as absent: the x-api-key beside it is read.
    let empty_bearer = ctx
        .http
        .get("/v1/models")
        .without_key()
        .header("authorization", b"Bearer")
        .header("x-api-key", key.as_bytes())
        .send()
        .await?;
    expect_eq("status with Authorization: Bearer (no key) and x-api-key", 200, empty_bearer.status)
}

async fn non_ascii_key(ctx: Ctx) -> CheckResult {
    let latin1 = |text: &str| -> Vec<u8> { text.chars().map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?')).collect() };
    let utf8 = LATIN1_KEY.as_bytes().to_vec();
    // "clé-sécrète" with the first é in UTF-8 and the rest in Latin-1: neither encoding.
    let mixed = [&b"cl\xc3\xa9-"[..], &latin1("s\u{e9}cr\u{e8}te-mediacheck")].concat();
    let rows: [(&str, Vec<u8>, u16); 6] = [
        ("UTF-8", utf8, 200),
        ("Latin-1", latin1(LATIN1_KEY), 200),
        ("Latin-1 with è for é", latin1("cl\u{e8}-s\u{e9}cr\u{e8}te-mediacheck"), 401),
        ("without accents", b"cle-secrete-mediacheck".to_vec(), 401),
        ("half UTF-8, half Latin-1", mixed, 401),
        // The UTF-8 bytes read as Latin-1 and encoded as UTF-8 again (mojibake: "clÃ©-…").
        ("encoded twice", LATIN1_KEY.bytes().flat_map(|b| char::from(b).to_string().into_bytes()).collect(), 401),
    ];
    for (what, key, status) in rows {
        let bearer = [&b"Bearer "[..], &key].concat();
        for (header, value) in [("x-api-key", key.clone()), ("authorization", bearer)] {
            let reply = ctx.http.get("/v1/models").without_key().header(header, &value).send().await?;
            expect_eq(&format!("status with the key {what} in {header}"), status, reply.status)?;
        }
    }
    Ok(())
}

async fn health_is_public(ctx: Ctx) -> CheckResult {
    for path in ["/health", "/api/health", "/", "/web/app.js"] {
        for method in [http::Method::GET, http::Method::HEAD] {
            let reply = ctx.http.call(method.clone(), path).without_key().send().await?;
            expect_eq(&format!("{method} {path} without the key"), 200, reply.status)?;
        }
    }
    for (method, path) in
        [(http::Method::POST, "/health"), (http::Method::PUT, "/"), (http::Method::DELETE, "/web/app.js")]
    {
        let reply = ctx.http.call(method.clone(), path).without_key().send().await?;
        expect_eq(&format!("{method} {path} without the key"), 401, reply.status)?;
    }
    Ok(())
}

async fn options_need_no_key(ctx: Ctx) -> CheckResult {
    let media = format!("/tool-media/{}.png", "0".repeat(64));
    let paths =
        [CHAT, "/v1/models", "/v1/status", "/mcp", media.as_str(), "/health", "/api/health", "/", "/web/app.js"];
    let origin = format!("http://{}", ctx.http.base().trim_start_matches("http://"));
    for path in paths {
        for preflight in [false, true] {
            let mut call = ctx.http.call(http::Method::OPTIONS, path).without_key();
            if preflight {
                call = call
                    .header("origin", origin.as_bytes())
                    .header("access-control-request-method", b"POST")
                    .header("access-control-request-headers", b"authorization, content-type");
            }
            let reply = call.send().await?;
            let what = if preflight { "a CORS preflight" } else { "OPTIONS" };
            expect(
                reply.status != 401,
                format!("{what} {path} without the key answered (any status but 401)"),
                reply.status.to_string(),
            )?;
        }
    }
    Ok(())
}

async fn protects_every_route(ctx: Ctx) -> CheckResult {
    let name = format!("{}.png", "0".repeat(64));
    for path in ["/v1/models", "/v1/status", "/mcp", &format!("/tool-media/{name}")] {
        let reply = ctx.http.get(path).without_key().send().await?;
        expect_eq(&format!("GET {path}"), 401, reply.status)?;
    }
    let reply = ctx.http.post_json(CHAT, &user("hi")).without_key().send().await?;
    expect_eq("POST /v1/chat/completions", 401, reply.status)
}

async fn host_check(ctx: Ctx) -> CheckResult {
    let reply = ctx.http.get("/v1/models").header("host", b"evil.example").send().await?;
    expect_eq("status with Host: evil.example", 403, reply.status)?;
    expect_eq("error type", &json!("forbidden"), &reply.json()?["error"]["type"])?;
    // 2.5c: a missing Host is allowed: an HTTP/1.0 request has none. HTTP/1.1 requires one (RFC 9112
    // 3.2), so there a 400 from the HTTP layer is as right as serving it; never the Host check's 403.
    let status = hostless_status(&ctx, "HTTP/1.0").await?;
    expect_eq("status of GET /v1/models over HTTP/1.0 without a Host", 200, status)?;
    let status = hostless_status(&ctx, "HTTP/1.1").await?;
    expect(
        status == 200 || status == 400,
        "GET /v1/models over HTTP/1.1 without a Host: served, or 400 (HTTP/1.1's own rule), not 403",
        status.to_string(),
    )?;
    Ok(())
}

/// The status of `GET /v1/models` written on a connection of its own without a Host header.
async fn hostless_status(ctx: &Ctx, version: &str) -> Result<u16, crate::check::CheckError> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let broken = |what: String| crate::check::broken(format!("a request without a Host: {what}"));
    let address = ctx.http.base().trim_start_matches("http://").to_string();
    let mut stream = tokio::net::TcpStream::connect(&address).await.map_err(|e| broken(format!("connect: {e}")))?;
    let request = format!("GET /v1/models {version}\r\nconnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.map_err(|e| broken(format!("write: {e}")))?;
    let mut answer = Vec::new();
    let mut limited = (&mut stream).take(1 << 20);
    let read = tokio::time::timeout(std::time::Duration::from_secs(10), limited.read_to_end(&mut answer));
    read.await.map_err(|_| broken("no answer within 10 s".into()))?.map_err(|e| broken(format!("read: {e}")))?;
    let line = String::from_utf8_lossy(&answer).lines().next().unwrap_or_default().to_string();
    line.split(' ').nth(1).and_then(|code| code.parse().ok()).ok_or_else(|| broken(format!("status line {line:?}")))
}

async fn own_page_only(ctx: Ctx) -> CheckResult {
    let plain = ctx
        .http
        .call(http::Method::POST, CHAT)
        .header("content-type", b"text/plain")
        .body(opt_in().to_string())
        .send()
        .await?;
    expect_eq("status for text/plain", 415, plain.status)?;
    let foreign = ctx.http.post_json(CHAT, &opt_in()).header("origin", b"http://localhost:9").send().await?;
    expect_eq("status from a foreign Origin", 403, foreign.status)?;
    let body = foreign.json()?;
    expect(body["error"]["message"].is_string(), "the JSON error shape", body.to_string())
}

async fn wrong_key_table(ctx: Ctx) -> CheckResult {
    let key = ctx.http.key().unwrap_or_default().to_string();
    let mut changed = key.clone().into_bytes();
    if let Some(last) = changed.last_mut() {
        *last = if *last == b'x' { b'y' } else { b'x' };
    }
    let changed = String::from_utf8_lossy(&changed).into_owned();
    let (half, rest) = key.split_at(key.len() / 2);
    let near_misses: Vec<(&str, String, String)> = vec![
        ("a prefix", "authorization".into(), format!("Bearer {}", &key[..key.len() - 1])),
        ("the first character", "authorization".into(), format!("Bearer {}", &key[..1])),
        ("a suffix", "authorization".into(), format!("Bearer {}", &key[1..])),
        ("the key and more", "authorization".into(), format!("Bearer {key}x")),
        ("the key twice", "authorization".into(), format!("Bearer {key}{key}")),
        ("one character changed", "authorization".into(), format!("Bearer {changed}")),
        ("upper case", "authorization".into(), format!("Bearer {}", key.to_uppercase())),
        ("a tab inside", "authorization".into(), format!("Bearer {half}\t{rest}")),
        ("empty", "authorization".into(), "Bearer ".into()),
        ("no scheme", "authorization".into(), key.clone()),
        ("another scheme", "authorization".into(), format!("Basic {key}")),
        ("x-api-key, a prefix", "x-api-key".into(), key[..key.len() - 1].to_string()),
        ("x-api-key, the key and more", "x-api-key".into(), format!("{key}x")),
        ("x-api-key, empty", "x-api-key".into(), String::new()),
    ];
    for (what, name, value) in near_misses {
        let reply = ctx.http.get("/v1/models").without_key().header(&name, value.as_bytes()).send().await?;
        expect_eq(&format!("status for {what} ({name}: {value:?})"), 401, reply.status)?;
        expect_eq(&format!("body for {what}"), exact_401(), reply.json()?)?;
    }
    Ok(())
}

async fn origin_table(ctx: Ctx) -> CheckResult {
    let own = ctx.http.base().trim_start_matches("http://").to_string();
    let foreign = [
        "http://evil.example",
        "https://evil.example",
        "http://localhost.evil.example",
        "http://127.0.0.1.evil.example",
        "http://evil-localhost",
        "http://127.0.0.1evil.example",
        "https://evil.example:443",
        "null",
    ];
    for origin in foreign {
        let reply = ctx.http.post_json(CHAT, &user("hi")).header("origin", origin.as_bytes()).send().await?;
        expect_eq(&format!("status from Origin {origin}"), 403, reply.status)?;
        expect_eq(&format!("error type from Origin {origin}"), &json!("forbidden"), &reply.json()?["error"]["type"])?;
    }
    // 2.6 is about POSTs: a GET from a foreign page is not refused for its Origin.
    let get = ctx.http.get("/v1/models").header("origin", b"http://evil.example").send().await?;
    expect_eq("status of a GET /v1/models from Origin http://evil.example", 200, get.status)?;
    let own_origin = format!("http://{own}");
    let allowed = [
        own_origin.as_str(),
        "http://localhost:9",
        "http://127.0.0.1:1",
        "http://[::1]:2",
        "chrome-extension://abcdefghijklmnop",
        "file://",
    ];
    for origin in allowed {
        let reply = ctx.http.post_json(CHAT, &user("hi")).header("origin", origin.as_bytes()).send().await?;
        expect_eq(&format!("status from Origin {origin}"), 200, reply.status)?;
    }
    Ok(())
}

async fn host_table(ctx: Ctx) -> CheckResult {
    let port = ctx.http.base().rsplit(':').next().unwrap_or_default().to_string();
    let foreign: Vec<Vec<u8>> = [
        "evil.example".to_string(),
        format!("evil.example:{port}"),
        // A port that is not a number is not a port: the whole value is the name.
        "localhost:evil".to_string(),
        format!("localhost:{port}x"),
        // A trailing dot, an IDN look-alike (Cyrillic о) and its punycode are other names.
        format!("localhost.:{port}"),
        format!("l\u{43e}calhost:{port}"),
        format!("xn--lcalhost-9fg:{port}"),
        format!("localhost.evil.example:{port}"),
        format!("127.0.0.1.evil.example:{port}"),
        format!("evil-localhost:{port}"),
        format!("notlocalhost:{port}"),
        format!("127.0.0.1evil.example:{port}"),
    ]
    .into_iter()
    .map(String::into_bytes)
    // localhost with a Latin-1 é after it, as raw bytes (not UTF-8).
    .chain([[&b"localhost\xe9:"[..], port.as_bytes()].concat()])
    .collect();
    for host in &foreign {
        let reply = ctx.http.get("/v1/models").header("host", host).send().await?;
        expect_eq(&format!("status with Host: {}", String::from_utf8_lossy(host)), 403, reply.status)?;
    }
    let local = [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("LOCALHOST:{port}"),
        format!("[::1]:{port}"),
        "localhost".to_string(),
        format!("app.localhost:{port}"),
        // 2.5: an IP address is never a rebinding target, whichever it is.
        format!("192.168.1.20:{port}"),
        format!("[2001:db8::1]:{port}"),
    ];
    for host in &local {
        let reply = ctx.http.get("/v1/models").header("host", host.as_bytes()).send().await?;
        expect_eq(&format!("status with Host: {host}"), 200, reply.status)?;
    }
    Ok(())
}

async fn allowed_hosts(ctx: Ctx) -> CheckResult {
    let port = ctx.http.base().rsplit(':').next().unwrap_or_default().to_string();
    for (host, status) in [
        (format!("myapp.test:{port}"), 200),
        ("MYAPP.TEST".to_string(), 200),
        (format!("myapp.test.evil.example:{port}"), 403),
        (format!("evil-myapp.test:{port}"), 403),
        (format!("app.myapp.test:{port}"), 403),
    ] {
        let reply = ctx.http.get("/v1/models").header("host", host.as_bytes()).send().await?;
        expect_eq(&format!("status with Host: {host}"), status, reply.status)?;
    }
    Ok(())
}

async fn trusted_origins(ctx: Ctx) -> CheckResult {
    for (origin, status) in [
        ("https://trusted.example", 200),
        ("https://trusted.example/", 200),
        ("http://myapp.test:5", 200),
        ("http://trusted.example", 403),
        ("https://trusted.example.evil", 403),
        ("https://trusted.example:8443", 403),
    ] {
        let reply = ctx.http.post_json(CHAT, &user("hi")).header("origin", origin.as_bytes()).send().await?;
        expect_eq(&format!("status from Origin {origin}"), status, reply.status)?;
    }
    Ok(())
}

async fn mcp_from_trusted(ctx: Ctx) -> CheckResult {
    let own = format!("http://{}", ctx.http.base().trim_start_matches("http://"));
    for (origin, status) in [
        (own.as_str(), 200),
        ("https://trusted.example", 200),
        ("https://trusted.example/", 200),
        ("http://localhost:9", 403),
        ("http://myapp.test:5", 403),
        ("https://trusted.example.evil", 403),
    ] {
        let reply = ctx.http.post_json(CHAT, &opt_in()).header("origin", origin.as_bytes()).send().await?;
        expect_eq(&format!("status of an MCP request from Origin {origin}"), status, reply.status)?;
    }
    // The media type decides (2.7a): a parameter or another case is still application/json.
    for content_type in ["application/json; charset=utf-8", "Application/JSON", "application/json;charset=UTF-8"] {
        let reply = ctx
            .http
            .call(http::Method::POST, CHAT)
            .header("content-type", content_type.as_bytes())
            .header("origin", own.as_bytes())
            .body(opt_in().to_string())
            .send()
            .await?;
        expect_eq(&format!("status of an MCP request from the own page sent as {content_type}"), 200, reply.status)?;
    }
    Ok(())
}
