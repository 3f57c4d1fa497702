//! SPEC 13.8–13.12 in a real browser: accessibility, target size, cut text, readable text, and
//! pictures' aspect ratio and text alternatives, at 320, 390, 640, 768 and 1280 px. Each case takes the
//! page through one tour — a turn with two pictures, a tool with a very long name, a 6,000-character
//! result and a failed call; every tool block opened; a picture deleted from the cache and the page
//! reloaded; a slow call running, then stopped — and checks its one rule in each state, with a
//! screenshot of each (`<case>/<width>-<state>.png`).

use futures::future::BoxFuture;

use super::common::{answer, call};
use super::page_in_browser::{Visit, at_every_width, page};
use crate::browser::page::{idle, open_every_tool, sel, send, stop as click_stop, wait_until};
use crate::browser::rules;
use crate::case::{Case, CheckError, CheckResult};
use crate::cases::case;
use crate::context::Ctx;
use crate::scenario::{Scenario, own};

/// The states of the tour, in order (the screenshots' step names).
pub const STATES: [&str; 5] = ["collapsed", "expanded", "picture-gone", "running", "stopped"];

/// Two 640×360 pictures, a tool with a very long name, a 6,000-character result and a call that fails.
fn everything() -> String {
    let long = format!("{}__{}", crate::scenario::FIXTURE_SERVER, fixtures::tools::LONG_NAME);
    fixtures::scripts::calls_script(&[
        ("fake__picture", &[("width", "640"), ("height", "360"), ("count", "2")]),
        (&long[..64], &[]),
        ("fake__big", &[("n", "6000")]),
        ("fake__fail", &[]),
    ])
}

const TOUR: Scenario = own("page-layout", || {
    page(vec![
        everything(),
        answer("Here are the pictures, a long name, a long result and a failure."),
        call("slow_picture", &[("seconds", "60")]),
        answer("Done."),
    ])
});

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "page.layout.accessible",
            "13.8",
            Must,
            TOUR,
            "at every width, in every state of the tour: no serious or critical axe-core violation of the WCAG 2.0-2.2 A/AA rules",
            accessible,
            ["page-low-contrast-note"]
        ),
        case!(
            "page.layout.targets-large-enough",
            "13.9",
            Must,
            TOUR,
            "at every width, in every state of the tour: Send, Stop, Settings, each tool toggle and each download at least 24 x 24 px or spaced as WCAG 2.5.8 allows",
            targets,
            ["page-small-stop"]
        ),
        case!(
            "page.layout.no-cut-text",
            "13.10",
            Must,
            TOUR,
            "at every width, in every state of the tour: tool names, results and the gone note never clipped or cut with an ellipsis",
            no_cut_text,
            ["page-names-cut"]
        ),
        case!(
            "page.layout.readable-text",
            "13.11",
            Must,
            TOUR,
            "at every width, in every state of the tour: no visible text under 12 px",
            readable_text,
            ["page-tiny-text"]
        ),
        case!(
            "page.layout.pictures-true-and-described",
            "13.12",
            Must,
            TOUR,
            "at every width, in every state of the tour: each picture at its own aspect ratio (within 1 %) and with a text alternative",
            pictures,
            ["page-stretched-preview", "page-picture-without-alt"]
        ),
    ]
}

/// A rule of 13.8–13.12, checked at one moment.
#[derive(Clone, Copy)]
enum Rule {
    Accessible,
    Targets,
    NoCutText,
    ReadableText,
    Pictures,
}

impl Rule {
    async fn holds(self, client: &fantoccini::Client) -> CheckResult {
        match self {
            Rule::Accessible => rules::accessible(client).await,
            Rule::Targets => rules::targets_large_enough(client).await,
            Rule::NoCutText => rules::no_cut_text(client).await,
            Rule::ReadableText => rules::readable_text(client).await,
            Rule::Pictures => rules::pictures_true_and_described(client).await,
        }
    }
}

/// Screenshots this state and checks the rule in it.
async fn in_state(visit: &Visit<'_>, rule: Rule, state: &str) -> CheckResult {
    visit.session.screenshot(state).await;
    rule.holds(visit.client()).await.map_err(|error| match error {
        CheckError::Fail { expected, actual } => CheckError::Fail { expected: format!("{state}: {expected}"), actual },
        not_run => not_run,
    })
}

/// The tour, with `rule` checked in each of [`STATES`].
async fn tour(visit: &Visit<'_>, rule: Rule) -> CheckResult {
    let client = visit.client();
    visit.turn_with_pictures("Show me everything", 2).await?;
    in_state(visit, rule, STATES[0]).await?;

    open_every_tool(client).await?;
    let opened = format!(
        "[...document.querySelectorAll('{}')].every(t => t.querySelector('{}'))",
        sel("tool"),
        sel("tool-result")
    );
    wait_until(client, &opened, 5, "a result in every opened tool block").await?;
    in_state(visit, rule, STATES[1]).await?;

    visit.first_picture_gone().await?;
    in_state(visit, rule, STATES[2]).await?;

    send(client, "Take your time").await?;
    let running = format!("document.querySelector('{}[data-state=\"running\"]')", sel("tool"));
    wait_until(client, &running, 30, "a running call").await?;
    in_state(visit, rule, STATES[3]).await?;
    click_stop(client).await?;
    let stopped = format!("{} && document.querySelector('{}[data-state=\"skipped\"]')", idle(), sel("tool"));
    wait_until(client, &stopped, 10, "the call marked Not run and Stop gone").await?;
    in_state(visit, rule, STATES[4]).await
}

/// `async fn $case(ctx)`: the case `$id`, the tour with `$rule` at every width.
macro_rules! tour_cases {
    ($($case:ident = $id:literal, $rule:ident;)*) => {
        $(async fn $case(ctx: Ctx) -> CheckResult {
            fn at<'a>(visit: &'a Visit<'a>) -> BoxFuture<'a, CheckResult> {
                Box::pin(tour(visit, Rule::$rule))
            }
            at_every_width(&ctx, $id, at).await
        })*
    };
}

tour_cases! {
    accessible = "page.layout.accessible", Accessible;
    targets = "page.layout.targets-large-enough", Targets;
    no_cut_text = "page.layout.no-cut-text", NoCutText;
    readable_text = "page.layout.readable-text", ReadableText;
    pictures = "page.layout.pictures-true-and-described", Pictures;
}
