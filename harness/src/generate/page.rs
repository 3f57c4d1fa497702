//! Generated tool turns through the chat page (SPEC §13), and a model of what the page must show,
//! keep and send for them, in the harness's own code.
//!
//! A turn is 1 to 3 rounds of 1 to 3 calls of the fixture's `staged` tool (each returning a result of
//! its own, staged by slot), with text or none before each round and after the last; results of every
//! length around the page's likely limits (nothing, a few characters, 4,095 to 4,097, up to and past
//! `max_result_chars`), hostile markup ([`fixtures::hostile_text`]) and non-ASCII text, 0 to 4 PNG,
//! JPEG and WebP pictures, a resource link now and then, and errors. A round past `max_rounds` is
//! never run; a turn may be stopped while a call of one of its rounds runs (the fixture's `sleep`
//! held there), after the calls before it finished.
//!
//! [`plan`] turns a session of turns into the mock engine's scripts (the passes the server consumes,
//! in order), the results to stage, and per turn the tool blocks the page must draw: each one's state,
//! tool, result text (SPEC 7.1–7.3 by `results::expected_capped`, never the server's code), length,
//! whether it was cut, and its pictures (named by their SHA-256 here). What the next turn must send is
//! computed from the recorded stream by the 13.14 model of `cases::page_replay`.

use fixtures::images::PictureFormat;
use proptest::prelude::*;
use rmcp::model::CallToolResult;

use super::results::{Block, Data, Expected, GeneratedResult, expected_capped};
use crate::scenario::FIXTURE_SERVER;

/// `mcp.max_result_chars` of the generated page server: the longest results pass it and are cut.
pub const CAP: usize = 20_000;
/// `mcp.max_rounds` of the generated page server: a third round is never run.
pub const MAX_ROUNDS: usize = 2;
/// Generated turns per session: this share of `--gen-budget` (each turn goes through a browser).
pub const SHARE: u32 = 3;
/// `engine.max_context` of the generated page server, in tokens (SPEC 4.8: one a UTF-8 byte). Every
/// pass's prompt holds the whole conversation, and 4.7 never truncates it: a pass that finds no room
/// ends the turn with an error (13.15), so each visit's conversation is kept well inside it
/// ([`sessions`]).
pub const CONTEXT: usize = 1 << 20;
/// What one visit's conversation may hold at most, by [`tokens`]' bound: half the context, so a session
/// of many long results is split into visits rather than refused mid-turn.
pub const SESSION_TOKENS: usize = CONTEXT / 2;
/// Bounds, in tokens, of what [`tokens`] does not count byte by byte: the system turn with the
/// fixture's tools and the probe turn, each call's message framing (its `tool_calls` entry and
/// `<tool_response>` lines), each picture's part in its tool message. (Seeds `0x1`–`0x3`, `0x5eed`
/// and `0x18eeab8fa07f1b85`: the largest prompt was 75–81 % of the bound.)
const BASE_TOKENS: usize = 32 * 1024;
const CALL_TOKENS: usize = 512;
const PICTURE_TOKENS: usize = 256;

/// An upper bound of the tokens turn `turn` adds to every later pass's prompt (SPEC 4.8): its message,
/// its passes' scripts (their text and calls, more than what goes back), each result's text as the
/// model says it (cut at [`CAP`]) and each picture's part, each with [`CALL_TOKENS`] of framing.
pub fn tokens(turn: &Turn) -> usize {
    let plan = plan(std::slice::from_ref(turn));
    let scripts: usize = plan.scripts.iter().map(String::len).sum();
    let results: usize = plan.blocks[0]
        .iter()
        .map(|b| CALL_TOKENS + b.result.as_ref().map_or(0, |r| r.0.len()) + b.pictures.len() * PICTURE_TOKENS)
        .sum();
    CALL_TOKENS + message(0).len() + scripts + results
}

