//! The HTML report as a reader gets it: written by `report::html` for a run with every outcome, opened
//! from disk in headless Chromium (the page cases' browser) — every case listed, the hostile text a
//! server sent shown and never run, the outcome filter hiding and showing cases and sections, and
//! axe-core finding no violation at all (every rule, every impact). A screenshot of the page is left
//! in the target folder (`report-html/`) for a person to look at.

use fantoccini::Locator;
use harness::browser::driver;
use harness::browser::page::js;
use harness::browser::rules::axe_violations;
use harness::case::Level;
use harness::http::Exchange;
use harness::report::html::html;
use harness::report::replay::RunFacts;
use harness::runner::{Outcome, Verdict};
use harness::target::Target;
use serde_json::{Value, json};

/// What a hostile server might send back: it must be shown as text, never become an element.
const HOSTILE: &str = "<img src=x onerror=\"window.pwned = 1\">";

fn verdict(id: &'static str, clause: &'static str, level: Level, outcome: Outcome) -> Verdict {
    Verdict {
        id,
        clause,
        level,
        description: "what the case checks",
        scenario: "basic",
        outcome,
        expected: matches!(outcome, Outcome::Fail | Outcome::Warn).then(|| "a JSON 404".into()),
        actual: match outcome {
            Outcome::Pass => None,
            Outcome::NotRun => Some("needs a server the harness starts".into()),
            _ => Some(format!("a body of {HOSTILE} & \"quotes\"")),
        },
        transcript: Vec::new(),
        ms: 12,
    }
}

fn run() -> Vec<Verdict> {
    let mut failed = verdict("errors.json-404", "3.4", Level::Must, Outcome::Fail);
    failed.transcript = vec![Exchange {
        request: "GET /no/such/route".into(),
        status: 404,
        headers: vec![("content-type".into(), "text/html".into())],
        body: HOSTILE.into(),
    }];
    let mut generated = verdict("gen.lifting-model", "11.2", Level::Must, Outcome::Fail);
    generated.actual = Some(format!(
        "prompt tokens grew by 7, the model says 9\n{}\nuser: {HOSTILE}",
        harness::generate::SHRUNK_HEADING
    ));
    vec![
        verdict("health.shape", "3.1", Level::Must, Outcome::Pass),
        failed,
        verdict("tool-media.etag", "9.4", Level::Must, Outcome::Pass),
        generated,
        verdict("lift.scan-is-linear", "11.6", Level::Should, Outcome::Warn),
        verdict("page.fits-every-width", "13.5", Level::Must, Outcome::NotRun),
        verdict("page.layout.accessible", "13.8", Level::Must, Outcome::Pass),
    ]
}

/// The ids of the cases the page shows now.
async fn shown(client: &fantoccini::Client) -> Vec<String> {
    let ids = js(client, "return [...document.querySelectorAll('.case')].filter(e => e.getClientRects().length > 0).map(e => e.id.slice(5));")
        .await
        .expect("the cases read");
    serde_json::from_value(ids).expect("a list of ids")
}

