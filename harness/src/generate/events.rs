//! Generated tool turns and a model of the `strata_mcp` event sequence SPEC §6 says they give.
//!
//! A turn is the mock engine's scripts for its passes (4.9: the last repeats): a pass answers, or
//! writes calls — to the fixture's `echo` (MCP), to the request's own `lookup`, and to names no one
//! offers (`fake__nope`, `other__echo`, a bare `echo`), in any order — and
//! may end inside one more MCP call; `mcp.max_rounds` is 1 to 3. The model says, pass by pass: a
//! `start` for each MCP call as it is written (6.2, 6.9: and nothing more for the one the output ends
//! inside); then, if the pass also called `lookup`, every MCP call `skipped` and the answer ends with
//! `tool_calls` (6.10); else if `max_rounds` rounds already ran, `limit`, every call `skipped`, `stop`
//! (6.6); else each call's `call` (its round, from 1) and `result` (echo's text; for a name no one
//! offers, `server` null and 7.2c's error), one after another in the order written (6.3), and the
//! next pass. A pass without a complete MCP call ends the answer with
//! `stop`. Each call's events share one id.

use proptest::prelude::*;
use serde_json::{Value, json};

use fixtures::scripts::answer_script;

/// One call a pass writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// The fixture's `echo` (as `fake__echo`), with this text.
    Echo(String),
    /// The request's own `lookup`.
    Own,
    /// A name no server and no request offers (7.2c: an error result, `server` null).
    Unknown(&'static str),
}

/// Names no server offers: the fixture's server with a tool it lacks, a server that is not there, a
/// bare tool name without its server.
const UNKNOWN: &[&str] = &["fake__nope", "other__echo", "echo"];

/// One pass of the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pass {
    /// The calls it writes, in order (none: it answers).
    pub calls: Vec<Call>,
    /// Whether the output then ends inside one more `echo` call.
    pub unfinished: bool,
}

/// A generated turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// The passes' scripts, the last repeating.
    pub passes: Vec<Pass>,
    /// `mcp.max_rounds`.
    pub max_rounds: usize,
}

fn call() -> impl Strategy<Value = Call> {
    prop_oneof![
        4 => "[a-z]{1,6}".prop_map(Call::Echo),
        1 => Just(Call::Own),
        1 => prop::sample::select(UNKNOWN).prop_map(Call::Unknown),
    ]
}

fn pass() -> impl Strategy<Value = Pass> {
    (prop::collection::vec(call(), 0..4), prop::bool::weighted(0.35))
        .prop_map(|(calls, unfinished)| Pass { calls, unfinished })
}

/// Turns of 1 to 4 passes under `max_rounds` 1 to 3.
pub fn turns() -> impl Strategy<Value = Turn> {
    (prop::collection::vec(pass(), 1..5), 1usize..4).prop_map(|(passes, max_rounds)| Turn { passes, max_rounds })
}

/// The MCP name the model writes for `echo` (the fixture server is `fake`, 5.6).
const ECHO: &str = "fake__echo";

impl Pass {
    /// Its script.
    pub fn script(&self) -> String {
        if self.calls.is_empty() && !self.unfinished {
            return answer_script("Done.");
        }
        let mut script = String::from("</think>\n\nLet me check.\n");
        for call in &self.calls {
            let (name, key, value) = match call {
                Call::Echo(text) => (ECHO, "text", text.as_str()),
                Call::Own => ("lookup", "q", "cats"),
                Call::Unknown(name) => (*name, "text", "x"),
            };
            script.push_str(&format!(
                "\n<tool_call>\n<function={name}>\n<parameter={key}>\n{value}\n</parameter>\n</function>\n</tool_call>"
            ));
        }
        if self.unfinished {
            script.push_str(&format!("\n<tool_call>\n<function={ECHO}>\n<parameter=text>\nnever"));
        }
        script
    }
}

