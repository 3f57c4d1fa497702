//! Generated cases (`gen.*`): each runs `--gen-budget` requests drawn from `--seed` against a model of
//! its clauses in `crate::generate`, and on a failure reports the shrunk request.

use super::case;
use crate::case::{Case, CheckError, CheckResult};
use crate::context::Ctx;
use crate::generate::{
    concurrency, config, events, keys, lifting, pass_text, picture_route, property, property_sharing, requests,
    results, server_sources, status, stdio_entry, tool_listing,
};
use crate::scenario::{BASIC, LAUNCHES, Scenario, Setup, own};
use crate::target::{ConfigFile, LaunchExtras};
use serde_json::json;

/// The fixture's `staged` tool called once a request, `max_result_chars` small enough to be met often.
fn staged_results(image_results: bool) -> Setup {
    Setup::mcp(Some(image_results))
        .set("mcp", "max_result_chars", json!(results::CAP))
        .set("engine", "restart_per_request", json!(true))
        .scripts(vec![super::common::call("staged", &[]), super::common::answer("ok")])
}
const RESULTS: Scenario = own("generated-results", || staged_results(true));
/// A server with a key and tool pictures on: its cache folder is where the picture requests' files
/// are planted.
const PICTURE_ROUTE: Scenario = own("generated-picture-route", || Setup::mcp(Some(true)).with_key());
/// A plain server whose one script answers every generated request alike.
const REQUESTS: Scenario =
    own("generated-requests", || Setup::plain().vision().scripts(vec![requests::SCRIPT.to_string()]));
