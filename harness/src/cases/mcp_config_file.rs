//! SPEC 1.6's third source of MCP servers: `--mcp-config FILE`, read after the configuration's
//! `mcp_servers` and `mcpServers`, holding `{"mcpServers": {…}}` or `{"mcp_servers": {…}}`; a later name
//! replaces an earlier one and `"disabled": true` removes it. A file that is not JSON, or holds neither
//! key, stops startup with one line naming `--mcp-config` and the path, exit code 2.

use serde_json::{Value, json};

use super::case;
use crate::case::{Case, CheckError, CheckResult, expect, expect_eq};
use crate::check::broken;
use crate::context::Ctx;
use crate::scenario::LAUNCHES;

pub fn cases() -> Vec<Case> {
    vec![case!(
        "mcp.servers-from-mcp-config-file",
        "1.6",
        Must,
        LAUNCHES,
        "beside mcp_servers {fake, kept}, --mcp-config FILE with {\"mcpServers\": {extra, fake: disabled}} gives extra and kept, and with {\"mcp_servers\": {third}} fake, kept and third; a FILE that is not JSON or holds neither key stops startup with one line naming --mcp-config and the path, exit 2",
        servers_from_file,
        ["mcp-config-ignored"]
    )]
}

/// Launches with `config` and `--mcp-config` a file holding `file`; the names `GET /mcp` lists once
/// settled, or the launch when it did not serve.
async fn launch_with_file(
    ctx: &Ctx,
    config: &Value,
    file: &[u8],
) -> Result<(crate::target::Launch, Option<Vec<String>>, std::path::PathBuf), CheckError> {
    let dir = tempfile::tempdir().map_err(|e| broken(format!("a temp folder: {e}")))?;
    let path = dir.path().join("servers.json");
    std::fs::write(&path, file).map_err(|e| broken(format!("{}: {e}", path.display())))?;
    let extras = crate::target::LaunchExtras {
        args: vec!["--mcp-config".into(), path.display().to_string()],
        ..Default::default()
    };
    let probe = |http: crate::http::Http| async move {
        let status = super::common::settled_mcp_status(&http, 20).await.ok()?;
        let mut names: Vec<String> =
            status["servers"].as_array()?.iter().filter_map(|s| s["name"].as_str().map(str::to_string)).collect();
        names.sort();
        Some(names)
    };
    let config_file = crate::target::ConfigFile::Bytes(config.to_string().into_bytes());
    let (launch, names) = ctx.launch_probing(config_file, None, &extras, probe).await?;
    Ok((launch, names.flatten(), path))
}

async fn servers_from_file(ctx: Ctx) -> CheckResult {
    let fixture = fixtures::http::serve_http(fixtures::mcp_server::FixtureOptions::default(), 0, None)
        .await
        .map_err(|e| broken(format!("the fixture MCP server: {e}")))?;
    let url = json!({"url": fixture.url});
    let config = json!({"mcp_servers": {"fake": url, "kept": url}});
    for (file, wanted) in [
        (json!({"mcpServers": {"extra": url, "fake": {"disabled": true}}}), vec!["extra", "kept"]),
        (json!({"mcp_servers": {"third": url}}), vec!["fake", "kept", "third"]),
    ] {
        let (launch, names, _) = launch_with_file(&ctx, &config, file.to_string().as_bytes()).await?;
        expect_eq(
            &format!("the MCP servers of mcp_servers {{fake, kept}} and --mcp-config {file}"),
            Some(wanted.iter().map(|n| n.to_string()).collect::<Vec<_>>()),
            names,
        )
        .map_err(|e| match e {
            CheckError::Fail { expected, actual } => CheckError::Fail {
                expected,
                actual: format!("{actual} (exit {:?}: {})", launch.code, launch.stderr.trim()),
            },
            other => other,
        })?;
    }
    for file in [&b"{not json"[..], br#"{"servers": {}}"#] {
        let (launch, _, path) = launch_with_file(&ctx, &config, file).await?;
        let lines: Vec<&str> = launch.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        let shown = path.display().to_string();
        expect(
            launch.code == Some(2)
                && matches!(lines.as_slice(), [line] if line.contains("--mcp-config") && line.contains(&shown)),
            format!(
                "--mcp-config holding {:?}: exit 2 and one line naming --mcp-config and {shown}",
                String::from_utf8_lossy(file)
            ),
            format!("exit {:?}, stderr {lines:?}", launch.code),
        )?;
    }
    Ok(())
}
