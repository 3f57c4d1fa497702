//! SPEC §9: `GET /tool-media/<name>` — authentication, headers, 304, HEAD, and the same 404 for every
//! hostile name, planted link and switched-off feature.

use fixtures::images::{PictureFormat, picture};
use serde_json::json;

use super::case;
use super::common::{answer, call, fetch, first_result, one_picture, opt_in, sha256, stream};
use crate::case::{Case, CheckResult, broken, expect, expect_eq};
use crate::context::Ctx;
use crate::scenario::{Scenario, Setup, own};

const KEYED_PICTURE: Scenario =
    own("picture-keyed", || Setup::mcp(Some(true)).with_key().scripts(vec![call("picture", &[]), answer("ok")]));
const PICTURE: Scenario =
    own("picture-route", || Setup::mcp(Some(true)).scripts(vec![call("picture", &[]), answer("ok")]));
const PICTURE_FALSE: Scenario =
    own("picture-route-off", || Setup::mcp(Some(false)).scripts(vec![call("picture", &[]), answer("ok")]));

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "tool-media.get.rejects-missing-token",
            "9.1",
            Must,
            KEYED_PICTURE,
            "a cached picture without the key is 401",
            rejects_missing_token,
            ["media-public", "auth-off"]
        ),
        case!(
            "tool-media.get.headers",
            "9.4",
            Must,
            PICTURE,
            "Content-Type, Content-Length, ETag, Cache-Control and nosniff",
            headers,
            ["media-headers", "media-length-missing"]
        ),
        case!(
            "tool-media.get.not-modified",
            "9.5",
            Must,
            PICTURE,
            "If-None-Match with the ETag (strong or weak, alone or in a list) or * is 304 without a body; another ETag is 200",
            not_modified,
            ["no-304", "refetch-sniffable"]
        ),
        case!("tool-media.head", "9.6", Must, PICTURE, "HEAD gives the headers of GET and no body", head, ["no-head"]),
        case!(
            "tool-media.head-matches-get-everywhere",
            "9.6",
            Must,
            PICTURE,
            "HEAD answers as GET does, without a body, for a picture, its ETag and *, a malformed name, a name not cached, a link, a folder and a FIFO in the cache",
            head_matches_get,
            ["head-skips-checks", "no-head"]
        ),
        case!(
            "tool-media.conditional-for-a-missing-file-is-404",
            "9.7",
            Must,
            PICTURE,
            "If-None-Match (the ETag or *) for a picture whose file is gone is 404, never 304",
            conditional_missing,
            ["missing-304"]
        ),
        case!(
            "tool-media.get.hostile-names-are-404",
            "9.2",
            Must,
            PICTURE,
            "traversal, encodings, case, extensions and long names are the same JSON 404",
            hostile_names,
            ["loose-names", "media-names-decoded"]
        ),
        case!(
            "tool-media.get.never-follows-links",
            "9.3",
            Must,
            PICTURE,
            "a symlink planted in the cache folder is 404",
            never_follows_links,
            ["follow-links"]
        ),
        case!(
            "tool-media.get.feature-off-is-404",
            "9.7",
            Must,
            PICTURE_FALSE,
            "with image_results false no picture is served",
            feature_off,
            ["feature-off-leaks"]
        ),
    ]
}

fn not_found_body() -> serde_json::Value {
    serde_json::json!({"error": {"type": "not_found", "message": "not found"}})
}

async fn rejects_missing_token(ctx: Ctx) -> CheckResult {
    let media = one_picture(&ctx).await?;
    let url = media.url.as_str();
    let anonymous = ctx.http.get(url).without_key().send().await?;
    expect_eq("status without the key", 401, anonymous.status)?;
    expect_eq("status with the key", 200, fetch(&ctx.http, url).await?.status)
}

async fn headers(ctx: Ctx) -> CheckResult {
    let media = one_picture(&ctx).await?;
    let reply = fetch(&ctx.http, media.url.as_str()).await?;
    let hash = sha256(&reply.body);
    expect_eq("Content-Type", Some("image/png".to_string()), reply.header("content-type"))?;
    expect_eq("Content-Length", Some(reply.body.len().to_string()), reply.header("content-length"))?;
    expect_eq("ETag", Some(format!("\"{hash}\"")), reply.header("etag"))?;
    expect_eq(
        "Cache-Control",
        Some("private, max-age=31536000, immutable".to_string()),
        reply.header("cache-control"),
    )?;
    expect_eq("X-Content-Type-Options", Some("nosniff".to_string()), reply.header("x-content-type-options"))
}