const RESULTS_OFF: Scenario = own("generated-results-off", || staged_results(false));
const RESULTS_VISION: Scenario = own("generated-results-vision", || staged_results(true).vision());
/// A script set per `picture` call a generated burst can make, each request starting at its set's
/// first script.
const BURSTS: Scenario = own("generated-bursts", || {
    Setup::mcp(Some(true)).set("engine", "restart_per_request", json!(true)).set(
        "engine",
        "script_sets",
        concurrency::script_sets(),
    )
});

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "gen.concurrent-turns-cache-model",
            "8.3",
            Must,
            BURSTS,
            "generated bursts of 2-6 turns at once, each caching 1-3 PNG, JPEG or WebP pictures (or GIF, never cached) of two sizes from overlapping seeds, run twice with each announced file kept, deleted or cut to half between the runs: every result announces what the 8.3/8.6 model says (SHA-256 names, mime, bytes, size), every URL serves those bytes, and every file is whole after the second run (a quarter of --gen-budget: each burst is many turns)",
            concurrent_turns_model,
            ["cache-remembered", "non-atomic", "stale-files-kept", "wrong-hash", "jpeg-webp-refused"]
        ),
        case!(
            "gen.lifting-model",
            "11.2",
            Must,
            BASIC,
            "generated conversations (every role; strings and text parts; PNG, JPEG, WebP and GIF pictures of 700 to 1,100 bytes with and without data: prefixes, padding kept, dropped or wrong, last groups of 2 or 3 ending on digits; base64 that is no picture; short runs; more than 8 pictures a message; non-ASCII text against the runs) add exactly the prompt tokens of the 11.1-11.5 model's text",
            lifting_model,
            [
                "lift-swallows-non-ascii",
                "lift-digit-end-refused",
                "lift-first-text-part-only",
                "lift-anything",
                "lift-users",
                "lift-note",
                "lift-keeps-base64",
                "lift-cap-off-by-one",
                "lift-short-runs",
                "lift-partial-padding",
                "lift-per-part"
            ]
        ),
        case!(
            "gen.result-event-model",
            "7.1",
            Must,
            RESULTS,
            "generated tool results (text with non-ASCII, astral characters and runs of spaces; PNG, JPEG, WebP, GIF, BMP, SVG, corrupt, no-picture and not-base64 data in image blocks and resource blobs, labelled rightly, wrongly or not at all; text resources, links, audio; errors; past the cap) give the result event the 7.1-7.3 and 8.2-8.6 model says (text, chars, truncated, ok, media), each announced picture is in the cache folder, and the next pass's prompt grows by exactly the text's bytes (6.5, 8.8 without an encoder)",
            result_event_model,
            [
                "blob-mime-empty",
                "link-spaces-squeezed",
                "placeholder-text",
                "no-truncation-note",
                "result-cap-counts-bytes",
                "result-cap-off-by-one",
                "errors-fail-request",
                "event-shape",
                "blob-label-ignored",
                "mime-decides",
                "gif-and-bmp-shown",
                "jpeg-webp-refused",
                "candidates-take-slots",
                "picture-cap-off-by-one",
                "no-picture-cap",
                "media-shape",
                "base64-in-events",
                "wrong-hash",
                "cut-results-untruncated",
                "failures-ok",
                "empty-media-key",
                "text-blocks-trimmed",
                "resource-text-dropped",
                "placeholder-counts-base64",
                "placeholder-numbers-plain",
                "tool-errors-unprefixed",
                "blocks-joined-by-blank-line",
                "text-blocks-first",
                "undecodable-pictures-dropped",
                "image-blocks-not-candidates",
                "cached-pictures-as-references",
                "media-reversed"
            ]
        ),
        case!(
            "gen.tool-message-with-vision-model",
            "8.8",
            Must,
            RESULTS_VISION,
            "with a vision encoder, the same generated results give the event the model says, and the next pass's prompt grows by the model's tool message: the text with each cached picture left out, capped on the text alone (7.3), and each cached picture's 12.2 image tokens and two markers",
            tool_message_with_vision_model,
            [
                "no-vision-pads",
                "picture-cap-off-by-one",
                "candidates-take-slots",
                "result-cap-counts-bytes",
                "no-truncation-note"
            ]
        ),
        case!(
            "gen.request-model",
            "4.8",
            Must,
            REQUESTS,
            "generated requests to a server with the geometry encoder (1-6 messages of every role, system, developer, user, assistant and tool, anywhere; content a string, null or 1-3 parts, text of non-ASCII, astral, bidi, whitespace of every kind and marker text such as <|im_end|>, and pictures in every form 4.2 takes, PNG or JPEG, labelled truly, wrongly or with a parameter, sized around 12.2's bounds, a ratio of 200 and 201, now and then unreadable in a user message; an assistant's tool_calls, arguments an object, JSON text, not an object or absent; streamed or not; max_tokens and max_completion_tokens absent, null, 0 or -1; unknown fields of every JSON type) are refused 400 exactly when a user message holds a picture with no geometry or no decoder, else taken, answered with the script's reasoning and text and its whole length, and counted as the 4.8 model says: usage.prompt_tokens exactly the turns' tokens, one a byte, marker text as text, developer as system, parts joined with nothing, a picture its start, 12.2 tokens and end (a tool message's over-ratio picture its note), an assistant's calls in 4.8j's form, consecutive tool messages one user turn",
            request_model,
            requests::VARIANTS
        ),
        case!(
            "gen.picture-route-model",
            "9.5",
            Must,
            PICTURE_ROUTE,
            "each planted name fetched once, then generated GET and HEAD requests of /tool-media/ names (a planted PNG of 2 MiB, a JPEG or a WebP; a well-formed name with no file, a folder, a FIFO or a link; names malformed eight ways) with the key in every form 2.2 takes, none or a wrong one, and If-None-Match absent, the ETag strong, weak or in a list, * or another: 401 with 2.4's body, 9.7's 404, 304 without a body, or 200 with 9.4's headers and the picture's bytes, as the model says; HEAD is GET without a body",
            picture_route_model,
            picture_route::VARIANTS
        ),
        case!(
            "gen.tool-listing-model",
            "5.6",
            Must,
            LAUNCHES,
            "generated tool listings (1-8 tools over pages of 1-3 or one page; names empty, of words, punctuation, spaces and non-ASCII, colliding once cleaned, past 64 characters or ending in _2; a description, a title, both or neither, 0-400 characters) under a generated server name over HTTP, and the same over stdio: GET /mcp shows each server ready over its transport with exactly the tools the model says, in order: each named as 5.6 says, with its own name and its description or title cut to 300 characters, empty names left out, and their count (a quarter of --gen-budget: each starts a server)",
            tool_listing_model,
            tool_listing::VARIANTS
        ),
        case!(
            "gen.status-after-cut-turns-model",
            "4.11",
            Must,
            LAUNCHES,
            "generated turns of 0-2 rounds of a one-second MCP call, then text streamed a token every 5 ms, read to their end or cut while the text streams or while a round's call runs, then a request not streamed for the answer alone (a script set it names) waited for or cut 400 ms in, each pair on a server of its own: once nothing runs, /v1/status counts each request once, finished or (cut anywhere) cancelled, 0 running and not busy (a quarter of --gen-budget: each starts a server)",
            status_after_cut_turns_model,
            status::VARIANTS
        ),
        case!(
            "gen.server-sources-model",
            "1.6",
            Must,
            LAUNCHES,
            "generated launches whose MCP servers come from mcp_servers, mcpServers and a --mcp-config file under either key (each absent, empty or naming some of three names; each entry the fixture with its right Authorization header, a wrong one or none, an address where nothing listens, or \"disabled\": true alone or beside a right entry) list in GET /mcp exactly the names the 1.6 model leaves (read in that order, a later name replacing an earlier one, disabled removing it), each ready exactly when its entry is the right one (a quarter of --gen-budget: each starts a server)",
            server_sources_model,
            server_sources::VARIANTS
        ),
        case!(
            "gen.pass-text-model",
            "4.6",
            Must,
            LAUNCHES,
            "generated tool turns of 1-3 passes, each reasoning (empty, spaced, non-ASCII, over lines), </think>, then text and echo calls with whitespace of every kind before, between and after them (texts with non-ASCII, inner runs of spaces and tabs, and a marker's first characters <tool), streamed and whole: the reasoning is exactly what came before </think>, the content the rest without calls, the whitespace before each call, at each pass's end and at its content's start left out, the passes joined with nothing; whole, content null when empty (a quarter of --gen-budget: each starts a server)",
            pass_text_model,
            pass_text::VARIANTS
        ),
        case!(
            "gen.stdio-entry-model",
            "5.1",
            Must,
            LAUNCHES,
            "generated stdio MCP server entries (an env naming any of a non-ASCII value, an empty one, a name the server's environment also has, and STRATA_API_KEY; a cwd or none), each on a server of its own whose environment holds its key and two more names: the process runs with the server's environment and the entry's env over it, STRATA_API_KEY left out unless the entry names it, in the entry's cwd when it has one, else in the server's own working folder (a quarter of --gen-budget: each starts a server)",
            stdio_entry_model,
            stdio_entry::VARIANTS
        ),
        case!(
            "gen.config-model",
            "1.5",
            Must,
            LAUNCHES,
            "generated configurations (0 to 6 of the 20 typed keys of 1.5 and 1.11, the lists allowed_hosts, trusted_origins and engine.scripts among them, set to values of every JSON kind, each bound on both sides, [] and a list holding a number; an unknown key at the top, in mcp or in engine; an api_key, or one in a list) start, warning once per unknown key, or, when a value is one its key refuses, stop with exactly one line naming the key and the value as JSON, exit code 2, the key never shown",
            config_model,
            [
                "config-lenient",
                "unknown-keys-refused",
                "secrets-shown",
                "string-lists-lenient",
                "refusal-with-cause-line"
            ]
        ),
        case!(
            "gen.key-source-model",
            "1.7",
            Must,
            LAUNCHES,
            "generated launches (--api-key, STRATA_API_KEY and the file's api_key each absent, a key, a key inside whitespace, empty or whitespace alone; a free port or port 0) start where the 1.2/1.7 model says and open GET /v1/models to the first given source's stripped key alone (no key and the other sources' keys 401; no source given, open to all), with one ready line naming the real port; or, when the first given source strips to nothing, stop with one line saying the key is empty, exit code 2; no key ever shown",
            key_source_model,
            [
                "api-key-flag-ignored",
                "env-key-over-flag",
                "api-key-file-wins",
                "empty-key-ok",
                "ready-line-port-zero",
                "flag-key-refusals-as-text"
            ]
        ),
        case!(
            "gen.tool-turn-events-model",
            "6.2",
            Must,
            LAUNCHES,
            "generated tool turns (1 to 4 passes, the last repeating, each answering or writing echo, own-tool and unknown-name calls in any order, some ending inside a call; max_rounds 1 to 3) give the strata_mcp events the §6 model says, in order: starts as calls are written, call and result one after another with their round (an unknown name's with server null and 7.2c's error), skipped results after an own call or past the limit, limit, one id per call, and the finish reason (half of --gen-budget: each starts a server)",
            tool_turn_events_model,
            [
                "no-round-limit",
                "round-limit-off-by-one",
                "skipped-as-error",
                "unfinished-calls-run",
                "event-shape",
                "tool-calls-finish-stop",
                "own-tools-stop-mcp",
                "length-cut-calls-run",
                "unknown-tool-reworded",
                "rounds-from-zero",
                "call-event-unrouted",
                "start-event-unnamed",
                "limit-event-reshaped",
                "limit-finishes-length",
                "event-delta-not-empty",
                "calls-before-results"
            ]
        ),
        case!(
            "gen.result-text-model-feature-off",
            "7.4",
            Must,
            RESULTS_OFF,
            "the same generated results with mcp.image_results false give exactly the 7.1-7.3 event, no media, and the next pass's prompt grows by exactly the text's bytes (6.5)",
            result_text_model_feature_off,
            [
                "feature-off-leaks",
                "blob-mime-empty",
                "link-spaces-squeezed",
                "result-cap-counts-bytes",
                "errors-fail-request"
            ]
        ),
    ]
}

