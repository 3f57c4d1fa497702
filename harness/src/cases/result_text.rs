//! SPEC §7: the text a result becomes, errors as text, the cap, and byte-identity with the feature off.

use base64::Engine;
use fixtures::images::{PictureFormat, picture};
use serde_json::{Value, json};

use super::case;
use super::common::{answer, call, first_result, opt_in, stream, with_commas};
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::scenario::{Scenario, Setup, own};

const PICTURE_OFF: Scenario =
    own("picture-feature-absent", || Setup::mcp(None).scripts(vec![call("picture", &[]), answer("ok")]));
const PICTURE_FALSE: Scenario =
    own("picture-feature-false", || Setup::mcp(Some(false)).scripts(vec![call("picture", &[]), answer("ok")]));
const FAIL: Scenario = own("fail", || Setup::mcp(None).scripts(vec![call("fail", &[]), answer("ok")]));
/// A call the fixture answers with a JSON-RPC error (`picture` of a format it does not make).
/// A format the fixture does not make, named with characters of two, three and four bytes: the error's
/// message quotes it.
const ODD_FORMAT: &str = "tiff-Größe-形式-🖼";
const RPC_ERROR: Scenario =
    own("rpc-error", || Setup::mcp(None).scripts(vec![call("picture", &[("format", ODD_FORMAT)]), answer("ok")]));
/// Calls of `sleep` 5 s and 1 s under `mcp.timeout_s` 1.5 (a value that is not whole: 7.2 writes it as
/// given): one past the limit, one inside it.
const SLOW: Scenario = own("slow-call", || {
    let sleep = |s: &'static str| ("fake__sleep", [("seconds", s)]);
    let (past, inside) = (sleep("5"), sleep("1"));
    let calls: [(&str, &[(&str, &str)]); 2] = [(past.0, &past.1), (inside.0, &inside.1)];
    Setup::mcp(None).scripts(vec![fixtures::scripts::calls_script(&calls), answer("ok")]).set(
        "mcp",
        "timeout_s",
        json!(1.5),
    )
});
const BIG: Scenario = own("big", || {
    Setup::mcp(None).scripts(vec![call("big", &[("n", "3000")]), answer("ok")]).set(
        "mcp",
        "max_result_chars",
        json!(500),
    )
});

/// Three results of 499, 500 and 501 characters under `max_result_chars` 500.
const AROUND_THE_CAP: Scenario = own("around-the-cap", || {
    let calls: [(&str, &[(&str, &str)]); 3] =
        [("fake__big", &[("n", "499")]), ("fake__big", &[("n", "500")]), ("fake__big", &[("n", "501")])];
    Setup::mcp(None).scripts(vec![fixtures::scripts::calls_script(&calls), answer("ok")]).set(
        "mcp",
        "max_result_chars",
        json!(500),
    )
});

/// Text of `n` characters mixing one-, two-, three- and four-byte UTF-8 (an astral one among them):
/// the cap counts characters, never bytes or UTF-16 units.
pub fn wide_text(n: usize) -> String {
    "é日😀a".chars().cycle().take(n).collect()
}

/// Three echoed results of 499, 500 and 501 such characters under `max_result_chars` 500.
const WIDE_AROUND_THE_CAP: Scenario = own("wide-around-the-cap", || {
    let texts = [wide_text(499), wide_text(500), wide_text(501)];
    let calls: Vec<(&str, [(&str, &str); 1])> = texts.iter().map(|t| ("fake__echo", [("text", t.as_str())])).collect();
    let calls: Vec<(&str, &[(&str, &str)])> = calls.iter().map(|(name, args)| (*name, &args[..])).collect();
    Setup::mcp(None).scripts(vec![fixtures::scripts::calls_script(&calls), answer("ok")]).set(
        "mcp",
        "max_result_chars",
        json!(500),
    )
});

