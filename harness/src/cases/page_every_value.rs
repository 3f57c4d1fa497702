//! SPEC 13.2 and 13.3 over every value of their sets, in one visit at 768 px two cases share
//! (`page_once`): a turn whose tools return a picture in each format the cache keeps (PNG, JPEG, WebP)
//! and results of every length around the page's likely limits (0, 1, 4,095, 4,096, 4,097 and 20,000
//! characters, the last `max_result_chars` itself, so none is cut); then a reload with the HTTP cache
//! emptied; then a next turn. Each picture must be previewed and downloadable under its own name
//! (`<sha256>.<png|jpg|webp>`, the bytes hashed here against the fixture's pictures) before and after
//! the reload and sent back as its reference; each result shown whole before and after the reload and
//! sent back exactly in the next turn's tool message.

use fixtures::images::PictureFormat;
use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::common::{answer, sha256};
use super::page_once::{Point, Visited, visited};
use super::page_visit::Visit;
use crate::browser::page::{
    downloads, idle, js, loaded_pictures, open_every_tool, reload, sel, send, tools_settled, wait_until,
};
use crate::browser::proxy::Framing;
use crate::case::{Case, CheckError, CheckResult, expect, expect_eq};
use crate::cases::case;
use crate::context::Ctx;
use crate::scenario::{FIXTURE_SERVER, Reach, Scenario, Serving, Setup};

/// Each format the cache keeps, its name for the fixture's `picture` tool, the extension SPEC 8.1
/// names it with, and the seed of its picture.
const FORMATS: [(PictureFormat, &str, &str, u32); 3] = [
    (PictureFormat::Png, "png", "png", 31),
    (PictureFormat::Jpeg, "jpeg", "jpg", 32),
    (PictureFormat::Webp, "webp", "webp", 33),
];
/// The pictures' size.
const WIDTH: u32 = 64;
const HEIGHT: u32 = 48;
/// The result lengths, in characters: nothing, one, 4,096 and each side of it, and the scenario's cap.
const LENGTHS: [usize; 6] = [0, 1, 4095, 4096, 4097, CAP];
/// `mcp.max_result_chars` in the scenario: the longest result is exactly at it, so none is cut.
const CAP: usize = 20_000;

/// A text of `n` characters: letters, digits, spaces and two non-ASCII ones, in a cycle.
fn text_of(n: usize) -> String {
    "Zeile é€ 0123456789 ".chars().cycle().take(n).collect()
}

/// The picture the fixture returns for `format` and `seed`, and its name in the cache.
fn picture_name(format: PictureFormat, extension: &str, seed: u32) -> String {
    format!("{}.{extension}", sha256(&fixtures::images::picture(format, WIDTH, HEIGHT, seed)))
}

/// One pass: a picture in each format, then `echo` with a text of each length; then an answer, and
/// the next turn's.
fn every_value() -> Setup {
    let (width, height) = (WIDTH.to_string(), HEIGHT.to_string());
    let seeds: Vec<String> = FORMATS.iter().map(|(_, _, _, seed)| seed.to_string()).collect();
    let texts: Vec<String> = LENGTHS.iter().map(|&n| text_of(n)).collect();
    let picture = format!("{FIXTURE_SERVER}__picture");
    let echo = format!("{FIXTURE_SERVER}__echo");
    let mut calls: Vec<(&str, Vec<(&str, &str)>)> = FORMATS
        .iter()
        .zip(&seeds)
        .map(|((_, name, _, _), seed)| {
            (picture.as_str(), vec![("format", *name), ("width", &width), ("height", &height), ("seed", seed)])
        })
        .collect();
    calls.extend(texts.iter().map(|text| (echo.as_str(), vec![("text", text.as_str())])));
    let calls: Vec<(&str, &[(&str, &str)])> = calls.iter().map(|(name, args)| (*name, args.as_slice())).collect();
    Setup::mcp(Some(true)).with_key().set("mcp", "max_result_chars", json!(CAP)).scripts(vec![
        fixtures::scripts::calls_script(&calls),
        answer("Every format and length."),
        answer("Next."),
    ])
}

const EVERY_VALUE: Scenario =
    Scenario { name: "page-every-value", build: every_value, serving: Serving::Shared(Reach::Configured) };