/// The events the model says, without ids and `ms`, and the finish reason.
pub fn expected(turn: &Turn) -> (Vec<Value>, &'static str) {
    let mut events = Vec::new();
    let mut rounds = 0;
    for index in 0.. {
        let pass = &turn.passes[index.min(turn.passes.len() - 1)];
        // The calls the hub takes: every one but the request's own (an unknown name among them).
        let mcp: Vec<&Call> = pass.calls.iter().filter(|c| **c != Call::Own).collect();
        for call in &mcp {
            events.push(json!({"event": "start", "name": name_of(call)}));
        }
        if pass.unfinished {
            events.push(json!({"event": "start", "name": ECHO}));
        }
        let skipped = || json!({"event": "result", "ok": false, "skipped": true, "text": "not run", "chars": 0, "truncated": false});
        if pass.calls.contains(&Call::Own) {
            events.extend(mcp.iter().map(|_| skipped()));
            return (events, "tool_calls");
        }
        if mcp.is_empty() {
            return (events, "stop");
        }
        if rounds == turn.max_rounds {
            events.push(json!({"event": "limit", "max_rounds": turn.max_rounds}));
            events.extend(mcp.iter().map(|_| skipped()));
            return (events, "stop");
        }
        rounds += 1;
        for call in mcp {
            match call {
                Call::Echo(text) => {
                    events.push(json!({"event": "call", "name": ECHO, "server": "fake", "tool": "echo",
                        "arguments": {"text": text}, "round": rounds}));
                    events.push(json!({"event": "result", "ok": true, "text": text, "chars": text.chars().count(),
                        "truncated": false}));
                }
                Call::Unknown(name) => {
                    let text = format!("error: there is no tool named '{name}'");
                    events.push(json!({"event": "call", "name": name, "server": null, "tool": name,
                        "arguments": {"text": "x"}, "round": rounds}));
                    events.push(json!({"event": "result", "ok": false, "text": text, "chars": text.chars().count(),
                        "truncated": false}));
                }
                Call::Own => {}
            }
        }
    }
    unreachable!("the loop returns once the rounds are used up")
}

/// The name a call is written with.
fn name_of(call: &Call) -> &str {
    match call {
        Call::Echo(_) => ECHO,
        Call::Own => "lookup",
        Call::Unknown(name) => name,
    }
}

/// Checks the events of one streamed turn against the model: the sequence (ids and `ms` aside), one
/// id per call (its `start`, `call` and `result`), and the finish reason.
pub fn judge(turn: &Turn, events: &[Value], finish_reason: Option<&str>) -> Result<(), String> {
    let (wanted, finish) = expected(turn);
    let mut ids: Vec<String> = Vec::new();
    let mut got = Vec::new();
    for event in events {
        let mut event = event.clone();
        let Some(object) = event.as_object_mut() else {
            return Err(format!("an event that is not an object: {event}"));
        };
        object.remove("ms");
        if let Some(id) = object.remove("id") {
            ids.push(id.as_str().unwrap_or_default().to_string());
        }
        got.push(event);
    }
    if got != wanted {
        return Err(format!(
            "the events differ from the model's (ids and ms aside)\n model: {}\nserver: {}",
            Value::Array(wanted),
            Value::Array(got)
        ));
    }
    // Each call's id: its start, and (when it ran or was skipped) the call/result that follow for it.
    let starts: Vec<&String> =
        ids.iter().zip(events).filter(|(_, e)| e["event"] == "start").map(|(id, _)| id).collect();
    let unique: std::collections::BTreeSet<&&String> = starts.iter().collect();
    if unique.len() != starts.len() {
        return Err(format!("two calls share an id: {starts:?}"));
    }
    for (id, event) in ids.iter().zip(events) {
        if event["event"] != "start" && !starts.contains(&id) {
            return Err(format!("a {} event whose id {id} no start had", event["event"]));
        }
    }
    if finish_reason != Some(finish) {
        return Err(format!("finish_reason {finish_reason:?}, the model says {finish:?}"));
    }
    Ok(())
}