async fn request_model(ctx: Ctx) -> CheckResult {
    let http = ctx.http.clone();
    let baseline = requests::baseline(&http).await.map_err(crate::check::broken)?;
    property("requests", requests::requests(), requests::describe, move |request| {
        requests::check(http.clone(), baseline, request)
    })
    .await
}

async fn picture_route_model(ctx: Ctx) -> CheckResult {
    let (http, folder) = (ctx.http.clone(), ctx.cache_dir()?);
    let planted = picture_route::plant(&folder).map_err(crate::check::broken)?;
    picture_route::each_name_once(&http, &planted).await.map_err(|actual| CheckError::Fail {
        expected: "each planted name answered as the model says".into(),
        actual,
    })?;
    let check = move |request| picture_route::check(http.clone(), planted.clone(), request);
    crate::generate::covering_first(
        "picture-route",
        1,
        (picture_route::covering(), 8),
        picture_route::requests(),
        picture_route::describe,
        check,
    )
    .await
}

async fn tool_listing_model(ctx: Ctx) -> CheckResult {
    property_sharing("tool-listing", 4, tool_listing::listings(), tool_listing::describe, move |listing| {
        tool_listing::check(ctx.clone(), listing)
    })
    .await
}

async fn status_after_cut_turns_model(ctx: Ctx) -> CheckResult {
    with_fixture(None, |url| async move {
        property_sharing("status-cuts", 4, status::turns(), status::describe, move |turn| {
            let (ctx, url) = (ctx.clone(), url.clone());
            async move {
                let engine = json!({"delay_ms": 5, "restart_per_request": true,
                "script_sets": {status::WHOLE: [status::Turn::answer()]}});
                let config = json!({"mcp_servers": {"fake": {"url": url}}, "engine": engine});
                let server = ctx.start_running(&config, &turn.scripts(), &[]).await.map_err(|e| format!("{e:?}"))?;
                status::check(&server.http, turn).await
            }
        })
        .await
    })
    .await
}