/// The turns split into visits, in order: at most `most` turns each, and each visit's conversation
/// (with [`BASE_TOKENS`]) within [`SESSION_TOKENS`] — a turn that alone passes it is a visit of its own
/// (at most 6 results of [`CAP`] characters, 4 bytes each at most, still inside [`CONTEXT`]).
pub fn sessions(turns: &[Turn], most: usize) -> Vec<std::ops::Range<usize>> {
    let mut visits = Vec::new();
    let (mut start, mut held) = (0, BASE_TOKENS);
    for (t, turn) in turns.iter().enumerate() {
        let adds = tokens(turn);
        if t > start && (t - start == most || held + adds > SESSION_TOKENS) {
            visits.push(start..t);
            (start, held) = (t, BASE_TOKENS);
        }
        held += adds;
    }
    if start < turns.len() {
        visits.push(start..turns.len());
    }
    visits
}

/// What the last pass of every session answers (the probe turn that sends the conversation back).
pub const PROBE_ANSWER: &str = "Fertig: alles gesehen.";

/// One generated turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// Its rounds of calls, each with the text written before it.
    pub rounds: Vec<Round>,
    /// The text written after the last round (when the turn gets there).
    pub after: String,
    /// Stop while a held call runs: the round (modulo the rounds that run) and where in its calls.
    pub stop: Option<(usize, usize)>,
}

/// A round: text, then calls of `staged`, each returning its result.
#[derive(Debug, Clone, PartialEq)]
pub struct Round {
    /// The text written before the calls.
    pub before: String,
    /// Each call's result.
    pub calls: Vec<GeneratedResult>,
}

/// A tool block the page must draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    /// The turn it belongs to (0-based).
    pub turn: usize,
    /// `done`, `error` or `skipped`.
    pub state: &'static str,
    /// The tool's own name (`staged`, or `sleep` for the held call).
    pub tool: &'static str,
    /// When it ran: the result's text, its length in characters and whether it was cut (7.1–7.3).
    pub result: Option<(String, usize, bool)>,
    /// The pictures it cached.
    pub pictures: Vec<Expected>,
}

impl Shown {
    /// The word the page shows for the state (SPEC 13.2).
    pub fn word(&self) -> &'static str {
        match self.state {
            "done" => "Done",
            "error" => "Error",
            _ => "Not run",
        }
    }
}

/// What a session is made into.
#[derive(Debug, Default)]
pub struct Plan {
    /// The mock engine's scripts, one a pass, in the order the server consumes them.
    pub scripts: Vec<String>,
    /// Each slot's result, to stage before the session.
    pub staged: Vec<(u64, CallToolResult)>,
    /// Per turn, its tool blocks in order.
    pub blocks: Vec<Vec<Shown>>,
    /// Per turn, the index of the held call among all the session's blocks (when it is stopped), and
    /// the indices of the blocks that must have finished before Stop.
    pub stops: Vec<Option<usize>>,
}

/// The user message of turn `i`.
pub fn message(i: usize) -> String {
    format!("Runde {} ✓", i + 1)
}

/// A pass's script: `</think>`, the text (if any), then the calls (`(function, [(name, value)])`).
fn pass(text: &str, calls: &[(String, Vec<(&str, String)>)]) -> String {
    let mut script = String::from("</think>");
    if !text.is_empty() {
        script.push_str(&format!("\n\n{text}\n"));
    }
    for (function, params) in calls {
        script.push_str(&format!("\n<tool_call>\n<function={function}>\n"));
        for (key, value) in params {
            script.push_str(&format!("<parameter={key}>\n{value}\n</parameter>\n"));
        }
        script.push_str("</function>\n</tool_call>");
    }
    script
}