const FORMATS_CASE: &str = "page.pictures-of-every-format-shown-and-downloadable";
const LENGTHS_CASE: &str = "page.results-of-every-length-kept-and-sent";

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "page.pictures-of-every-format-shown-and-downloadable",
            "13.2",
            Must,
            EVERY_VALUE,
            "a PNG, a JPEG and a WebP picture: each previewed and downloadable as a blob named <sha256>.<png|jpg|webp> whose bytes are the picture, before and after a reload, and each sent back as its strata-tool-media: reference in the next turn",
            every_format,
            ["page-webp-not-drawn", "page-download-named-by-mime"]
        ),
        case!(
            "page.results-of-every-length-kept-and-sent",
            "13.3",
            Must,
            EVERY_VALUE,
            "results of 0, 1, 4,095, 4,096, 4,097 and 20,000 characters (max_result_chars, none cut): each shown whole in its block, again after a reload from storage, and sent back exactly in the next turn's tool message",
            every_length,
            ["page-results-stored-cut", "page-empty-result-unshown", "page-long-results-sent-cut"]
        ),
    ]
}

const TURNED: &str = "after the turn";
const RELOADED: &str = "after a reload";
/// Every tool block: the pictures' and the texts'.
const BLOCKS: usize = FORMATS.len() + LENGTHS.len();

fn walk<'a>(visit: &'a Visit<'a>, points: &'a mut Vec<Point>) -> BoxFuture<'a, CheckResult> {
    Box::pin(walk_on(visit, points))
}

/// The turn, a reload with the HTTP cache emptied, the next turn; the page read after the first two.
async fn walk_on(visit: &Visit<'_>, points: &mut Vec<Point>) -> CheckResult {
    let client = visit.client();
    send(client, "Every format and every length").await?;
    wait_until(client, &tools_settled(BLOCKS), 60, &format!("{BLOCKS} tool blocks settled and the turn over")).await?;
    points.push(Point { name: TURNED, facts: look(visit).await? });
    visit.session.screenshot("every-value").await;
    visit.session.clear_http_cache().await?;
    reload(client).await?;
    wait_until(client, &tools_settled(BLOCKS), 15, "the conversation drawn again after a reload").await?;
    points.push(Point { name: RELOADED, facts: look(visit).await? });
    visit.session.screenshot("every-value-reloaded").await;
    send(client, "Once more").await?;
    let answered = format!("document.querySelectorAll('{}').length >= 4 && {}", sel("bubble"), idle());
    wait_until(client, &answered, 30, "the next turn answered").await
}

/// The page now, once its pictures settled: each picture's preview (loaded, and its size) and
/// downloads, and each tool block's result text (null without a `tool-result`).
async fn look(visit: &Visit<'_>) -> Result<Value, CheckError> {
    let client = visit.client();
    let settled = format!("[...document.querySelectorAll('{} img')].every(i => i.complete)", sel("picture"));
    wait_until(client, &settled, 15, "every picture loaded or failed").await?;
    open_every_tool(client).await?;
    let script = format!(
        r#"return {{
            loaded: {loaded},
            pictures: [...document.querySelectorAll('{picture} img')].map(i => [i.naturalWidth, i.naturalHeight]),
            results: [...document.querySelectorAll('{tool}')].map(t => {{ const r = t.querySelector('{result}'); return r ? r.textContent : null; }}),
        }};"#,
        loaded = loaded_pictures(),
        picture = sel("picture"),
        tool = sel("tool"),
        result = sel("tool-result"),
    );
    let mut facts = js(client, &script).await?;
    facts["downloads"] = json!(downloads(client).await?);
    Ok(facts)
}

/// The tool messages of the next turn's request (the page's last chat request), in order: each one's
/// text (its string content, or its text parts joined) and its pictures' references.
fn tool_messages(visited: &Visited) -> Result<Vec<(String, Vec<String>)>, CheckError> {
    let bodies: Vec<Value> = visited
        .log
        .iter()
        .filter(|r| r.method == "POST" && r.target.starts_with("/v1/chat/completions"))
        .map(|r| r.body.as_deref().and_then(|b| serde_json::from_str(b).ok()).unwrap_or_default())
        .collect();
    expect_eq("chat requests the page sent", 2, bodies.len())?;
    let messages = bodies[1]["messages"].as_array().cloned().unwrap_or_default();
    Ok(messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| match &m["content"] {
            Value::String(text) => (text.clone(), Vec::new()),
            Value::Array(parts) => {
                let text = parts.iter().filter(|p| p["type"] == "text").filter_map(|p| p["text"].as_str()).collect();
                let refs = parts
                    .iter()
                    .filter(|p| p["type"] == "image_url")
                    .filter_map(|p| p["image_url"]["url"].as_str().map(str::to_string))
                    .collect();
                (text, refs)
            }
            other => (other.to_string(), Vec::new()),
        })
        .collect())
}

