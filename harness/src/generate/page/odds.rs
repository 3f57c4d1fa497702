//! The page generator's reach, in odds, and its plan: at the default budget's turns, at least 999
//! runs of 1,000 hold what each variant `gen.page-turns-model` names needs in order to be caught (a
//! WebP or JPEG picture, a result past 4,096 characters kept whole, an empty one, an error, a result
//! cut for the model, hostile markup, …), each read the way the model reads the turn.

use super::*;
use crate::generate::{DEFAULT_BUDGET, runs_holding_each};

/// What each variant needs at least once, judged on one turn's blocks.
/// Whether a turn's blocks hold what a variant needs.
type Need = fn(&[Shown]) -> bool;

const NEEDS: [(&str, Need); 12] = [
    ("page-webp-not-drawn", |b| pictures(b).any(|p| p.name.ends_with(".webp"))),
    ("page-download-named-by-mime", |b| pictures(b).any(|p| p.name.ends_with(".jpg"))),
    ("page-results-stored-cut", |b| results(b).any(|(_, text, _)| text.chars().count() > 4096)),
    ("page-long-results-sent-cut", |b| results(b).any(|(_, text, _)| text.chars().count() > 4096)),
    ("page-empty-result-unshown", |b| results(b).any(|(_, text, _)| text.is_empty())),
    ("page-error-shown-done", |b| b.iter().any(|b| b.state == "error")),
    ("page-error-result-unlabelled", |b| b.iter().any(|b| b.state == "error")),
    ("page-error-results-dropped", |b| b.iter().any(|b| b.state == "error")),
    ("page-result-as-html", |b| {
        results(b).any(|(_, text, _)| text.contains("<b") || text.contains("<s") || text.contains("<i"))
    }),
    ("page-tool-text-dropped-beside-pictures", |b| b.iter().any(|b| !b.pictures.is_empty())),
    ("page-result-length-missing", |b| results(b).any(|(_, _, cut)| !cut)),
    ("page-cut-results-not-said", |b| results(b).any(|(_, _, cut)| cut)),
];

fn pictures(blocks: &[Shown]) -> impl Iterator<Item = &Expected> {
    blocks.iter().flat_map(|b| b.pictures.iter())
}

fn results(blocks: &[Shown]) -> impl Iterator<Item = (&Shown, &str, bool)> {
    blocks.iter().filter_map(|b| b.result.as_ref().map(|(text, _, cut)| (b, text.as_str(), *cut)))
}

#[test]
fn the_default_budget_holds_what_each_named_variant_needs() {
    let turns = (DEFAULT_BUDGET / SHARE) as usize;
    let held = runs_holding_each(super::turns(), turns, NEEDS.len(), |turn| {
        let blocks = plan(std::slice::from_ref(turn)).blocks.remove(0);
        NEEDS.iter().map(|(_, needs)| needs(&blocks)).collect()
    });
    for ((variant, _), held) in NEEDS.iter().zip(held) {
        assert!(held >= 999, "{variant}: {held} runs of 1,000 hold what it needs");
    }
}

/// The variants whose needs are checked here: `gen.page-turns-model` names two of them in
/// `broken_by` (a picture format and markup in a result; each takes `broken_variants` about 70 s, most
/// of it shrinking), and was shown failing against
/// all twelve (docs/generated-cases.md). `cases::generated_page`'s test holds the case to this list.
pub(crate) fn variants() -> impl Iterator<Item = &'static str> {
    NEEDS.iter().map(|(v, _)| *v)
}

fn text(s: &str) -> GeneratedResult {
    GeneratedResult { blocks: vec![Block::Text(s.into())], is_error: false }
}

fn round(calls: Vec<GeneratedResult>) -> Round {
    Round { before: String::new(), calls }
}