async fn not_modified(ctx: Ctx) -> CheckResult {
    let media = one_picture(&ctx).await?;
    let url = media.url.as_str();
    let etag = fetch(&ctx.http, url).await?.header("etag").unwrap_or_default();
    let reply = ctx.http.get(url).header("if-none-match", etag.as_bytes()).send().await?;
    expect_eq("status", 304, reply.status)?;
    expect_eq("body length", 0, reply.body.len())?;
    let other = "\"0000000000000000000000000000000000000000000000000000000000000000\"";
    let table = [
        ("*".to_string(), 304),
        (format!("W/{etag}"), 304),
        (format!("{other}, {etag}"), 304),
        (other.to_string(), 200),
        (format!("W/{other}"), 200),
    ];
    for (tag, status) in table {
        let reply = ctx.http.get(url).header("if-none-match", tag.as_bytes()).send().await?;
        expect_eq(&format!("status with If-None-Match: {tag}"), status, reply.status)?;
    }
    Ok(())
}

async fn conditional_missing(ctx: Ctx) -> CheckResult {
    let media = one_picture(&ctx).await?;
    let url = media.url.clone();
    let name = url.rsplit('/').next().unwrap_or_default().to_string();
    let etag = format!("\"{}\"", name.get(..64).unwrap_or_default());
    let file = ctx.cache_dir()?.join(&name);
    std::fs::remove_file(&file).map_err(|e| broken(format!("{}: {e}", file.display())))?;
    let not_found = json!({"error": {"type": "not_found", "message": "not found"}});
    for method in [http::Method::GET, http::Method::HEAD] {
        for tag in [etag.as_str(), "*", "W/\"other\", *"] {
            let reply = ctx.http.call(method.clone(), &url).header("if-none-match", tag.as_bytes()).send().await?;
            expect_eq(&format!("{method} with If-None-Match {tag}: status"), 404, reply.status)?;
            if method == http::Method::GET {
                expect_eq(&format!("GET with If-None-Match {tag}: body"), not_found.clone(), reply.json()?)?;
            }
        }
    }
    Ok(())
}

async fn head(ctx: Ctx) -> CheckResult {
    let media = one_picture(&ctx).await?;
    let url = media.url.as_str();
    let get = fetch(&ctx.http, url).await?;
    let head = ctx.http.call(http::Method::HEAD, url).send().await?;
    expect_eq("status", 200, head.status)?;
    for name in ["content-type", "content-length", "etag", "cache-control"] {
        expect_eq(name, get.header(name), head.header(name))?;
    }
    expect_eq("body length", 0, head.body.len())
}