async fn server_sources_model(ctx: Ctx) -> CheckResult {
    let token = Some(server_sources::TOKEN.to_string());
    with_fixture(token, |url| async move {
        // Port 1 (tcpmux): a privileged port no service of this kind listens on, so a launch never
        // reaches something there, whatever runs beside it.
        let dead = "http://127.0.0.1:1/mcp".to_string();
        property_sharing("sources", 4, server_sources::launches(), server_sources::describe, move |launch| {
            let (ctx, url, dead) = (ctx.clone(), url.clone(), dead.clone());
            async move {
                let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
                let mut extras = LaunchExtras::default();
                if let Some(file) = launch.file(&url, &dead) {
                    let path = dir.path().join("servers.json");
                    std::fs::write(&path, file.to_string()).map_err(|e| e.to_string())?;
                    extras.args = vec!["--mcp-config".into(), path.display().to_string()];
                }
                let probe = |http: crate::http::Http| async move {
                    let status = super::common::settled_mcp_status(&http, 20).await.map_err(|e| format!("{e:?}"))?;
                    let servers = status["servers"].as_array().cloned().unwrap_or_default();
                    Ok::<_, String>(
                        servers
                            .iter()
                            .map(|s| {
                                let text = |key: &str| s[key].as_str().unwrap_or_default().to_string();
                                (text("name"), text("status"))
                            })
                            .collect::<Vec<_>>(),
                    )
                };
                let file = ConfigFile::Bytes(launch.config(&url, &dead).to_string().into_bytes());
                let (run, shown) =
                    ctx.launch_probing(file, None, &extras, probe).await.map_err(|e| format!("{e:?}"))?;
                let Some(shown) = shown else {
                    return Err(format!("the server did not serve: exit {:?}, stderr {:?}", run.code, run.stderr));
                };
                server_sources::judge(&launch, &shown?)
            }
        })
        .await
    })
    .await
}

