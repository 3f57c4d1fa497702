//! SPEC §7.4, §8 and §9: tool pictures cached by SHA-256, announced in the `media` array, served by
//! the authenticated route — and, with the feature off, nothing changes by a single byte.

mod support;

use std::os::unix::fs::PermissionsExt;

use base64::Engine;
use fixtures::images::{PictureFormat, media_name, picture, sha256_hex};
use fixtures::scripts::{answer_script, call_script};
use serde_json::{Value, json};
use support::{chat_stream, client, opt_in, results, start_in, with_fixture};

fn picture_script(args: &[(&str, &str)]) -> Vec<String> {
    vec![call_script("fake__picture", args), answer_script("Here it is.")]
}

fn config(image_results: Option<bool>, scripts: Vec<String>) -> Value {
    let mut config = json!({"engine": {"scripts": scripts}});
    if let Some(on) = image_results {
        config["mcp"] = json!({"image_results": on});
    }
    config
}

/// The result event with its varying fields (`id`, `ms`) blanked, as JSON text.
fn stable(event: &Value) -> String {
    let mut event = event.clone();
    event["id"] = json!("-");
    event["ms"] = json!(0);
    event.to_string()
}

#[tokio::test]
async fn spec_7_4_with_the_feature_off_events_are_byte_for_byte_the_baseline() {
    let args = [("format", "png"), ("count", "2")];
    let mut seen = Vec::new();
    for setting in [None, Some(false), Some(true)] {
        let setup = with_fixture(config(setting, picture_script(&args))).await;
        let sse = chat_stream(&setup.server, opt_in()).await;
        let mut result = results(&sse)[0].clone();
        if setting == Some(true) {
            assert!(result.get("media").is_some(), "the feature adds media");
            result.as_object_mut().expect("object").remove("media");
        }
        seen.push((stable(&result), support::prompts(&setup.server)[1].clone()));
    }
    assert_eq!(seen[0], seen[1], "feature absent and feature false are identical, prompt included");
    assert_eq!(seen[0].0, seen[2].0, "with the feature on, only `media` is added to the event");
    assert!(seen[0].0.contains("[image (image/png, "), "{}", seen[0].0);
}

#[tokio::test]
async fn spec_8_3_and_8_6_pictures_are_cached_by_hash_and_announced() {
    for (format, name) in [(PictureFormat::Png, "png"), (PictureFormat::Jpeg, "jpeg"), (PictureFormat::Webp, "webp")] {
        let setup = with_fixture(config(
            Some(true),
            picture_script(&[("format", name), ("width", "80"), ("height", "60"), ("seed", "3")]),
        ))
        .await;
        let sse = chat_stream(&setup.server, opt_in()).await;
        let result = &results(&sse)[0];
        let keys: Vec<&String> = result.as_object().expect("object").keys().collect();
        assert_eq!(keys, ["event", "id", "ok", "text", "chars", "truncated", "ms", "media"], "media comes last");
        let bytes = picture(format, 80, 60, 3);
        let file = media_name(format, &bytes);
        assert_eq!(
            result["media"],
            json!([{"ref": format!("strata-tool-media:{file}"), "url": format!("/tool-media/{file}"),
                    "mime": format.mime(), "bytes": bytes.len(), "width": 80, "height": 60}])
        );
        let dir = setup.server.dir.path().join("run.tool-media");
        assert_eq!(std::fs::metadata(&dir).expect("folder").permissions().mode() & 0o777, 0o700);
        let cached = dir.join(&file);
        assert_eq!(std::fs::metadata(&cached).expect("file").permissions().mode() & 0o777, 0o600);
        assert_eq!(sha256_hex(&std::fs::read(&cached).expect("read")), sha256_hex(&bytes));
        let body = sse.chunks.iter().map(Value::to_string).collect::<String>();
        let b64 = base64::engine::general_purpose::STANDARD.encode(&bytes);
        assert!(!body.contains(&b64[100..160]), "8.6: no base64 in any event");
    }
}

#[tokio::test]
async fn spec_8_2_magic_bytes_decide_not_the_declared_mime() {
    let setup = with_fixture(config(Some(true), picture_script(&[("format", "png"), ("mime", "image/jpeg")]))).await;
    let sse = chat_stream(&setup.server, opt_in()).await;
    let media = &results(&sse)[0]["media"][0];
    assert_eq!(media["mime"], "image/png");
    assert!(media["ref"].as_str().expect("ref").ends_with(".png"));
}

