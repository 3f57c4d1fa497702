//! SPEC 3.1b–f and 3.2: what `/health` and `/v1/models` say, against the configuration, both ways. Four
//! servers of the case's own — a vision encoder or none, a key or none — each read whole, `/health` and
//! its alias `/api/health` alike: `images` is
//! true exactly when an encoder is configured, `api_key` exactly when a key is required, `service` is
//! `reference-server`, and `/v1/models` lists `["text", "image"]` input with an encoder and `["text"]`
//! without.

use serde_json::json;

use super::case;
use crate::case::{Case, CheckResult, expect_eq};
use crate::context::Ctx;
use crate::scenario::LAUNCHES;

/// The key the keyed servers require.
const KEY: &str = "health-values-k3y";

pub fn cases() -> Vec<Case> {
    vec![case!(
        "health.values-follow-the-configuration",
        "3.1",
        Must,
        LAUNCHES,
        "on four servers (a vision encoder or none, a key or none), /health and /api/health say images true exactly with an encoder, api_key true exactly with a key, service reference-server, and /v1/models lists text and image input with an encoder, text alone without",
        values,
        ["health-flags-fixed", "health-flags-flipped", "health-service-strata", "models-image-always"]
    )]
}

async fn values(ctx: Ctx) -> CheckResult {
    for (encoder, keyed) in [(false, false), (true, false), (false, true), (true, true)] {
        let mut config = json!({});
        if encoder {
            config["vision"] = json!({"backend": "geometry"});
        }
        if keyed {
            config["api_key"] = json!(KEY);
        }
        let server = ctx.start_running(&config, &[], &[]).await?;
        let which = format!("(encoder {encoder}, key {keyed})");
        for route in ["/health", "/api/health"] {
            let health = server.http.get(route).without_key().send().await?.json()?;
            expect_eq(&format!("{route} images {which}"), &json!(encoder), &health["images"])?;
            expect_eq(&format!("{route} api_key {which}"), &json!(keyed), &health["api_key"])?;
            expect_eq(&format!("{route} service {which}"), &json!("reference-server"), &health["service"])?;
        }
        let models = server.http.get("/v1/models").send().await?.json()?;
        let wanted = if encoder { json!(["text", "image"]) } else { json!(["text"]) };
        let listed = &models["data"][0]["architecture"]["input_modalities"];
        expect_eq(&format!("/v1/models input_modalities {which}"), &wanted, listed)?;
    }
    Ok(())
}