/// The fixture's `staged` tool called once a request: a result the case stages itself.
const STAGED: Scenario = own("staged-error", || {
    Setup::mcp(None).set("engine", "restart_per_request", json!(true)).scripts(vec![call("staged", &[]), answer("ok")])
});

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "result.cap-counts-characters",
            "7.3",
            Must,
            WIDE_AROUND_THE_CAP,
            "results of 499, 500 and 501 characters of 1- to 4-byte UTF-8 under a cap of 500: the cap and chars count characters, not bytes",
            cap_counts_characters,
            ["result-cap-counts-bytes"]
        ),
        case!(
            "result.cap-at-499-500-501",
            "7.3",
            Must,
            AROUND_THE_CAP,
            "with max_result_chars 500, results of 499 and 500 characters are whole and one of 501 is cut to 500 with the note",
            cap_boundary,
            ["result-cap-off-by-one"]
        ),
        case!(
            "result.picture-placeholder",
            "7.1",
            Must,
            PICTURE_OFF,
            "an image block's text is [image (<mime>, <N> bytes): not shown to the model]",
            placeholder,
            ["placeholder-text", "placeholder-counts-base64", "placeholder-numbers-plain"]
        ),
        case!(
            "result.errors-are-text",
            "7.2",
            Must,
            FAIL,
            "isError is a result `error: …` with ok false, and the answer goes on",
            errors_are_text,
            ["errors-fail-request", "failures-ok", "tool-errors-unprefixed"]
        ),
        case!(
            "result.textless-error-is-the-fallback",
            "7.2",
            Must,
            STAGED,
            "an isError result with no blocks, or one empty text block, is the result `error: the tool reported an error` with ok false",
            textless_error_fallback,
            ["tool-error-fallback-empty", "errors-fail-request"]
        ),
        case!(
            "result.json-rpc-errors-are-text",
            "7.2",
            Must,
            RPC_ERROR,
            "a tools/call answered with a JSON-RPC error is the result `error: <message> (code <code>)` with ok false (the message quoting a format named with characters of 2, 3 and 4 bytes, intact, and chars counting characters), and the answer goes on",
            json_rpc_errors_are_text,
            ["rpc-error-code-dropped", "rpc-error-ascii-only", "errors-fail-request"]
        ),
        case!(
            "result.call-timeout-is-text",
            "7.2",
            Must,
            SLOW,
            "a call past mcp.timeout_s 1.5 is the result `error: tools/call timed out after 1.5 s` with ok false, after 1.5 s and well before the tool's 5 s, a 1 s call beside it answers `slept`, and the answer goes on",
            call_timeout_is_text,
            ["timeout-in-ms", "errors-fail-request"]
        ),
        case!(
            "result.truncation-note",
            "7.3",
            Must,
            BIG,
            "text over max_result_chars is cut with the truncation note",
            truncation_note,
            ["no-truncation-note", "note-numbers-plain"]
        ),
        case!(
            "result.feature-off-is-byte-identical",
            "7.4",
            Must,
            PICTURE_FALSE,
            "with image_results false the result event is exactly the text baseline",
            feature_off_identical,
            ["feature-off-leaks"]
        ),
    ]
}

/// The text baseline of the fixture's default picture result.
fn baseline_text() -> String {
    let data = base64::engine::general_purpose::STANDARD.encode(picture(PictureFormat::Png, 64, 48, 1));
    let bytes = with_commas(data.len() * 3 / 4);
    format!("1 picture of 64x48\n[image (image/png, {bytes} bytes): not shown to the model]")
}

async fn placeholder(ctx: Ctx) -> CheckResult {
    let result = first_result(&stream(&ctx.http, opt_in()).await?)?;
    expect_eq("text", baseline_text().as_str(), result.text.as_str())
}

async fn errors_are_text(ctx: Ctx) -> CheckResult {
    let stream = stream(&ctx.http, opt_in()).await?;
    let result = first_result(&stream)?;
    expect_eq("ok", false, result.ok)?;
    expect_eq("text", "error: it failed on purpose", result.text.as_str())?;
    expect_eq("finish_reason", Some("stop"), stream.finish_reason())
}

async fn textless_error_fallback(ctx: Ctx) -> CheckResult {
    let empty_text = vec![rmcp::model::ContentBlock::text("")];
    for (what, content) in [("no blocks", Vec::new()), ("one empty text block", empty_text)] {
        ctx.stage()?.set(rmcp::model::CallToolResult::error(content));
        let stream = stream(&ctx.http, opt_in()).await?;
        let result = first_result(&stream)?;
        expect_eq(&format!("ok of an error with {what}"), false, result.ok)?;
        expect_eq(&format!("text of an error with {what}"), "error: the tool reported an error", result.text.as_str())?;
        expect_eq(&format!("finish_reason after an error with {what}"), Some("stop"), stream.finish_reason())?;
    }
    Ok(())
}