#[tokio::test]
async fn spec_8_2_and_8_5_svg_audio_links_and_corrupt_pictures_stay_text() {
    let scripts = vec![
        call_script("fake__svg", &[]),
        call_script("fake__audio", &[]),
        call_script("fake__link", &[]),
        call_script("fake__corrupt", &[]),
        answer_script("done"),
    ];
    let setup = with_fixture(config(Some(true), scripts)).await;
    let sse = chat_stream(&setup.server, opt_in()).await;
    let results = results(&sse);
    assert_eq!(results.len(), 4);
    for result in &results {
        assert!(result.get("media").is_none(), "{result}");
    }
    assert!(results[0]["text"].as_str().expect("t").starts_with("[image (image/svg+xml, "));
    assert!(results[1]["text"].as_str().expect("t").contains("[audio (audio/wav, "));
    assert_eq!(results[2]["text"], "[resource link: passwd file:///etc/passwd]");
    assert!(results[3]["text"].as_str().expect("t").starts_with("[image (image/png, "));
    assert!(!setup.server.dir.path().join("run.tool-media").exists(), "nothing was cached");
}

#[tokio::test]
async fn spec_8_2_a_resource_blob_picture_is_cached() {
    let setup =
        with_fixture(config(Some(true), vec![call_script("fake__resource_picture", &[]), answer_script("ok")])).await;
    let sse = chat_stream(&setup.server, opt_in()).await;
    let result = &results(&sse)[0];
    assert_eq!(result["media"].as_array().map(Vec::len), Some(1));
    assert_eq!(result["text"], "a resource\n[resource fixture://picture.png (image/png), not shown]");
}

#[tokio::test]
async fn spec_8_4_at_most_four_pictures_and_never_an_over_cap_one() {
    let scripts =
        vec![call_script("fake__picture", &[("count", "6")]), call_script("fake__over_cap", &[]), answer_script("ok")];
    let setup = with_fixture(config(Some(true), scripts)).await;
    let sse = chat_stream(&setup.server, opt_in()).await;
    let results = results(&sse);
    assert_eq!(results[0]["media"].as_array().map(Vec::len), Some(4));
    assert_eq!(results[0]["text"].as_str().expect("t").matches("[image (image/png, ").count(), 6);
    assert!(results[1].get("media").is_none());
    assert_eq!(results[1]["text"], "too big\n[image (image/png, 18,000,003 bytes): not shown to the model]");
}

#[tokio::test]
async fn spec_8_4_both_caps_are_configuration_and_hold_at_n_minus_1_n_and_n_plus_1() {
    // Pictures per result, cap 2: 1, 2 and 3 pictures give 1, 2 and 2 media entries.
    for (count, cached) in [(1, 1), (2, 2), (3, 2)] {
        let mut config = config(Some(true), picture_script(&[("count", &count.to_string())]));
        config["mcp"]["max_pictures_per_result"] = json!(2);
        let setup = with_fixture(config).await;
        let sse = chat_stream(&setup.server, opt_in()).await;
        let media = results(&sse)[0]["media"].as_array().map_or(0, Vec::len);
        assert_eq!(media, cached, "{count} pictures with a cap of 2");
    }
    // Size, as base64 characters of the fixture's 64×48 PNG: a cap one below refuses it, at it and
    // one above take it.
    let size = base64::engine::general_purpose::STANDARD.encode(picture(PictureFormat::Png, 64, 48, 1)).len();
    for (cap, taken) in [(size - 1, false), (size, true), (size + 1, true)] {
        let mut config = config(Some(true), picture_script(&[]));
        config["mcp"]["max_picture_chars"] = json!(cap);
        let setup = with_fixture(config).await;
        let sse = chat_stream(&setup.server, opt_in()).await;
        assert_eq!(results(&sse)[0].get("media").is_some(), taken, "a picture of {size} characters, cap {cap}");
    }
}

#[tokio::test]
async fn spec_8_7_a_cache_that_cannot_be_written_keeps_the_text_and_the_turn() {
    let dir = tempfile::tempdir().expect("dir");
    // A file where the folder should be: no process, root included, can write the cache.
    std::fs::write(dir.path().join("run.tool-media"), "in the way").expect("write");
    let fixture = fixtures::http::serve_http(Default::default(), 0, None).await.expect("fixture");
    let mut config = config(Some(true), picture_script(&[]));
    config["mcp_servers"] = json!({"fake": {"url": fixture.url}});
    let server = start_in(dir, config).await;
    let sse = chat_stream(&server, opt_in()).await;
    let result = &results(&sse)[0];
    assert_eq!(result["ok"], true);
    assert!(result.get("media").is_none());
    assert!(result["text"].as_str().expect("t").starts_with("1 picture of 64x48\n[image (image/png, "));
    assert_eq!(sse.content(), "Let me check.Here it is.", "the turn went on");
}