async fn pass_text_model(ctx: Ctx) -> CheckResult {
    with_fixture(None, |url| async move {
        property_sharing("pass-text", 4, pass_text::turns(), pass_text::describe, move |turn| {
            let (ctx, url) = (ctx.clone(), url.clone());
            async move {
                let config = json!({"mcp_servers": {"fake": {"url": url}}, "engine": {"restart_per_request": true}});
                let server = ctx.start_running(&config, &turn.scripts(), &[]).await.map_err(|e| format!("{e:?}"))?;
                let mut answers = Vec::new();
                for stream in [true, false] {
                    let body =
                        json!({"messages": [{"role": "user", "content": "go"}], "strata_mcp": true, "stream": stream});
                    let reply =
                        server.http.post_json(super::common::CHAT, &body).send().await.map_err(|e| e.to_string())?;
                    if reply.status != 200 {
                        return Err(format!("status {}: {}", reply.status, reply.text()));
                    }
                    answers.push(reply.text());
                }
                let streamed = crate::sse::EventStream::parse(&answers[0]).chunks;
                let whole: serde_json::Value =
                    serde_json::from_str(&answers[1]).map_err(|e| format!("the whole answer is not JSON: {e}"))?;
                pass_text::judge(&turn, &streamed, &whole)
            }
        })
        .await
    })
    .await
}