async fn head_matches_get(ctx: Ctx) -> CheckResult {
    let media = one_picture(&ctx).await?;
    let url = media.url.clone();
    let hash = media.name().get(..64).unwrap_or_default().to_string();
    let dir = ctx.cache_dir()?;
    let planted = |digit: char| format!("{}.png", std::iter::repeat_n(digit, 64).collect::<String>());
    let outside = dir.parent().ok_or_else(|| broken("no parent folder"))?.join("canary-head.txt");
    std::fs::write(&outside, "canary").map_err(|e| broken(e.to_string()))?;
    std::os::unix::fs::symlink(&outside, dir.join(planted('1'))).map_err(|e| broken(e.to_string()))?;
    std::fs::create_dir(dir.join(planted('2'))).map_err(|e| broken(e.to_string()))?;
    let fifo = std::process::Command::new("mkfifo").arg(dir.join(planted('3'))).status();
    expect(fifo.as_ref().is_ok_and(|s| s.success()), "a FIFO planted in the cache (mkfifo)", format!("{fifo:?}"))?;
    let etag = format!("\"{hash}\"");
    let situations: Vec<(String, String, Option<String>)> = vec![
        ("the picture".into(), url.clone(), None),
        ("If-None-Match with its ETag".into(), url.clone(), Some(etag)),
        ("If-None-Match *".into(), url.clone(), Some("*".into())),
        ("a malformed name".into(), format!("/tool-media/{}.PNG", hash.to_uppercase()), None),
        ("a name not cached".into(), format!("/tool-media/{}", planted('4')), None),
        ("a symbolic link".into(), format!("/tool-media/{}", planted('1')), None),
        ("a folder".into(), format!("/tool-media/{}", planted('2')), None),
        ("a FIFO".into(), format!("/tool-media/{}", planted('3')), None),
    ];
    for (what, target, if_none_match) in situations {
        let ask = |method: http::Method| {
            let call = ctx.http.call(method, &target);
            match &if_none_match {
                Some(tag) => call.header("if-none-match", tag.as_bytes()),
                None => call,
            }
        };
        let get = ask(http::Method::GET).send().await?;
        let head = ask(http::Method::HEAD).send().await?;
        expect_eq(&format!("{what}: HEAD's status (GET's)"), get.status, head.status)?;
        for name in ["content-type", "etag", "cache-control", "x-content-type-options"] {
            expect_eq(&format!("{what}: HEAD's {name} (GET's)"), get.header(name), head.header(name))?;
        }
        if get.status == 200 {
            expect_eq(
                &format!("{what}: HEAD's Content-Length (GET's)"),
                get.header("content-length"),
                head.header("content-length"),
            )?;
        }
        expect_eq(&format!("{what}: HEAD's body length"), 0, head.body.len())?;
    }
    Ok(())
}

async fn hostile_names(ctx: Ctx) -> CheckResult {
    let media = one_picture(&ctx).await?;
    let name = media.name().to_string();
    let hash = name.get(..64).unwrap_or_default().to_string();
    // A canary beside the configuration, one folder above the cache, when the harness wrote it.
    if let Ok(dir) = ctx.cache_dir()
        && let Some(parent) = dir.parent()
    {
        let _ = std::fs::write(parent.join("canary.txt"), "canary");
    }
    let hostile = [
        format!("{}.png", hash.to_uppercase()),
        format!("{hash}.PNG"),
        format!("{hash}.jpeg"),
        format!("{hash}.svg"),
        hash.clone(),
        format!("{hash}%2epng"),
        format!("..%2f{name}"),
        "..%2fcanary.txt".to_string(),
        "%2e%2e%2fcanary.txt".to_string(),
        "..%5ccanary.txt".to_string(),
        "%252e%252e%252fcanary.txt".to_string(),
        format!("{name}%00"),
        format!("./{name}"),
        format!("{hash}\u{FF0E}png").replace('\u{FF0E}', "%EF%BC%8E"),
        "a".repeat(4096),
    ];
    for path in hostile {
        let reply = ctx.http.get(&format!("/tool-media/{path}")).send().await?;
        expect_eq(&format!("status for {path}"), 404, reply.status)?;
        expect_eq(&format!("body for {path}"), not_found_body(), reply.json()?)?;
    }
    Ok(())
}

async fn never_follows_links(ctx: Ctx) -> CheckResult {
    one_picture(&ctx).await?;
    let dir = ctx.cache_dir()?;
    let canary = dir.parent().ok_or_else(|| broken("no parent folder"))?.join("canary-link.txt");
    std::fs::write(&canary, "canary").map_err(|e| broken(e.to_string()))?;
    let linked = format!("{}.png", sha256(b"planted link"));
    std::os::unix::fs::symlink(&canary, dir.join(&linked)).map_err(|e| broken(e.to_string()))?;
    let reply = ctx.http.get(&format!("/tool-media/{linked}")).send().await?;
    expect_eq("status for a planted link", 404, reply.status)?;
    expect(!reply.text().contains("canary"), "the canary is never served", reply.text())
}

async fn feature_off(ctx: Ctx) -> CheckResult {
    let result = first_result(&stream(&ctx.http, opt_in()).await?)?;
    expect(result.media.is_empty(), "no media entry with the feature off", result.raw.to_string())?;
    let name = format!("{}.png", sha256(&picture(PictureFormat::Png, 64, 48, 1)));
    let reply = ctx.http.get(&format!("/tool-media/{name}")).send().await?;
    expect_eq("status", 404, reply.status)
}