/// A turn as a reader wants it.
pub fn describe(turn: &Turn) -> String {
    let mut lines = vec![format!("  max_rounds {}", turn.max_rounds)];
    for (i, pass) in turn.passes.iter().enumerate() {
        lines.push(format!(
            "  pass {}: {:?}{}",
            i + 1,
            pass.calls,
            if pass.unfinished { " then an unfinished echo" } else { "" }
        ));
    }
    let (events, finish) = expected(turn);
    lines.push(format!("  the model: {} events, finish {finish}", events.len()));
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pass(calls: Vec<Call>, unfinished: bool) -> Pass {
        Pass { calls, unfinished }
    }

    #[test]
    fn rounds_run_up_to_the_limit_then_the_rest_is_skipped() {
        let turn =
            Turn { passes: vec![pass(vec![Call::Echo("a".into()), Call::Echo("b".into())], false)], max_rounds: 1 };
        let (events, finish) = expected(&turn);
        let kinds: Vec<&str> = events.iter().map(|e| e["event"].as_str().unwrap_or_default()).collect();
        assert_eq!(
            kinds,
            ["start", "start", "call", "result", "call", "result", "start", "start", "limit", "result", "result"]
        );
        assert_eq!(events[2]["round"], 1);
        assert_eq!(events[10]["skipped"], true);
        assert_eq!(finish, "stop");
    }

    #[test]
    fn an_own_call_skips_the_pass_and_an_unfinished_call_only_starts() {
        let turn = Turn { passes: vec![pass(vec![Call::Echo("a".into()), Call::Own], false)], max_rounds: 3 };
        let (events, finish) = expected(&turn);
        assert_eq!((events.len(), finish), (2, "tool_calls"));
        assert_eq!(events[1]["skipped"], true);
        let turn = Turn { passes: vec![pass(vec![], true)], max_rounds: 3 };
        assert_eq!(expected(&turn), (vec![json!({"event": "start", "name": ECHO})], "stop"));
        let answer = Turn { passes: vec![pass(vec![], false)], max_rounds: 1 };
        assert_eq!(expected(&answer), (vec![], "stop"));
    }
}

#[cfg(test)]
mod odds {
    use super::*;

    #[test]
    fn nearly_every_run_reaches_a_pass_that_ends_inside_a_call_after_a_complete_one() {
        // What `unfinished-calls-run` and `length-cut-calls-run` need to show, in a run of half the
        // default budget (this case's share): at 0.15 a pass, 16 of 1,000 runs had none.
        let held = crate::generate::runs_holding(turns(), 24, |turn| {
            let (events, _) = expected(turn);
            let starts = events.iter().filter(|e| e["event"] == "start").count();
            let closed = events.iter().filter(|e| e["event"] == "call" || e["skipped"] == true).count();
            starts > closed && turn.passes.iter().any(|p| p.unfinished && !p.calls.is_empty())
        });
        assert!(held >= 999, "{held} of 1,000 runs");
    }

    #[test]
    fn nearly_every_run_runs_a_call_to_a_name_no_one_offers() {
        // What `unknown-tool-reworded` needs to show: a call to an unknown name that runs.
        let held = crate::generate::runs_holding(turns(), 24, |turn| {
            expected(turn).0.iter().any(|e| e["event"] == "call" && e["server"].is_null())
        });
        assert!(held >= 999, "{held} of 1,000 runs");
    }

    #[test]
    fn nearly_every_run_meets_the_round_limit_and_runs_a_call() {
        // What `limit-event-reshaped` and `limit-finishes-length` need to show (a limit event), and
        // `rounds-from-zero`, `call-event-unrouted` and `start-event-unnamed` (a call that runs).
        let held = crate::generate::runs_holding_each(turns(), 24, 2, |turn| {
            let (events, _) = expected(turn);
            vec![events.iter().any(|e| e["event"] == "limit"), events.iter().any(|e| e["event"] == "call")]
        });
        assert!(held.iter().all(|h| *h >= 999), "limit, call: {held:?} of 1,000 runs");
    }

    #[test]
    fn nearly_every_run_runs_two_calls_in_a_round() {
        // What `calls-before-results` needs to show: two calls run in one round.
        let held = crate::generate::runs_holding(turns(), 24, |turn| {
            let (events, _) = expected(turn);
            let rounds: Vec<&Value> = events.iter().filter(|e| e["event"] == "call").map(|e| &e["round"]).collect();
            rounds.windows(2).any(|pair| pair[0] == pair[1])
        });
        assert!(held >= 999, "{held} of 1,000 runs");
    }
}
