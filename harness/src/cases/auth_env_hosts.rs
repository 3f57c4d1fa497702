//! SPEC 2.5's second list of allowed hosts: `STRATA_ALLOWED_HOSTS`, comma-separated (whitespace around
//! a name and empty entries ignored), adds to the file's `allowed_hosts`. Without a key, a server
//! started with `allowed_hosts: ["file.test"]` and `STRATA_ALLOWED_HOSTS=" env-one.test ,, Other.Test ,"`
//! serves a Host of each of the three names (any case, any port) and refuses one that only resembles
//! them.

use serde_json::json;

use super::case;
use crate::case::{Case, CheckResult, expect_eq};
use crate::context::Ctx;
use crate::scenario::LAUNCHES;

/// The environment's list, padded and with empty entries, as a shell script might write it.
const ENV_HOSTS: &str = " env-one.test ,, Other.Test ,";

pub fn cases() -> Vec<Case> {
    vec![case!(
        "auth.allowed-hosts-from-the-environment",
        "2.5",
        Must,
        LAUNCHES,
        "without a key, STRATA_ALLOWED_HOSTS=\" env-one.test ,, Other.Test ,\" beside allowed_hosts [\"file.test\"]: a Host of env-one.test, ENV-ONE.TEST, other.test or file.test (with the port) is served; env-one.test.evil.example, one-env.test and an empty name's neighbour `.test` are 403",
        env_hosts,
        // The last breaks 2.8 only on this server of the case's own: the wire monitor sees its answers.
        ["env-hosts-ignored", "env-hosts-replace-file", "env-host-refusals-as-text", "env-hosts-untrimmed"]
    )]
}

async fn env_hosts(ctx: Ctx) -> CheckResult {
    let config = json!({"allowed_hosts": ["file.test"]});
    let server = ctx.start_running(&config, &[], &[("STRATA_ALLOWED_HOSTS", ENV_HOSTS)]).await?;
    let port = server.http.base().rsplit(':').next().unwrap_or_default().to_string();
    for (host, status) in [
        (format!("env-one.test:{port}"), 200),
        ("ENV-ONE.TEST".to_string(), 200),
        (format!("other.test:{port}"), 200),
        (format!("file.test:{port}"), 200),
        (format!("env-one.test.evil.example:{port}"), 403),
        (format!("one-env.test:{port}"), 403),
        (format!(".test:{port}"), 403),
    ] {
        let reply = server.http.get("/v1/models").header("host", host.as_bytes()).send().await?;
        expect_eq(&format!("status with Host: {host}"), status, reply.status)?;
    }
    Ok(())
}
