//! `gen.config-readback-model`: configuration × behaviour. Each launch of `generate::config_readback`
//! (every pair of its nine axes' values first, then draws) starts a server of its own, and what the
//! server then reports and does is read from outside and judged by that module's model.

use serde_json::json;

use super::case;
use crate::case::{Case, CheckResult};
use crate::context::Ctx;
use crate::generate::config_readback::{self, FOREIGN_HOST, KEY, LISTED_HOST, Launch, Seen, TRUSTED_ORIGIN};
use crate::generate::covering_first;
use crate::http::Http;
use crate::scenario::LAUNCHES;
use crate::target::{ConfigFile, LaunchExtras};

pub fn cases() -> Vec<Case> {
    vec![case!(
        "gen.config-readback-model",
        "1.6",
        Must,
        LAUNCHES,
        "launches over nine axes of the configuration (engine.max_context absent, 1, 70001 or 200000.0; model; vision absent, {}, geometry on the cpu or with its own pixel bounds; the key from nowhere, the file, --api-key or STRATA_API_KEY; a Host named nowhere, in an empty list, in allowed_hosts or in STRATA_ALLOWED_HOSTS; the fixture entry plain, with \"type\" http or streamable-http, or \"disabled\": false; a second entry absent, disabled, \"disabled\": false or with \"type\": \"stdio\" beside its url; mcp settings; trusted_origins), every pair of two axes' values in one launch at least on every run, then drawn ones: /health, /v1/models, /v1/status's vision, GET /mcp's names, transports and settings, and the Host and Origin checks with their converses under a key, are what the configuration says (an eighth of --gen-budget drawn beside the covering launches: each starts a server)",
        config_readback_model,
        config_readback::VARIANTS
    )]
}

async fn config_readback_model(ctx: Ctx) -> CheckResult {
    super::generated::with_fixture(None, |url| async move {
        let check = move |launch: Launch| {
            let (ctx, url) = (ctx.clone(), url.clone());
            async move {
                let env = launch.env();
                let extras = LaunchExtras {
                    args: launch.args(),
                    env: env.iter().map(|(name, value)| (*name, value.clone())).collect(),
                    unset: vec!["STRATA_API_KEY", "STRATA_ALLOWED_HOSTS"],
                };
                let file = ConfigFile::Bytes(launch.config(&url).to_string().into_bytes());
                let keyed = launch.keyed();
                let probe = |http: Http| async move { read(&http, keyed).await };
                let (run, seen) = ctx.launch_probing(file, None, &extras, probe).await.map_err(|e| format!("{e:?}"))?;
                let Some(seen) = seen else {
                    return Err(format!("the server did not serve: exit {:?}, stderr {:?}", run.code, run.stderr));
                };
                config_readback::judge(&launch, &seen?)
            }
        };
        covering_first(
            "config-readback",
            8,
            (config_readback::covering(), 1),
            config_readback::launches(),
            config_readback::describe,
            check,
        )
        .await
    })
    .await
}

/// Everything the model judges, read from the server `http` reaches (without a key; `keyed`: the
/// requests that need one send [`KEY`]).
async fn read(http: &Http, keyed: bool) -> Result<Seen, String> {
    let keyed_http = Http::new(http.base(), keyed.then(|| KEY.to_string()));
    let fail = |what: &str, e: &dyn std::fmt::Debug| format!("{what}: {e:?}");
    let json_of = |reply: crate::http::Reply, what: &str| reply.json().map_err(|e| fail(what, &e));
    let health = json_of(http.get("/health").send().await.map_err(|e| fail("GET /health", &e))?, "GET /health")?;
    let models = keyed_http.get("/v1/models").send().await.map_err(|e| fail("GET /v1/models", &e))?;
    let models = json_of(models, "GET /v1/models")?;
    let without = http.get("/v1/models").without_key().send().await.map_err(|e| fail("GET /v1/models", &e))?;
    let status = keyed_http.get("/v1/status").send().await.map_err(|e| fail("GET /v1/status", &e))?;
    let status = json_of(status, "GET /v1/status")?;
    let mcp = super::common::settled_mcp_status(&keyed_http, 20).await.map_err(|e| fail("GET /mcp", &e))?;
    let host = |name: &'static str| {
        let keyed_http = keyed_http.clone();
        async move {
            let reply = keyed_http.get("/v1/models").header("host", name.as_bytes()).send().await;
            reply.map(|r| r.status).map_err(|e| fail(&format!("GET /v1/models, Host {name}"), &e))
        }
    };
    let body = json!({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1, "stream": false});
    let origin = |origin: &'static str| {
        let (keyed_http, body) = (keyed_http.clone(), body.clone());
        async move {
            let reply =
                keyed_http.post_json("/v1/chat/completions", &body).header("origin", origin.as_bytes()).send().await;
            reply.map(|r| r.status).map_err(|e| fail(&format!("POST /v1/chat/completions, Origin {origin}"), &e))
        }
    };
    Ok(Seen {
        health,
        models,
        models_without_key: without.status,
        status,
        mcp,
        listed_host: host(LISTED_HOST).await?,
        foreign_host: host(FOREIGN_HOST).await?,
        trusted_origin: origin(TRUSTED_ORIGIN).await?,
        foreign_origin: origin("http://gen-foreign-origin.example").await?,
    })
}