/// The session's scripts, staged results and the blocks each turn draws (see the module's doc).
pub fn plan(turns: &[Turn]) -> Plan {
    let mut plan = Plan::default();
    let mut slot = 0u64;
    let mut total = 0usize;
    let staged = format!("{FIXTURE_SERVER}__staged");
    let held = format!("{FIXTURE_SERVER}__sleep");
    for (t, turn) in turns.iter().enumerate() {
        let ran_rounds = turn.rounds.len().min(MAX_ROUNDS);
        let stop = turn.stop.map(|(round, at)| {
            let round = round % ran_rounds.max(1);
            (round, at % (turn.rounds[round].calls.len() + 1))
        });
        let mut blocks = Vec::new();
        let mut held_at = None;
        for (r, round) in turn.rounds.iter().enumerate() {
            let past_limit = r >= MAX_ROUNDS;
            let mut calls = Vec::new();
            for (i, result) in round.calls.iter().enumerate() {
                if stop.is_some_and(|(sr, at)| sr == r && at == i) {
                    held_at = Some(total + blocks.len());
                    calls.push((held.clone(), vec![("seconds", "60".to_string())]));
                    blocks.push(Shown { turn: t, state: "skipped", tool: "sleep", result: None, pictures: vec![] });
                }
                calls.push((staged.clone(), vec![("slot", slot.to_string())]));
                let stopped = held_at.is_some();
                if past_limit || stopped {
                    blocks.push(Shown { turn: t, state: "skipped", tool: "staged", result: None, pictures: vec![] });
                } else {
                    plan.staged.push((slot, result.to_mcp()));
                    let (event, pictures) = expected_capped(result, true, CAP);
                    let text = event["text"].as_str().unwrap_or_default().to_string();
                    let chars = event["chars"].as_u64().unwrap_or_default() as usize;
                    let state = if result.is_error { "error" } else { "done" };
                    let result = Some((text, chars, event["truncated"] == true));
                    blocks.push(Shown { turn: t, state, tool: "staged", result, pictures });
                }
                slot += 1;
            }
            if stop.is_some_and(|(sr, at)| sr == r && at == round.calls.len()) {
                held_at = Some(total + blocks.len());
                calls.push((held.clone(), vec![("seconds", "60".to_string())]));
                blocks.push(Shown { turn: t, state: "skipped", tool: "sleep", result: None, pictures: vec![] });
            }
            plan.scripts.push(pass(&round.before, &calls));
            if past_limit || held_at.is_some() {
                break;
            }
        }
        if turn.rounds.len() <= MAX_ROUNDS && held_at.is_none() {
            plan.scripts.push(pass(&turn.after, &[]));
        }
        total += blocks.len();
        plan.blocks.push(blocks);
        plan.stops.push(held_at);
    }
    plan.scripts.push(pass(PROBE_ANSWER, &[]));
    plan
}

// --- Strategies -------------------------------------------------------------------------------------

/// A text of `n` characters: letters, digits, spaces and two non-ASCII ones, in a cycle.
fn filler(n: usize) -> String {
    "Zeile é€ 0123456789 ".chars().cycle().take(n).collect()
}

/// What a result's text starts with: a hostile payload, non-ASCII, line breaks, or nothing.
fn opening() -> impl Strategy<Value = String> {
    let hostile: Vec<String> =
        fixtures::hostile_text::payloads(fixtures::hostile_text::RESULT_SURFACE).into_iter().map(|(_, p)| p).collect();
    prop_oneof![
        3 => prop::sample::select(hostile),
        1 => Just("Grüße, 日本語 😀 𝔸\n  zwei  Leerzeichen\n".to_string()),
        1 => Just(String::new()),
    ]
}

/// A text block of a length around the page's likely limits: the opening, then filler up to it (or
/// the opening cut to it).
fn text_block() -> impl Strategy<Value = String> {
    let length = prop_oneof![
        2 => Just(0usize),
        4 => 1usize..120,
        2 => 4095usize..4098,
        2 => 4098usize..CAP - 1,
        1 => CAP - 1..CAP + 2,
        3 => CAP + 2..CAP + 1200,
    ];
    (opening(), length).prop_map(|(opening, n)| {
        let have = opening.chars().count();
        if n <= have { opening.chars().take(n).collect() } else { opening + &filler(n - have) }
    })
}

/// A PNG, JPEG or WebP picture, rightly labelled, 8 to 47 pixels a side.
fn picture() -> impl Strategy<Value = Block> {
    use PictureFormat::*;
    (prop::sample::select(vec![Png, Jpeg, Webp]), 8u32..48, 8u32..48, any::<u32>()).prop_map(
        |(format, width, height, seed)| Block::Image {
            mime: format.mime().to_string(),
            data: Data::Raster { format, width, height, seed },
        },
    )
}

