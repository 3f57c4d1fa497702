//! SPEC 13.5 and 13.8–13.12 in a real browser: fitting the width, accessibility, target size, cut
//! text, readable text, and pictures' aspect ratio and text alternatives, at 320, 390, 640, 768 and
//! 1280 px. The page is taken through one tour — a turn with two pictures, a tool with a very long
//! name, a 6,000-character result and a failed call; every tool block opened; a picture deleted from
//! the cache and the page reloaded; a slow call running, then stopped — once for all six cases (they
//! share one server): in each state every case's rule is checked, and each case then reads its own
//! verdicts. Screenshots of each state (`<case>/<width>-<state>.png`) are kept for every case.

use futures::future::BoxFuture;

use super::common::{answer, call};
use super::page_visit::{Visit, page};
use super::page_walk::{Verdicts, Walk, judged};
use crate::browser::layout::fits;
use crate::browser::page::{idle, open_every_tool, sel, send, stop as click_stop, wait_until};
use crate::browser::rules;
use crate::case::{Case, CheckResult};
use crate::cases::case;
use crate::context::Ctx;
use crate::scenario::{Reach, Scenario, Serving};

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

/// One server for the six cases: the first walks the tour (restarting it for each width), the others
/// read what it found.
const TOUR: Scenario = Scenario {
    name: "page-layout",
    build: || {
        page(vec![
            everything(),
            answer("Here are the pictures, a long name, a long result and a failure."),
            call("slow_picture", &[("seconds", "60")]),
            answer("Done."),
        ])
    },
    serving: Serving::Shared(Reach::Configured),
};

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "page.fits-every-width",
            "13.5",
            Must,
            TOUR,
            "at every width, in every state of the tour: the document is never wider than the viewport and every picture, tool block, name and result stays inside its bubble",
            fits_every_width,
            ["page-overflows"]
        ),
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

/// A rule of 13.5 and 13.8–13.12, checked at one moment.
#[derive(Clone, Copy)]
enum Rule {
    Fits,
    Accessible,
    Targets,
    NoCutText,
    ReadableText,
    Pictures,
}

/// Every rule, in the order the tour checks them.
const RULES: [Rule; 6] =
    [Rule::Fits, Rule::Accessible, Rule::Targets, Rule::NoCutText, Rule::ReadableText, Rule::Pictures];

impl Rule {
    /// The case that reads this rule.
    fn case(self) -> &'static str {
        match self {
            Rule::Fits => "page.fits-every-width",
            Rule::Accessible => "page.layout.accessible",
            Rule::Targets => "page.layout.targets-large-enough",
            Rule::NoCutText => "page.layout.no-cut-text",
            Rule::ReadableText => "page.layout.readable-text",
            Rule::Pictures => "page.layout.pictures-true-and-described",
        }
    }

    async fn holds(self, visit: &Visit<'_>) -> CheckResult {
        let client = visit.client();
        match self {
            Rule::Fits => fits(client, visit.session.width).await,
            Rule::Accessible => rules::accessible(client).await,
            Rule::Targets => rules::targets_large_enough(client).await,
            Rule::NoCutText => rules::no_cut_text(client).await,
            Rule::ReadableText => rules::readable_text(client).await,
            Rule::Pictures => rules::pictures_true_and_described(client).await,
        }
    }
}

/// The tour the six cases share.
const THE_TOUR: Walk = Walk { name: "page.layout tour", steps: tour_steps };

/// Screenshots `state` and checks every open case's rule in it.
async fn in_state(visit: &Visit<'_>, verdicts: &mut Verdicts, state: &'static str) {
    visit.session.screenshot(state).await;
    for rule in RULES {
        verdicts.check(rule.case(), state, || rule.holds(visit)).await;
    }
}

fn tour_steps<'a>(visit: &'a Visit<'a>, verdicts: &'a mut Verdicts) -> BoxFuture<'a, CheckResult> {
    Box::pin(tour(visit, verdicts))
}

/// The tour at one width, every open case's rule checked in each of [`STATES`].
async fn tour(visit: &Visit<'_>, verdicts: &mut Verdicts) -> CheckResult {
    let client = visit.client();
    visit.turn_with_pictures("Show me everything", 2).await?;
    in_state(visit, verdicts, STATES[0]).await;

    open_every_tool(client).await?;
    let opened = format!(
        "[...document.querySelectorAll('{}')].every(t => t.querySelector('{}'))",
        sel("tool"),
        sel("tool-result")
    );
    wait_until(client, &opened, 5, "a result in every opened tool block").await?;
    in_state(visit, verdicts, STATES[1]).await;

    visit.first_picture_gone().await?;
    in_state(visit, verdicts, STATES[2]).await;

    send(client, "Take your time").await?;
    let running = format!("document.querySelector('{}[data-state=\"running\"]')", sel("tool"));
    wait_until(client, &running, 30, "a running call").await?;
    in_state(visit, verdicts, STATES[3]).await;
    click_stop(client).await?;
    let stopped = format!("{} && document.querySelector('{}[data-state=\"skipped\"]')", idle(), sel("tool"));
    wait_until(client, &stopped, 10, "the call marked Not run and Stop gone").await?;
    in_state(visit, verdicts, STATES[4]).await;
    Ok(())
}

/// `async fn $case(ctx)`: the case `$id`, its rule read in each state of the shared tour.
macro_rules! tour_cases {
    ($($case:ident = $rule:ident;)*) => {
        $(async fn $case(ctx: Ctx) -> CheckResult {
            judged(&ctx, &THE_TOUR, Rule::$rule.case(), STATES.len()).await
        })*
    };
}

tour_cases! {
    fits_every_width = Fits;
    accessible = Accessible;
    targets = Targets;
    no_cut_text = NoCutText;
    readable_text = ReadableText;
    pictures = Pictures;
}
