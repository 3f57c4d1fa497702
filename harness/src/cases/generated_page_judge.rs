//! `gen.page-turns-model`'s judge: what the page showed, kept and sent in a session of generated
//! turns, against the model of `generate::page` (the blocks each turn draws) and `page_replay`'s model
//! of 13.14 (what the next turn sends, from the recorded stream). Each miss names the turn it belongs
//! to, so the case can shrink that turn alone.

use serde_json::{Value, json};

use super::page_replay::{compare, replayed};
use super::page_tool_blocks::{has_word, numbers_shown};
use crate::case::CheckError;
use crate::generate::page::{MAX_ROUNDS, Shown, Turn, message};
use crate::scenario::FIXTURE_SERVER;

/// A session's failure: the turn it belongs to (0-based), and what was wrong.
#[derive(Debug, Clone)]
pub(super) struct Miss {
    pub(super) turn: usize,
    pub(super) why: String,
}

fn miss(turn: usize, why: String) -> Miss {
    Miss { turn, why }
}

/// A check's failure as one line.
pub(super) fn said(error: &CheckError) -> String {
    match error {
        CheckError::Fail { expected, actual } => format!("expected {expected}; actual {actual}"),
        CheckError::NotRun(why) => format!("not run: {why}"),
    }
}

/// Every block of every turn, in order.
fn flat(blocks: &[Vec<Shown>]) -> Vec<&Shown> {
    blocks.iter().flatten().collect()
}

/// The first `n` characters of `text`, for failures.
fn head(text: &str, n: usize) -> String {
    let kept: String = text.chars().take(n).collect();
    if text.chars().count() > n { format!("{kept:?}…") } else { format!("{kept:?}") }
}

/// The number of blocks in each bubble that has some, in order: which turn drew how many.
fn groups(facts: &Value) -> Vec<usize> {
    let mut out: Vec<(i64, usize)> = Vec::new();
    for block in facts["blocks"].as_array().into_iter().flatten() {
        let bubble = block["bubble"].as_i64().unwrap_or(-1);
        match out.last_mut() {
            Some((b, n)) if *b == bubble => *n += 1,
            _ => out.push((bubble, 1)),
        }
    }
    out.into_iter().map(|(_, n)| n).collect()
}

/// The blocks read before any was opened: as many as the model's in each turn, each collapsed,
/// naming its tool, server and state; each turn's bubble said stopped exactly when it was stopped,
/// the limit's note exactly when a round was past `max_rounds`, never failed, and no debris.
pub(super) fn collapsed(turns: &[Turn], blocks: &[Vec<Shown>], facts: &Value) -> Result<(), Miss> {
    let drawn = groups(facts);
    for (t, model) in blocks.iter().enumerate() {
        if drawn.get(t) != Some(&model.len()) {
            return Err(miss(
                t,
                format!("{} tool blocks in this turn's bubble; drawn per bubble: {drawn:?}", model.len()),
            ));
        }
    }
    let read = facts["blocks"].as_array().cloned().unwrap_or_default();
    for (i, (model, block)) in flat(blocks).into_iter().zip(&read).enumerate() {
        let at = format!("tool block {} (turn {}, {})", i + 1, model.turn + 1, model.word());
        let fail = |what: String| miss(model.turn, format!("{at}: {what}"));
        let text = block["text"].as_str().unwrap_or_default();
        if block["state"] != json!(model.state) {
            return Err(fail(format!("data-state {:?}, not {:?}: {}", block["state"], model.state, head(text, 160))));
        }
        if block["open"] == json!(true) {
            return Err(fail("collapsed by default, but it is open".into()));
        }
        for wanted in [model.tool, model.word()] {
            if !text.contains(wanted) {
                return Err(fail(format!("collapsed, it shows {wanted:?}: {}", head(text, 160))));
            }
        }
        if model.result.is_some() {
            if block["name"] != json!(model.tool) {
                return Err(fail(format!("its tool-name is {:?}, not {:?}", block["name"], model.tool)));
            }
            if !text.contains(FIXTURE_SERVER) {
                return Err(fail(format!("collapsed, it shows its server {FIXTURE_SERVER:?}: {}", head(text, 160))));
            }
        }
    }
    let bubbles = facts["bubbles"].as_array().cloned().unwrap_or_default();
    for (t, turn) in turns.iter().enumerate() {
        let first = flat(blocks).iter().position(|b| b.turn == t).and_then(|i| read.get(i));
        let bubble = first.and_then(|b| b["bubble"].as_u64()).and_then(|b| bubbles.get(b as usize));
        let text = bubble.and_then(Value::as_str).unwrap_or_default();
        let lower = text.to_lowercase();
        let stopped = turn.stop.is_some();
        let limited = !stopped && turn.rounds.len() > MAX_ROUNDS;
        let facts = [
            (lower.contains("stopped") == stopped, if stopped { "says stopped" } else { "does not say stopped" }),
            (!lower.contains("failed"), "does not say failed"),
            (
                text.contains("max_rounds") == limited,
                if limited { "names max_rounds" } else { "does not name max_rounds" },
            ),
        ];
        for (holds, what) in facts {
            if !holds {
                return Err(miss(t, format!("the turn's bubble {what}: {}", head(text, 300))));
            }
        }
        for debris in ["undefined", "NaN", "[object Object]"] {
            if text.contains(debris) {
                return Err(miss(t, format!("the turn's bubble reads {debris:?}: {}", head(text, 300))));
            }
        }
    }
    Ok(())
}