async fn cached_picture(setup: &support::WithFixture) -> (String, Vec<u8>) {
    let sse = chat_stream(&setup.server, opt_in()).await;
    let url = results(&sse)[0]["media"][0]["url"].as_str().expect("url").to_string();
    (url, picture(PictureFormat::Png, 64, 48, 1))
}

#[tokio::test]
async fn spec_9_4_to_9_6_the_route_serves_with_its_headers_304_and_head() {
    let mut cfg = config(Some(true), picture_script(&[]));
    cfg["api_key"] = json!("k");
    let setup = with_fixture(cfg).await;
    let sse = chat_stream_keyed(&setup.server, opt_in()).await;
    let url = results(&sse)[0]["media"][0]["url"].as_str().expect("url").to_string();
    let bytes = picture(PictureFormat::Png, 64, 48, 1);
    let hash = sha256_hex(&bytes);
    let response = client().get(setup.server.url(&url)).bearer_auth("k").send().await.expect("sent");
    assert_eq!(response.status(), 200);
    let headers = response.headers().clone();
    assert_eq!(headers["content-type"], "image/png");
    assert_eq!(headers["content-length"], bytes.len().to_string().as_str());
    assert_eq!(headers["etag"], format!("\"{hash}\"").as_str());
    assert_eq!(headers["cache-control"], "private, max-age=31536000, immutable");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert_eq!(sha256_hex(&response.bytes().await.expect("body")), hash);
    let not_modified = client()
        .get(setup.server.url(&url))
        .bearer_auth("k")
        .header("if-none-match", format!("\"{hash}\""))
        .send()
        .await
        .expect("sent");
    assert_eq!(not_modified.status(), 304);
    assert!(not_modified.bytes().await.expect("body").is_empty());
    let head = client().head(setup.server.url(&url)).bearer_auth("k").send().await.expect("sent");
    assert_eq!(head.status(), 200);
    assert_eq!(head.headers()["content-length"], bytes.len().to_string().as_str());
    assert_eq!(head.headers()["etag"], format!("\"{hash}\"").as_str());
    assert!(head.bytes().await.expect("body").is_empty());
    let anonymous = client().get(setup.server.url(&url)).send().await.expect("sent");
    assert_eq!(anonymous.status(), 401, "9.1: the API's authentication");
}

async fn chat_stream_keyed(server: &support::TestServer, mut body: Value) -> support::Sse {
    body["stream"] = json!(true);
    let response =
        client().post(server.url("/v1/chat/completions")).bearer_auth("k").json(&body).send().await.expect("sent");
    support::Sse::parse(&response.text().await.expect("body"))
}

#[tokio::test]
async fn spec_9_2_9_3_9_7_hostile_names_symlinks_and_folders_are_the_same_404() {
    let setup = with_fixture(config(Some(true), picture_script(&[]))).await;
    let (url, _) = cached_picture(&setup).await;
    let name = url.trim_start_matches("/tool-media/").to_string();
    let hash = &name[..64];
    let dir = setup.server.dir.path().join("run.tool-media");
    std::fs::write(setup.server.dir.path().join("secret.txt"), "canary").expect("canary");
    let linked = format!("{}.png", sha256_hex(b"link"));
    std::os::unix::fs::symlink(setup.server.dir.path().join("secret.txt"), dir.join(&linked)).expect("link");
    let folder = format!("{}.webp", sha256_hex(b"folder"));
    std::fs::create_dir(dir.join(&folder)).expect("folder");
    let hostile = [
        format!("/tool-media/{}", hash.to_uppercase() + ".png"),
        format!("/tool-media/{hash}.PNG"),
        format!("/tool-media/{hash}.jpeg"),
        format!("/tool-media/{hash}.gif"),
        format!("/tool-media/{hash}"),
        format!("/tool-media/{hash}%2epng"),
        format!("/tool-media/..%2f{name}"),
        "/tool-media/%2e%2e%2fsecret.txt".to_string(),
        "/tool-media/../secret.txt".to_string(),
        format!("/tool-media/{name}%00"),
        format!("/tool-media/{name}/"),
        format!("/tool-media/./{name}"),
        format!("/tool-media/{}", "a".repeat(5000)),
        format!("/tool-media/{linked}"),
        format!("/tool-media/{folder}"),
        format!("/tool-media/{}.png", sha256_hex(b"never stored")),
    ];
    for path in hostile {
        let response = reqwest_raw_get(&setup.server, &path).await;
        assert_eq!(response.0, 404, "{path}");
        assert_eq!(response.1, json!({"error": {"type": "not_found", "message": "not found"}}), "{path}");
    }
}