/// A result: a quarter of them empty (no block, or one empty text block); the others a text block
/// (now and then none, or two), 0 to 4 pictures, now and then a resource link with hostile text,
/// a quarter of them errors.
fn result() -> impl Strategy<Value = GeneratedResult> {
    let empty = prop::bool::ANY.prop_map(|text| GeneratedResult {
        blocks: if text { vec![Block::Text(String::new())] } else { Vec::new() },
        is_error: false,
    });
    prop_oneof![1 => empty, 3 => any_result()]
}

fn any_result() -> impl Strategy<Value = GeneratedResult> {
    let link = ("[a-z]{1,6}", prop::sample::select(vec!["https://example.com/a", "javascript:alert(1)"]))
        .prop_map(|(name, uri)| Block::Link { name: format!("<b>{name}</b>"), uri: uri.to_string() });
    (
        prop::collection::vec(text_block(), 0..3),
        prop_oneof![1 => Just(Vec::new()), 5 => prop::collection::vec(picture(), 1..5)],
        prop::option::weighted(0.1, link),
        prop::bool::weighted(0.25),
    )
        .prop_map(|(texts, pictures, link, is_error)| {
            let mut blocks: Vec<Block> = texts.into_iter().map(Block::Text).collect();
            let at = blocks.len().min(1);
            for (i, picture) in pictures.into_iter().enumerate() {
                blocks.insert(at + i, picture);
            }
            blocks.extend(link);
            GeneratedResult { blocks, is_error }
        })
}

/// Text written before a round or after the last: nothing, or words with non-ASCII and markup that
/// must read as written.
fn words() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => Just(String::new()),
        3 => prop::sample::select(vec![
            "Gleich: café ① *nicht fett*",
            "日本語のテキスト 😀",
            "&lt;b&gt; bleibt &amp; so",
            "[ein Link](javascript:x) und `code`",
            "Zeile eins\nZeile zwei",
            // Characters at the text's edges that SPEC 4.6 does not strip (they are not whitespace)
            // but a page's trim() would: U+FEFF at either end.
            "\u{FEFF}Am Rand\u{FEFF}",
        ])
        .prop_map(String::from),
    ]
}

/// Generated turns (see the module's doc).
pub fn turns() -> BoxedStrategy<Turn> {
    let round = || (words(), prop::collection::vec(result(), 1..4)).prop_map(|(before, calls)| Round { before, calls });
    let rounds = prop_oneof![5 => prop::collection::vec(round(), 1..2), 3 => prop::collection::vec(round(), 2..4)];
    (rounds, words(), prop::option::weighted(0.25, (0usize..3, 0usize..4)))
        .prop_map(|(rounds, after, stop)| Turn { rounds, after, stop })
        .boxed()
}

/// A turn as a failure prints it: its rounds' calls (kind, length, pictures), Stop and texts.
pub fn describe(turn: &Turn) -> String {
    let mut out = Vec::new();
    for (r, round) in turn.rounds.iter().enumerate() {
        let past = if r >= MAX_ROUNDS { " (past max_rounds)" } else { "" };
        out.push(format!("round {}{past}, text before: {:?}", r + 1, round.before));
        for result in &round.calls {
            let (event, pictures) = expected_capped(result, true, CAP);
            let names: Vec<&str> = pictures.iter().map(|p| p.name.as_str()).collect();
            let text = event["text"].as_str().unwrap_or_default();
            let shown: String = text.chars().take(80).collect();
            out.push(format!(
                "  {} of {} characters{}: {shown:?}{}; pictures {names:?}",
                if result.is_error { "an error" } else { "a result" },
                event["chars"],
                if event["truncated"] == true { ", cut" } else { "" },
                if text.chars().count() > 80 { "…" } else { "" },
            ));
        }
    }
    out.push(format!("text after: {:?}", turn.after));
    if let Some((round, at)) = turn.stop {
        out.push(format!("Stop while a call runs: round index {round}, at call {at} (modulo what runs)"));
    }
    out.join("\n")
}

#[cfg(test)]
pub(crate) mod odds;
