//! The page cases' browser visit: one width, a browser on the page through the recording proxy with
//! the key entered ([`Visit`], [`open`]), once at 768 px ([`at_768`]) or on a walk (`page_walk`), and
//! the setups the page cases share (the page's server with its scripts, the turn with two pictures and
//! more).

use futures::future::BoxFuture;

use super::common::answer;
use crate::browser::Session;
use crate::browser::driver::{self, Driver};
use crate::browser::page::{enter_key, idle, loaded_pictures, reload, sel, send, wait_until};
use crate::browser::proxy::{Framing, Proxy};
use crate::case::{CheckError, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::scenario::{HARNESS_KEY, Setup};

/// How long a reloaded page (loopback, pictures from the cache) may take to show what it had: the
/// reference takes well under a second; a page that never shows it fails here, not at 30 s.
pub(super) const AFTER_RELOAD_S: u64 = 15;

/// Two 640×360 pictures (seeds 1 and 2), a tool with a very long name, and a 6,000-character result.
pub(super) fn pictures_and_more() -> String {
    let long = format!("{}__{}", crate::scenario::FIXTURE_SERVER, fixtures::tools::LONG_NAME);
    fixtures::scripts::calls_script(&[
        ("fake__picture", &[("width", "640"), ("height", "360"), ("count", "2")]),
        (&long[..64], &[]),
        ("fake__big", &[("n", "6000")]),
    ])
}

pub(super) fn page(scripts: Vec<String>) -> Setup {
    Setup::mcp(Some(true)).with_key().scripts(scripts)
}

/// Two pictures and more (see [`pictures_and_more`]), then an answer.
pub(super) fn pictures() -> Setup {
    page(vec![pictures_and_more(), answer("Here are the pictures, and more.")])
}

/// Text in the echoed argument and its result: non-ASCII, so a page that mangles it shows.
pub(super) const ECHOED: &str = "Grüße, 日本 ECHO-CANARY";

/// One width: a browser on the page through the recording proxy, the key entered.
pub(super) struct Visit<'a> {
    pub(super) ctx: &'a Ctx,
    pub(super) session: Session,
    pub(super) proxy: Proxy,
}

impl Visit<'_> {
    pub(super) fn client(&self) -> &fantoccini::Client {
        &self.session.client
    }

    /// Sends a message and waits for the turn to end with `pictures` pictures shown.
    pub(super) async fn turn_with_pictures(&self, text: &str, pictures: usize) -> CheckResult {
        send(self.client(), text).await?;
        let shown = format!("{} === {pictures} && {}", loaded_pictures(), idle());
        wait_until(self.client(), &shown, 60, &format!("{pictures} pictures shown and the turn over")).await
    }

    /// Deletes the first of the two pictures the page fetched from the cache, empties the HTTP cache,
    /// reloads, and waits for its note beside the other picture; the two names.
    pub(super) async fn first_picture_gone(&self) -> Result<Vec<String>, CheckError> {
        let names = self.media_names();
        expect_eq("pictures the page fetched", 2, names.len())?;
        let removed = std::fs::remove_file(self.ctx.cache_dir()?.join(&names[0]));
        expect(removed.is_ok(), "the picture deleted from the cache", format!("{removed:?}"))?;
        self.session.clear_http_cache().await?;
        reload(self.client()).await?;
        wait_until(
            self.client(),
            &gone_settled(),
            AFTER_RELOAD_S,
            "one note for the gone picture and the other picture shown",
        )
        .await?;
        Ok(names)
    }

    /// The names of the pictures the page asked for, in order, without repeats.
    pub(super) fn media_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for request in self.proxy.log() {
            let Some(name) = request.target.strip_prefix("/tool-media/") else { continue };
            let name = name.split('?').next().unwrap_or_default().to_string();
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }
}

/// A JS expression: one gone-picture note and one picture shown.
pub(super) fn gone_settled() -> String {
    format!("document.querySelectorAll('{}').length === 1 && {} === 1", sel("picture-gone"), loaded_pictures())
}

pub(super) type WidthCheck = for<'a> fn(&'a Visit<'a>) -> BoxFuture<'a, CheckResult>;

pub(super) async fn open<'a>(
    ctx: &'a Ctx,
    driver: &Driver,
    case: &'static str,
    width: u32,
    base: &str,
    framing: Framing,
) -> Result<Visit<'a>, CheckError> {
    let proxy = Proxy::start_framing(base, framing).await?;
    // What the server answers the page is held to the wire monitor's invariants, like the case's own.
    proxy.watch(&ctx.http);
    let session = driver.session(case, width).await?;
    let loaded = session.client.goto(&format!("{}/", proxy.url)).await;
    if let Err(error) = loaded {
        session.close().await;
        return Err(CheckError::Fail { expected: "the page to load".into(), actual: error.to_string() });
    }
    let visit = Visit { ctx, session, proxy };
    if let Err(error) = enter_key(visit.client(), HARNESS_KEY).await {
        visit.session.close().await;
        return Err(error);
    }
    Ok(visit)
}

pub(super) fn at_width(error: CheckError, width: u32) -> CheckError {
    match error {
        CheckError::Fail { expected, actual } => {
            CheckError::Fail { expected: format!("at {width} px: {expected}"), actual }
        }
        not_run => not_run,
    }
}

/// Runs `check` once, at 768 px, in a fresh browser on the scenario's server (a screenshot when it fails).
pub(super) async fn at_768(ctx: &Ctx, case: &'static str, check: WidthCheck) -> CheckResult {
    at_768_framed(ctx, case, Framing::AsServed, check).await
}

/// [`at_768`], with the proxy handing event streams to the page as `framing` says.
pub(super) async fn at_768_framed(ctx: &Ctx, case: &'static str, framing: Framing, check: WidthCheck) -> CheckResult {
    let driver = driver::driver().await?;
    let visit = open(ctx, &driver, case, 768, ctx.http.base(), framing).await?;
    let outcome = check(&visit).await;
    if outcome.is_err() {
        visit.session.screenshot("failed").await;
    }
    visit.session.close().await;
    outcome
}