async fn json_rpc_errors_are_text(ctx: Ctx) -> CheckResult {
    let stream = stream(&ctx.http, opt_in()).await?;
    let result = first_result(&stream)?;
    expect_eq("ok", false, result.ok)?;
    // invalid_params is -32602 in JSON-RPC 2.0 itself; the message is the fixture's.
    let wanted = format!("error: {} (code -32602)", fixtures::tools::bad_format(ODD_FORMAT));
    expect_eq("text", wanted.as_str(), result.text.as_str())?;
    expect_eq("chars", wanted.chars().count() as u64, result.chars)?;
    expect_eq("finish_reason", Some("stop"), stream.finish_reason())
}

async fn call_timeout_is_text(ctx: Ctx) -> CheckResult {
    let started = std::time::Instant::now();
    let stream = stream(&ctx.http, opt_in()).await?;
    let elapsed = started.elapsed();
    // The two results in either order (written in call order or as they end): the longer is the 5 s call's.
    let mut results = stream.results()?;
    results.sort_by_key(|r| std::cmp::Reverse(r.ms));
    expect_eq("results, one a call", 2, results.len())?;
    let (result, inside) = (results[0].clone(), results[1].clone());
    expect_eq("ok", false, result.ok)?;
    expect_eq("text", "error: tools/call timed out after 1.5 s", result.text.as_str())?;
    expect(
        (1500..4500).contains(&result.ms),
        "the call's ms at least the 1,500 of the timeout and well under the tool's 5,000",
        result.ms.to_string(),
    )?;
    expect(
        elapsed >= std::time::Duration::from_millis(1500) && elapsed < std::time::Duration::from_millis(4500),
        "the whole turn at least 1.5 s and well under the tool's 5 s",
        format!("{elapsed:?}"),
    )?;
    expect_eq("the 1 s call, inside the limit", (true, "slept"), (inside.ok, inside.text.as_str()))?;
    expect_eq("finish_reason", Some("stop"), stream.finish_reason())
}

async fn truncation_note(ctx: Ctx) -> CheckResult {
    let result = first_result(&stream(&ctx.http, opt_in()).await?)?;
    let wanted = format!(
        "{}\n\n[... truncated: the tool returned 3,000 characters; only the first 500 are shown]",
        "y".repeat(500)
    );
    expect_eq("text", wanted.as_str(), result.text.as_str())?;
    expect_eq("chars and truncated", (3000, true), (result.chars, result.truncated))
}

async fn feature_off_identical(ctx: Ctx) -> CheckResult {
    let result = first_result(&stream(&ctx.http, opt_in()).await?)?.raw;
    let text = baseline_text();
    let mut wanted = json!({"event": "result", "id": result["id"], "ok": true, "text": text, "chars": text.chars().count(), "truncated": false, "ms": result["ms"]});
    expect(result["ms"].is_u64(), "ms is a number", result.to_string())?;
    if wanted["id"] == Value::Null {
        wanted["id"] = json!("(missing)");
    }
    expect_eq("the event, byte for byte", wanted.to_string(), result.to_string())
}

async fn cap_counts_characters(ctx: Ctx) -> CheckResult {
    let mut results = stream(&ctx.http, opt_in()).await?.results()?;
    results.sort_by_key(|r| r.chars); // SPEC orders results by nothing; each is known by its length
    expect_eq("results", 3, results.len())?;
    for (result, n) in results.iter().zip([499usize, 500]) {
        expect_eq(
            &format!("the result of {n} characters ({} bytes)", wide_text(n).len()),
            (wide_text(n).as_str(), n as u64, false),
            (result.text.as_str(), result.chars, result.truncated),
        )?;
    }
    let cut = format!(
        "{}\n\n[... truncated: the tool returned 501 characters; only the first 500 are shown]",
        wide_text(500)
    );
    expect_eq(
        "the result of 501 characters",
        (cut.as_str(), 501, true),
        (results[2].text.as_str(), results[2].chars, results[2].truncated),
    )
}

async fn cap_boundary(ctx: Ctx) -> CheckResult {
    let results = stream(&ctx.http, opt_in()).await?.results()?;
    expect_eq("results", 3, results.len())?;
    for (result, n) in results.iter().zip([499usize, 500]) {
        expect_eq(
            &format!("the result of {n} characters"),
            ("y".repeat(n).as_str(), n as u64, false),
            (result.text.as_str(), result.chars, result.truncated),
        )?;
    }
    let cut = format!(
        "{}\n\n[... truncated: the tool returned 501 characters; only the first 500 are shown]",
        "y".repeat(500)
    );
    expect_eq(
        "the result of 501 characters",
        (cut.as_str(), 501, true),
        (results[2].text.as_str(), results[2].chars, results[2].truncated),
    )
}