/// The blocks read opened (`at`: when): each one that ran shows its result text exactly in its
/// `tool-result`, labelled Result or Error with its length in characters, and "cut" exactly when
/// the result was cut for the model. `summaries`: each block's text collapsed (the first read).
pub(super) fn opened(at: &str, blocks: &[Vec<Shown>], facts: &Value, summaries: &Value) -> Result<(), Miss> {
    let read = facts["blocks"].as_array().cloned().unwrap_or_default();
    let model = flat(blocks);
    if read.len() != model.len() {
        let turn = model.last().map_or(0, |b| b.turn);
        return Err(miss(turn, format!("{at}: {} tool blocks, not {}", read.len(), model.len())));
    }
    for (i, (model, block)) in model.into_iter().zip(&read).enumerate() {
        let Some((wanted, chars, cut)) = &model.result else { continue };
        let fail =
            |what: String| miss(model.turn, format!("{at}: tool block {} (turn {}): {what}", i + 1, model.turn + 1));
        let Some(shown) = block["result"].as_str() else {
            return Err(fail(format!("a tool-result holding its {chars} characters; it has none")));
        };
        if shown != wanted {
            let n = shown.chars().count();
            return Err(fail(format!(
                "its result shown exactly ({chars} characters: {}); shown {n}: {}",
                head(wanted, 80),
                head(shown, 80)
            )));
        }
        let whole = block["text"].as_str().unwrap_or_default();
        let summary = summaries["blocks"][i]["text"].as_str().unwrap_or_default();
        // The labels are read in what opening added, less the result itself (its text may hold
        // numbers, and the cut note says "characters").
        let added = whole.replacen(summary.trim(), "", 1).replacen(wanted.trim(), "", 1);
        let label = if model.state == "error" { "Error" } else { "Result" };
        if !has_word(&added, label) || !has_word(&added, "Arguments") {
            return Err(fail(format!("opened, labelled Arguments and {label:?}: {}", head(&added, 200))));
        }
        if !numbers_shown(&added).contains(&(*chars as u64)) || !has_word(&added, "characters") {
            return Err(fail(format!("opened, its length: {chars} characters: {}", head(&added, 200))));
        }
        if has_word(&added.to_lowercase(), "cut") != *cut {
            let what = if *cut { "says cut (it was cut for the model)" } else { "does not say cut" };
            return Err(fail(format!("opened, it {what}: {}", head(&added, 200))));
        }
    }
    Ok(())
}