/// A GET with the path sent exactly as written (reqwest would normalise `..`).
async fn reqwest_raw_get(server: &support::TestServer, path: &str) -> (u16, Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(server.server.addr).await.expect("connect");
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.expect("read");
    let text = String::from_utf8_lossy(&answer);
    let status = text.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

#[tokio::test]
async fn spec_9_7_with_the_feature_off_the_route_is_404() {
    let setup = with_fixture(config(Some(true), picture_script(&[]))).await;
    let (url, _) = cached_picture(&setup).await;
    let off = start_in(tempfile::tempdir().expect("dir"), json!({})).await;
    // Same name, a server without the feature: 404 even if a file of that name existed.
    let path = off.dir.path().join("run.tool-media");
    std::fs::create_dir_all(&path).expect("dir");
    std::fs::copy(
        setup.server.dir.path().join("run.tool-media").join(url.trim_start_matches("/tool-media/")),
        path.join(url.trim_start_matches("/tool-media/")),
    )
    .expect("copy");
    assert_eq!(client().get(off.url(&url)).send().await.expect("sent").status(), 404);
}

#[tokio::test]
async fn spec_8_9_the_cache_persists_across_a_restart() {
    let dir = tempfile::tempdir().expect("dir");
    let fixture = fixtures::http::serve_http(Default::default(), 0, None).await.expect("fixture");
    let mut cfg = config(Some(true), picture_script(&[]));
    cfg["mcp_servers"] = json!({"fake": {"url": fixture.url}});
    let path = dir.path().to_path_buf();
    let first = start_in(dir, cfg.clone()).await;
    let sse = chat_stream(&first, opt_in()).await;
    let url = results(&sse)[0]["media"][0]["url"].as_str().expect("url").to_string();
    let support::TestServer { server, dir, .. } = first;
    server.stop().await;
    let second = start_in(dir, cfg).await;
    assert_eq!(second.dir.path(), path);
    let response = client().get(second.url(&url)).send().await.expect("sent");
    assert_eq!(response.status(), 200);
    assert_eq!(sha256_hex(&response.bytes().await.expect("body")), sha256_hex(&picture(PictureFormat::Png, 64, 48, 1)));
}

#[tokio::test]
async fn spec_8_3_many_writers_of_the_same_and_different_pictures_leave_whole_files() {
    let dir = tempfile::tempdir().expect("dir");
    let cache = reference_server::media::MediaCache::new(dir.path().join("c.tool-media"));
    let pictures: Vec<Vec<u8>> = (0..8).map(|seed| picture(PictureFormat::Png, 200, 150, seed)).collect();
    let mut tasks = Vec::new();
    for round in 0..8 {
        for (i, bytes) in pictures.iter().enumerate() {
            let cache = cache.clone();
            let bytes = bytes.clone();
            let _ = round;
            tasks.push(tokio::task::spawn_blocking(move || {
                (i, cache.store(reference_server::media::Format::Png, &bytes))
            }));
        }
    }
    for task in tasks {
        let (i, stored) = task.await.expect("joined");
        assert_eq!(stored.expect("stored").as_str(), media_name(PictureFormat::Png, &pictures[i]));
    }
    let files: Vec<_> = std::fs::read_dir(cache.dir()).expect("list").map(|e| e.expect("entry").path()).collect();
    assert_eq!(files.len(), 8, "one file per picture, no temp files left: {files:?}");
    for file in files {
        let bytes = std::fs::read(&file).expect("read");
        let name = file.file_name().expect("name").to_string_lossy().into_owned();
        assert_eq!(&name[..64], sha256_hex(&bytes), "every file's hash matches its name");
    }
}

#[tokio::test]
async fn spec_8_3_concurrent_turns_writing_the_same_pictures_all_announce_them() {
    let mut cfg = config(Some(true), picture_script(&[("count", "4")]));
    cfg["engine"]["restart_per_request"] = json!(true);
    let setup = with_fixture(cfg).await;
    let turns = (0..12).map(|_| chat_stream(&setup.server, opt_in()));
    let streams = futures::future::join_all(turns).await;
    for sse in &streams {
        assert_eq!(results(sse)[0]["media"].as_array().map(Vec::len), Some(4));
    }
    let dir = setup.server.dir.path().join("run.tool-media");
    let files: Vec<_> = std::fs::read_dir(&dir).expect("list").map(|e| e.expect("entry").path()).collect();
    assert_eq!(files.len(), 4);
    for file in files {
        let name = file.file_name().expect("name").to_string_lossy().into_owned();
        assert_eq!(&name[..64], sha256_hex(&std::fs::read(&file).expect("read")));
    }
}