async fn click(client: &fantoccini::Client, css: &str) {
    client.find(Locator::Css(css)).await.expect("the checkbox").click().await.expect("clicked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_html_report_lists_every_case_filters_by_outcome_and_has_no_accessibility_violation() {
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-html");
    let _ = std::fs::remove_dir_all(&out);
    let shots = out.join("screenshots").join("page.layout.accessible");
    std::fs::create_dir_all(&shots).expect("a screenshots folder");
    for width in [320, 768] {
        let png = fixtures::images::picture(fixtures::images::PictureFormat::Png, width / 2, 200, width);
        std::fs::write(shots.join(format!("{width}-collapsed.png")), png).expect("a screenshot");
    }
    let verdicts = run();
    let target = Target::Spawn { template: "./my-server --config {config} --port {port} {scripts}".into() };
    let facts = RunFacts::new(&target, 0x5eed, 48, Some(out.join("screenshots")));
    let page = out.join("report.html");
    std::fs::write(&page, html(&facts, &verdicts, None)).expect("the report written");

    harness::browser::run_started();
    let session = driver::driver().await.expect("chromedriver (ci/install-browser.sh)");
    let session = session.session("report-html", 1280).await.expect("a browser");
    let client = &session.client;
    client.goto(&format!("file://{}", page.display())).await.expect("the report opened");

    let all: Vec<String> = verdicts.iter().map(|v| v.id.to_string()).collect();
    assert_eq!(shown(client).await, all, "every case, in order");
    let hostile = "return [document.querySelectorAll('img[src=x]').length, window.pwned === undefined, \
                   document.body.innerText.includes('window.pwned = 1')];";
    assert_eq!(js(client, hostile).await.expect("read"), json!([0, true, true]), "the hostile text is text");
    let pictures = "return [...document.querySelectorAll('.shots img')].map(i => i.complete && i.naturalWidth);";
    assert_eq!(js(client, pictures).await.expect("read"), json!([160, 384]), "the screenshots drawn");
    let status = "return document.getElementById('shown').textContent;";
    assert_eq!(js(client, status).await.expect("read"), json!("7 of 7 cases shown"));

    let png = client.screenshot().await.expect("a screenshot");
    std::fs::write(out.join("report.png"), png).expect("the screenshot kept");
    js(client, "document.getElementById('case-errors.json-404').scrollIntoView(); return 0;").await.expect("scrolled");
    let png = client.screenshot().await.expect("a screenshot");
    std::fs::write(out.join("report-failure.png"), png).expect("the screenshot kept");
    for (id, name) in [("gen.lifting-model", "generated"), ("page.layout.accessible", "screenshots")] {
        let open = format!(
            "const c = document.getElementById('case-{id}'); c.querySelectorAll('details').forEach(d => d.open = true); \
             c.scrollIntoView(); return 0;"
        );
        js(client, &open).await.expect("scrolled");
        let png = client.screenshot().await.expect("a screenshot");
        std::fs::write(out.join(format!("report-{name}.png")), png).expect("the screenshot kept");
    }
    eprintln!("screenshots of the report: {}", out.display());

    let options = json!({"resultTypes": ["violations"]});
    let violations = axe_violations(client, &options, &[]).await.expect("axe-core (ci/install-interop.sh)");
    assert_eq!(violations, json!([]), "axe-core, every rule");

    click(client, "#show-pass").await;
    let not_passed: Vec<String> =
        verdicts.iter().filter(|v| v.outcome != Outcome::Pass).map(|v| v.id.to_string()).collect();
    assert_eq!(shown(client).await, not_passed, "passes hidden");
    let sections = "return [...document.querySelectorAll('section.spec')].filter(s => s.getClientRects().length > 0).map(s => s.id);";
    assert_eq!(js(client, sections).await.expect("read"), json!(["s3", "s11", "s13"]), "§9 held only passes");
    assert_eq!(js(client, status).await.expect("read"), json!("4 of 7 cases shown"));
    let hidden = "return document.querySelectorAll('[hidden]').length;";
    assert_eq!(js(client, hidden).await.expect("read"), json!(0), "CSS filters, so it needs no script");
    for outcome in ["fail", "warn", "not-run"] {
        click(client, &format!("#show-{outcome}")).await;
    }
    assert_eq!(shown(client).await, Vec::<String>::new(), "nothing checked, nothing shown");
    assert_eq!(js(client, sections).await.expect("read"), Value::Array(Vec::new()));
    click(client, "#show-warn").await;
    assert_eq!(shown(client).await, ["lift.scan-is-linear"], "the warning alone");
    click(client, "#show-pass").await;
    let passed_or_warned: Vec<String> = verdicts
        .iter()
        .filter(|v| matches!(v.outcome, Outcome::Pass | Outcome::Warn))
        .map(|v| v.id.to_string())
        .collect();
    assert_eq!(shown(client).await, passed_or_warned, "passes shown again");

    session.close().await;
    harness::browser::run_ended().await;
}