#[test]
fn a_round_past_the_limit_is_written_and_not_run_and_no_answer_follows() {
    let turn = Turn {
        rounds: vec![round(vec![text("a")]), round(vec![text("b")]), round(vec![text("c")])],
        after: "x".into(),
        stop: None,
    };
    let plan = plan(&[turn]);
    let states: Vec<_> = plan.blocks[0].iter().map(|b| b.state).collect();
    assert_eq!(states, ["done", "done", "skipped"]);
    assert_eq!(plan.scripts.len(), 4, "three passes, then the probe's answer: {:?}", plan.scripts);
    assert!(plan.scripts[3].contains(PROBE_ANSWER));
    assert_eq!(plan.staged.len(), 2, "the call past the limit is never staged");
}

#[test]
fn stop_holds_a_call_and_leaves_what_follows_it_not_run() {
    let error = GeneratedResult { blocks: vec![], is_error: true };
    let turn = Turn { rounds: vec![round(vec![text("a"), error, text("c")])], after: "x".into(), stop: Some((0, 2)) };
    let later = Turn { rounds: vec![round(vec![text("d")])], after: String::new(), stop: None };
    let plan = plan(&[turn, later]);
    let shown: Vec<_> = plan.blocks[0].iter().map(|b| (b.state, b.tool)).collect();
    assert_eq!(shown, [("done", "staged"), ("error", "staged"), ("skipped", "sleep"), ("skipped", "staged")]);
    assert_eq!(plan.stops, [Some(2), None]);
    assert_eq!(plan.blocks[0][1].result.as_ref().map(|r| r.0.as_str()), Some("error: the tool reported an error"));
    assert_eq!(plan.scripts.len(), 4, "the stopped pass, the later turn's two, the probe's: {:?}", plan.scripts);
    assert!(plan.scripts[0].contains("fake__sleep") && plan.scripts[1].contains("<parameter=slot>\n3\n"));
}

#[test]
fn results_are_modelled_at_the_page_servers_cap() {
    let long = "é".repeat(CAP + 5);
    let plan = plan(&[Turn {
        rounds: vec![round(vec![text(&long), text(&"é".repeat(CAP))])],
        after: String::new(),
        stop: None,
    }]);
    let (shown, chars, cut) = plan.blocks[0][0].result.clone().expect("a result");
    assert_eq!((chars, cut), (CAP + 5, true));
    assert!(shown.starts_with(&"é".repeat(CAP)) && shown.contains("truncated"));
    assert_eq!(plan.blocks[0][1].result.as_ref().map(|r| (r.1, r.2)), Some((CAP, false)));
}

/// Each visit's conversation stays inside the page server's context (SPEC 4.7 never truncates: a
/// pass past it ends the turn with an error the model does not expect), turns in order, none lost.
#[test]
fn sessions_keep_each_visits_conversation_inside_the_context() {
    let mut runner = crate::generate::runner("page-sessions");
    let strategy = super::turns();
    let mut split = 0;
    for _ in 0..200 {
        let turns: Vec<Turn> = (0..(DEFAULT_BUDGET / SHARE) as usize * 3)
            .map(|_| strategy.new_tree(&mut runner).expect("a turn").current())
            .collect();
        let visits = sessions(&turns, 16);
        split += usize::from(visits.len() > 3);
        assert_eq!(visits.first().map(|v| v.start), Some(0));
        assert_eq!(visits.last().map(|v| v.end), Some(turns.len()));
        for (visit, next) in visits.iter().zip(visits.iter().skip(1)) {
            assert_eq!(visit.end, next.start);
        }
        for visit in &visits {
            let held: usize = BASE_TOKENS + turns[visit.clone()].iter().map(tokens).sum::<usize>();
            assert!(visit.len() <= 16 && (held <= SESSION_TOKENS || visit.len() == 1), "{visit:?} holds {held}");
            assert!(held < CONTEXT, "{visit:?} holds {held}");
        }
    }
    assert!(split < 200, "sessions are split by size only now and then ({split} of 200 budgets of 48 turns)");
}