fn formats_at(point: &Point) -> CheckResult {
    let at = point.name;
    let sizes: Vec<(u32, u32)> = serde_json::from_value(point.facts["pictures"].clone()).unwrap_or_default();
    expect_eq(&format!("{at}: the previews' sizes (PNG, JPEG, WebP)"), vec![(WIDTH, HEIGHT); FORMATS.len()], sizes)?;
    expect_eq(&format!("{at}: previews loaded"), Some(FORMATS.len() as u64), point.facts["loaded"].as_u64())?;
    let links: Vec<(String, String, String)> =
        serde_json::from_value(point.facts["downloads"].clone()).unwrap_or_default();
    let mut shown: Vec<String> = Vec::new();
    for (hash, name, href) in &links {
        expect(href.starts_with("blob:"), format!("{at}: a blob: download link"), href.clone())?;
        let wanted = FORMATS.iter().find_map(|&(format, _, extension, seed)| {
            let wanted = picture_name(format, extension, seed);
            wanted.starts_with(hash.as_str()).then_some(wanted)
        });
        let wanted = wanted.unwrap_or_else(|| format!("one of the pictures' names, not a download hashing to {hash}"));
        expect_eq(&format!("{at}: a download's name, <sha256>.<png|jpg|webp> of its bytes"), wanted, name.clone())?;
        shown.push(name.clone());
    }
    shown.sort();
    let mut wanted: Vec<String> =
        FORMATS.iter().map(|&(f, _, extension, seed)| picture_name(f, extension, seed)).collect();
    wanted.sort();
    expect_eq(&format!("{at}: the downloads (a PNG, a JPEG and a WebP)"), wanted, shown)
}

async fn every_format(ctx: Ctx) -> CheckResult {
    let visited = visited(&ctx, "page every value visit", FORMATS_CASE, Framing::AsServed, walk).await;
    for name in [TURNED, RELOADED] {
        formats_at(visited.at(name)?)?;
    }
    if let Some(error) = &visited.broke {
        return Err(error.clone());
    }
    let sent: Vec<String> = tool_messages(&visited)?.into_iter().flat_map(|(_, refs)| refs).collect();
    for &(format, _, extension, seed) in &FORMATS {
        let reference = format!("strata-tool-media:{}", picture_name(format, extension, seed));
        expect(sent.contains(&reference), format!("the next turn sends {reference}"), format!("{sent:?}"))?;
    }
    Ok(())
}

fn lengths_at(point: &Point) -> CheckResult {
    let results = point.facts["results"].as_array().cloned().unwrap_or_default();
    expect_eq(&format!("{}: tool blocks", point.name), BLOCKS, results.len())?;
    for (i, &n) in LENGTHS.iter().enumerate() {
        let shown = &results[FORMATS.len() + i];
        let Some(shown) = shown.as_str() else {
            return Err(CheckError::Fail {
                expected: format!("{}: the result of {n} characters in a tool-result (SPEC 13.7)", point.name),
                actual: "its block has none".into(),
            });
        };
        let wanted = text_of(n);
        // Exactly its characters: every text starts as the others do, so a block showing a longer one
        // (or the empty result showing anything) would pass a `contains`.
        expect(
            *shown == wanted,
            format!("{}: the result of {n} characters shown whole, and nothing else", point.name),
            format!("{} characters shown: {:?}…", shown.chars().count(), shown.chars().take(40).collect::<String>()),
        )?;
    }
    Ok(())
}

async fn every_length(ctx: Ctx) -> CheckResult {
    let visited = visited(&ctx, "page every value visit", LENGTHS_CASE, Framing::AsServed, walk).await;
    for name in [TURNED, RELOADED] {
        lengths_at(visited.at(name)?)?;
    }
    if let Some(error) = &visited.broke {
        return Err(error.clone());
    }
    let sent = tool_messages(&visited)?;
    expect_eq("tool messages in the next turn", BLOCKS, sent.len())?;
    for (i, &n) in LENGTHS.iter().enumerate() {
        let (text, _) = &sent[FORMATS.len() + i];
        expect(
            *text == text_of(n),
            format!("the next turn sends the result of {n} characters exactly"),
            format!("{} characters", text.chars().count()),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::text_of;

    #[test]
    fn texts_have_the_length_asked_for() {
        for n in [0, 1, 4095, 4096, 4097, 20_000] {
            assert_eq!(text_of(n).chars().count(), n);
        }
        assert_eq!(text_of(10), "Zeile é€ 0");
    }
}