async fn stdio_entry_model(ctx: Ctx) -> CheckResult {
    let exe = crate::running::mediacheck_exe()?.display().to_string();
    property_sharing("stdio-entry", 4, stdio_entry::entries(), stdio_entry::describe, move |entry| {
        let (ctx, exe) = (ctx.clone(), exe.clone());
        async move {
            let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
            let (folder, dump) = (dir.path().join("cwd"), dir.path().join("dump"));
            std::fs::create_dir(&folder).map_err(|e| e.to_string())?;
            let config = stdio_entry::config(&entry, &dump, &folder, &exe);
            let [(shared, shared_value), (only, only_value)] = stdio_entry::SERVER_ENV;
            let env = [("STRATA_API_KEY", stdio_entry::SERVER_KEY), (shared, shared_value), (only, only_value)];
            let server = ctx.start_running(&config, &[], &env).await.map_err(|e| format!("{e:?}"))?;
            let (env_file, cwd_file) = (dump.with_extension("env"), dump.with_extension("cwd"));
            let started = std::time::Instant::now();
            loop {
                let mcp = server
                    .http
                    .get("/mcp")
                    .send()
                    .await
                    .map_err(|e| e.to_string())?
                    .json()
                    .map_err(|e| format!("{e:?}"))?;
                let done = mcp["servers"][0]["status"] != "starting" && cwd_file.exists();
                if done || started.elapsed() > std::time::Duration::from_secs(10) {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            let read = |file: &std::path::Path| {
                std::fs::read_to_string(file).map_err(|e| format!("the stdio server wrote no {}: {e}", file.display()))
            };
            let server_folder = server.working_dir().map_err(|e| format!("{e:?}"))?;
            stdio_entry::judge(&entry, &read(&env_file)?, &read(&cwd_file)?, &folder, &server_folder)
        }
    })
    .await
}

async fn config_model(ctx: Ctx) -> CheckResult {
    property_sharing("config", 1, config::configs(), config::describe, move |generated| {
        let ctx = ctx.clone();
        async move {
            let launch = ctx.launch(&generated.json()).await.map_err(|e| format!("{e:?}"))?;
            config::judge(&generated, launch.code, launch.health, &launch.stderr)
        }
    })
    .await
}

async fn key_source_model(ctx: Ctx) -> CheckResult {
    property_sharing("keys", 1, keys::launches(), keys::describe, move |launch| {
        let ctx = ctx.clone();
        async move {
            let extras = LaunchExtras {
                args: launch.args(),
                env: launch.env().map(|key| vec![("STRATA_API_KEY", key)]).unwrap_or_default(),
                // This process's own key, if it has one, never reaches the server.
                unset: vec!["STRATA_API_KEY"],
            };
            let file = ConfigFile::Bytes(launch.config().to_string().into_bytes());
            let port = launch.port_zero.then_some(0);
            let probe = |http: crate::http::Http| async move {
                let mut statuses = Vec::new();
                for key in keys::presented() {
                    let client = crate::http::Http::new(http.base(), key.map(str::to_string)).reporting_to(&http);
                    statuses.push(client.get("/v1/models").send().await.map_or(0, |reply| reply.status));
                }
                statuses
            };
            let (run, statuses) = ctx.launch_probing(file, port, &extras, probe).await.map_err(|e| format!("{e:?}"))?;
            keys::judge(&launch, run.code, run.health, &run.first_line, &run.stderr, statuses.as_deref())
        }
    })
    .await
}

async fn tool_turn_events_model(ctx: Ctx) -> CheckResult {
    with_fixture(None, |url| async move {
        property_sharing("events", 2, events::turns(), events::describe, move |turn| {
            let (ctx, url) = (ctx.clone(), url.clone());
            async move {
                let config = json!({"mcp_servers": {"fake": {"url": url}}, "mcp": {"max_rounds": turn.max_rounds}});
                let scripts: Vec<String> = turn.passes.iter().map(events::Pass::script).collect();
                let server = ctx.start_running(&config, &scripts, &[]).await.map_err(|e| format!("{e:?}"))?;
                let body = json!({"messages": [{"role": "user", "content": "go"}], "strata_mcp": true, "stream": true,
                "tools": [{"type": "function", "function": {"name": "lookup", "description": "Looks a word up.",
                    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}]});
                let reply =
                    server.http.post_json(super::common::CHAT, &body).send().await.map_err(|e| e.to_string())?;
                if reply.status != 200 {
                    return Err(format!("status {}: {}", reply.status, reply.text()));
                }
                let stream = crate::sse::EventStream::parse(&reply.text());
                events::judge(&turn, &stream.mcp_events(), stream.finish_reason())
            }
        })
        .await
    })
    .await
}

async fn concurrent_turns_model(ctx: Ctx) -> CheckResult {
    let (http, cache) = (ctx.http.clone(), ctx.cache_dir()?);
    property_sharing("bursts", 4, concurrency::bursts(), concurrency::describe, move |burst| {
        concurrency::check(http.clone(), cache.clone(), burst)
    })
    .await
}

async fn result_event_model(ctx: Ctx) -> CheckResult {
    result_model(ctx, results::Mode { image_results: true, vision: false }, "results").await
}

async fn result_text_model_feature_off(ctx: Ctx) -> CheckResult {
    result_model(ctx, results::Mode { image_results: false, vision: false }, "results-off").await
}

async fn tool_message_with_vision_model(ctx: Ctx) -> CheckResult {
    result_model(ctx, results::Mode { image_results: true, vision: true }, "results-vision").await
}

async fn result_model(ctx: Ctx, mode: results::Mode, salt: &'static str) -> CheckResult {
    let (http, stage, cache) = (ctx.http.clone(), ctx.stage()?.clone(), ctx.cache_dir()?);
    let empty_prompt = std::sync::Arc::new(tokio::sync::OnceCell::new());
    property(salt, results::results(), results::describe, move |result| {
        results::check(http.clone(), stage.clone(), cache.clone(), mode, empty_prompt.clone(), result)
    })
    .await
}

async fn lifting_model(ctx: Ctx) -> CheckResult {
    let http = ctx.http.clone();
    property("lifting", lifting::conversations(), lifting::describe, move |conversation| {
        lifting::check(http.clone(), conversation)
    })
    .await
}

/// The fixture MCP server over HTTP (asking for `Bearer <token>` when given), kept serving while `run`
/// runs with its URL.
pub(super) async fn with_fixture<F, Fut>(token: Option<String>, run: F) -> CheckResult
where
    F: FnOnce(String) -> Fut,
    Fut: std::future::Future<Output = CheckResult>,
{
    let fixture = fixtures::http::serve_http(fixtures::mcp_server::FixtureOptions::default(), 0, token)
        .await
        .map_err(|e| crate::check::broken(format!("the fixture MCP server: {e}")))?;
    let verdict = run(fixture.url.clone()).await;
    drop(fixture);
    verdict
}

#[cfg(test)]
mod tests {
    /// gen.lifting-model names only variants whose odds `generate::lifting::odds` checks.
    #[test]
    fn the_lifting_case_names_only_variants_with_checked_odds() {
        let case = super::cases().into_iter().find(|c| c.id == "gen.lifting-model").expect("the case");
        let unchecked: Vec<_> =
            case.broken_by.iter().filter(|v| !crate::generate::lifting::odds::VARIANTS.contains(v)).collect();
        assert!(unchecked.is_empty(), "add their needs to generate::lifting::odds: {unchecked:?}");
    }
}