/// Every picture the turns cached, and no other, previewed at its size and downloadable as
/// `<sha256>.<ext>` of its bytes (`downloads`: each link's SHA-256, name and href, read in the page).
pub(super) fn pictures(
    at: &str,
    blocks: &[Vec<Shown>],
    facts: &Value,
    downloads: &[(String, String, String)],
) -> Result<(), Miss> {
    let wanted: Vec<(usize, &crate::generate::results::Expected)> =
        flat(blocks).into_iter().flat_map(|b| b.pictures.iter().map(move |p| (b.turn, p))).collect();
    let shown = facts["pictures"].as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = shown.iter().map(|p| p["name"].as_str().unwrap_or_default()).collect();
    let mut left: Vec<Option<&Value>> = shown.iter().map(Some).collect();
    for (turn, picture) in &wanted {
        let found = left.iter_mut().find(|p| p.is_some_and(|p| p["name"] == json!(picture.name)));
        let Some(found) = found.and_then(Option::take) else {
            return Err(miss(
                *turn,
                format!("{at}: the picture {} shown and downloadable under its name; shown: {names:?}", picture.name),
            ));
        };
        let size = (found["w"].as_u64(), found["h"].as_u64());
        if found["loaded"] != json!(true) || size != (Some(picture.width.into()), Some(picture.height.into())) {
            return Err(miss(
                *turn,
                format!("{at}: {} previewed at {}×{}; shown {found}", picture.name, picture.width, picture.height),
            ));
        }
    }
    if let Some(extra) = left.into_iter().flatten().next() {
        let turn = wanted.last().map_or(0, |(t, _)| *t);
        return Err(miss(turn, format!("{at}: {} pictures, and no other; also shown: {extra}", wanted.len())));
    }
    for (hash, name, href) in downloads {
        let turn = wanted.iter().find(|(_, p)| p.name == *name).map_or(0, |(t, _)| *t);
        let stem = name.split('.').next().unwrap_or_default();
        if stem != hash || !href.starts_with("blob:") {
            return Err(miss(
                turn,
                format!(
                    "{at}: a blob: download named <sha256>.<ext> of its bytes; {name} holds bytes hashing to {hash} at {href}"
                ),
            ));
        }
    }
    Ok(())
}

/// The page's storage: no base64 run anywhere (`runs`), and `strata.chat` (`stored`) holding every
/// picture's reference.
pub(super) fn storage(blocks: &[Vec<Shown>], runs: &[String], stored: &str) -> Result<(), Miss> {
    if let Some(run) = runs.first() {
        return Err(miss(0, format!("no base64 in the page's storage; found {run}")));
    }
    for block in flat(blocks) {
        for picture in &block.pictures {
            if !stored.contains(&picture.name) {
                return Err(miss(
                    block.turn,
                    format!("localStorage[\"strata.chat\"] holding {}; it holds {}", picture.name, head(stored, 200)),
                ));
            }
        }
    }
    Ok(())
}

/// Each chat request (one a turn, then the probe's) sends the conversation before it as it
/// streamed (13.14, from each recorded answer), and its own message; a wrong request is the last
/// turn it holds that the one before did not.
pub(super) fn sent(turns: usize, chats: &[(Value, String)]) -> Result<(), Miss> {
    if chats.len() != turns + 1 {
        return Err(miss(
            turns.saturating_sub(1).min(chats.len()),
            format!("{} chat requests (one a turn, and one more); the page sent {}", turns + 1, chats.len()),
        ));
    }
    let mut expected = Vec::new();
    for (k, (body, answer)) in chats.iter().enumerate() {
        expected.push(json!({"role": "user", "content": message(k)}));
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        if let Err(error) = compare(&expected, &messages) {
            let turn = k.saturating_sub(1);
            return Err(miss(turn, format!("the request after turn {}: {}", turn + 1, said(&error))));
        }
        expected.extend(replayed(answer));
    }
    Ok(())
}
