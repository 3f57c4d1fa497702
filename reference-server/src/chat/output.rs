//! Reading the model's output as it streams (SPEC 4.6, 6.1): reasoning up to `</think>`, then content,
//! with calls written as `<tool_call><function=NAME><parameter=P>V</parameter></function></tool_call>`
//! (Strata's scripts, strata-wire C-M2) or as a JSON object inside `<tool_call>`. Markers may arrive split
//! across tokens (tokens are single bytes), so a tail that could begin a marker is held back until it is
//! decided. Whitespace before a call and at the end of a round is not content.

use serde_json::Value;

const THINK_END: &str = "</think>";
const CALL_OPEN: &str = "<tool_call>";
const CALL_CLOSE: &str = "</tool_call>";

/// Something the output says.
#[derive(Debug, Clone, PartialEq)]
pub enum OutputEvent {
    /// Reasoning text.
    Reasoning(String),
    /// Answer text.
    Content(String),
    /// The model began writing a call to `name`.
    CallStarted {
        /// The function name as written.
        name: String,
    },
    /// A complete call.
    CallFinished {
        /// The function name as written.
        name: String,
        /// The arguments; XML-style values are still strings here (see [`RawArguments`]).
        arguments: RawArguments,
    },
}

/// A call's arguments as written.
#[derive(Debug, Clone, PartialEq)]
pub enum RawArguments {
    /// `<parameter=P>V</parameter>` pairs, values as text.
    Parameters(Vec<(String, String)>),
    /// A JSON object (the JSON call form).
    Json(Value),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Reasoning,
    Content,
    Call,
}

/// The streaming parser for one engine pass.
#[derive(Debug)]
pub struct OutputParser {
    mode: Mode,
    bytes: Vec<u8>,
    text: String,
    content_started: bool,
    held_whitespace: String,
    call: String,
    call_named: bool,
}

impl OutputParser {
    /// A parser; `starts_in_reasoning` comes from the engine.
    pub fn new(starts_in_reasoning: bool) -> Self {
        Self {
            mode: if starts_in_reasoning { Mode::Reasoning } else { Mode::Content },
            bytes: Vec::new(),
            text: String::new(),
            content_started: false,
            held_whitespace: String::new(),
            call: String::new(),
            call_named: false,
        }
    }

    /// Feeds byte-token ids (ids ≥ 256 are specials and carry no text) and returns what became certain.
    pub fn feed(&mut self, ids: &[u32]) -> Vec<OutputEvent> {
        self.bytes.extend(ids.iter().filter_map(|&id| u8::try_from(id).ok()));
        let text = take_utf8(&mut self.bytes);
        self.feed_text(&text)
    }

    /// Feeds text.
    pub fn feed_text(&mut self, text: &str) -> Vec<OutputEvent> {
        self.text.push_str(text);
        let mut events = Vec::new();
        self.advance(&mut events, false);
        events
    }

    /// Ends the pass. Returns the last events and whether the output ended inside a call.
    pub fn finish(mut self) -> (Vec<OutputEvent>, bool) {
        if !self.bytes.is_empty() {
            let rest = String::from_utf8_lossy(&self.bytes).into_owned();
            self.text.push_str(&rest);
            self.bytes.clear();
        }
        let mut events = Vec::new();
        self.advance(&mut events, true);
        (events, self.mode == Mode::Call)
    }

    fn advance(&mut self, events: &mut Vec<OutputEvent>, at_end: bool) {
        loop {
            match self.mode {
                Mode::Reasoning => {
                    if let Some(at) = self.text.find(THINK_END) {
                        let reasoning: String = self.text.drain(..at + THINK_END.len()).collect();
                        push_nonempty(events, OutputEvent::Reasoning, &reasoning[..at]);
                        self.mode = Mode::Content;
                        continue;
                    }
                    let keep = if at_end { 0 } else { held_tail(&self.text, THINK_END) };
                    let ready: String = self.text.drain(..self.text.len() - keep).collect();
                    push_nonempty(events, OutputEvent::Reasoning, &ready);
                    return;
                }
                Mode::Content => {
                    if let Some(at) = self.text.find(CALL_OPEN) {
                        let before: String = self.text.drain(..at + CALL_OPEN.len()).collect();
                        self.content(events, &before[..at]);
                        self.held_whitespace.clear();
                        self.mode = Mode::Call;
                        continue;
                    }
                    let keep = if at_end { 0 } else { held_tail(&self.text, CALL_OPEN) };
                    let ready: String = self.text.drain(..self.text.len() - keep).collect();
                    self.content(events, &ready);
                    return;
                }
                Mode::Call => {
                    self.call.push_str(&self.text);
                    self.text.clear();
                    if !self.call_named
                        && let Some(name) = xml_function_name(&self.call)
                    {
                        self.call_named = true;
                        events.push(OutputEvent::CallStarted { name });
                    }
                    let Some(at) = self.call.find(CALL_CLOSE) else { return };
                    let block: String = self.call.drain(..at + CALL_CLOSE.len()).collect();
                    self.text = std::mem::take(&mut self.call);
                    if let Some((name, arguments)) = parse_call(&block[..at]) {
                        if !self.call_named {
                            events.push(OutputEvent::CallStarted { name: name.clone() });
                        }
                        events.push(OutputEvent::CallFinished { name, arguments });
                    }
                    self.call_named = false;
                    self.mode = Mode::Content;
                }
            }
        }
    }

    fn content(&mut self, events: &mut Vec<OutputEvent>, text: &str) {
        let mut text = text;
        if !self.content_started {
            text = text.trim_start();
            if text.is_empty() {
                return;
            }
            self.content_started = true;
        }
        let body = text.trim_end();
        if body.is_empty() {
            self.held_whitespace.push_str(text);
            return;
        }
        let mut out = std::mem::take(&mut self.held_whitespace);
        out.push_str(body);
        self.held_whitespace.push_str(&text[body.len()..]);
        events.push(OutputEvent::Content(out));
    }
}

fn push_nonempty(events: &mut Vec<OutputEvent>, make: fn(String) -> OutputEvent, text: &str) {
    if !text.is_empty() {
        events.push(make(text.to_string()));
    }
}

/// How many bytes at the end of `text` could be the start of `marker` (and so must wait).
fn held_tail(text: &str, marker: &str) -> usize {
    let max = marker.len().saturating_sub(1).min(text.len());
    (1..=max)
        .rev()
        .find(|&n| text.is_char_boundary(text.len() - n) && marker.starts_with(&text[text.len() - n..]))
        .unwrap_or(0)
}

/// Takes the longest valid UTF-8 prefix out of `bytes`; invalid bytes become U+FFFD.
fn take_utf8(bytes: &mut Vec<u8>) -> String {
    let mut out = String::new();
    loop {
        match std::str::from_utf8(bytes) {
            Ok(text) => {
                out.push_str(text);
                bytes.clear();
                return out;
            }
            Err(error) => {
                let valid = error.valid_up_to();
                out.push_str(std::str::from_utf8(&bytes[..valid]).unwrap_or_default());
                match error.error_len() {
                    Some(bad) => {
                        out.push('\u{FFFD}');
                        bytes.drain(..valid + bad);
                    }
                    None => {
                        bytes.drain(..valid);
                        return out;
                    }
                }
            }
        }
    }
}

fn xml_function_name(call: &str) -> Option<String> {
    let start = call.find("<function=")? + "<function=".len();
    let end = call[start..].find('>')?;
    Some(call[start..start + end].trim().to_string())
}

/// Parses the inside of `<tool_call>…</tool_call>`.
fn parse_call(block: &str) -> Option<(String, RawArguments)> {
    let trimmed = block.trim();
    if trimmed.starts_with('{') {
        let value: Value = serde_json::from_str(trimmed).ok()?;
        let name = value.get("name")?.as_str()?.to_string();
        let arguments = match value.get("arguments") {
            Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::Object(Default::default())),
            Some(v) => v.clone(),
            None => Value::Object(Default::default()),
        };
        return Some((name, RawArguments::Json(arguments)));
    }
    let name = xml_function_name(trimmed)?;
    let mut parameters = Vec::new();
    let mut rest = trimmed;
    while let Some(open) = rest.find("<parameter=") {
        rest = &rest[open + "<parameter=".len()..];
        let name_end = rest.find('>')?;
        let parameter = rest[..name_end].trim().to_string();
        rest = &rest[name_end + 1..];
        let value_end = rest.find("</parameter>")?;
        let value = &rest[..value_end];
        let value = value.strip_prefix('\n').unwrap_or(value);
        let value = value.strip_suffix('\n').unwrap_or(value);
        parameters.push((parameter, value.to_string()));
        rest = &rest[value_end + "</parameter>".len()..];
    }
    Some((name, RawArguments::Parameters(parameters)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(starts_in_reasoning: bool, output: &str) -> (Vec<OutputEvent>, bool) {
        // One byte at a time, as the byte tokenizer delivers it.
        let mut parser = OutputParser::new(starts_in_reasoning);
        let mut events = Vec::new();
        for byte in output.bytes() {
            events.extend(parser.feed(&[u32::from(byte)]));
        }
        let (rest, unfinished) = parser.finish();
        events.extend(rest);
        (merge(events), unfinished)
    }

    fn merge(events: Vec<OutputEvent>) -> Vec<OutputEvent> {
        let mut merged: Vec<OutputEvent> = Vec::new();
        for event in events {
            match (merged.last_mut(), event) {
                (Some(OutputEvent::Content(a)), OutputEvent::Content(b)) => a.push_str(&b),
                (Some(OutputEvent::Reasoning(a)), OutputEvent::Reasoning(b)) => a.push_str(&b),
                (_, e) => merged.push(e),
            }
        }
        merged
    }

    #[test]
    fn reasoning_then_content_with_the_leading_newlines_dropped() {
        let (events, unfinished) = run(true, "Thinking about it.</think>\n\nHello from the mock engine.");
        assert_eq!(
            events,
            vec![
                OutputEvent::Reasoning("Thinking about it.".into()),
                OutputEvent::Content("Hello from the mock engine.".into())
            ]
        );
        assert!(!unfinished);
    }

    #[test]
    fn a_call_in_strata_script_form() {
        let script = "</think>\n\nLet me check.\n\n<tool_call>\n<function=fake__echo>\n<parameter=text>\nhi\n</parameter>\n</function>\n</tool_call>";
        let (events, unfinished) = run(true, script);
        assert_eq!(
            events,
            vec![
                OutputEvent::Content("Let me check.".into()),
                OutputEvent::CallStarted { name: "fake__echo".into() },
                OutputEvent::CallFinished {
                    name: "fake__echo".into(),
                    arguments: RawArguments::Parameters(vec![("text".into(), "hi".into())]),
                },
            ]
        );
        assert!(!unfinished);
    }

    #[test]
    fn an_output_that_ends_inside_a_call_is_unfinished() {
        let (events, unfinished) = run(false, "ok <tool_call>\n<function=a__b>\n<parameter=x>\n1");
        assert_eq!(events, vec![OutputEvent::Content("ok".into()), OutputEvent::CallStarted { name: "a__b".into() }]);
        assert!(unfinished);
    }

    #[test]
    fn a_partial_marker_at_the_end_is_content() {
        let (events, _) = run(false, "a <tool_ca");
        assert_eq!(events, vec![OutputEvent::Content("a <tool_ca".into())]);
    }

    #[test]
    fn the_json_call_form() {
        let (events, _) = run(false, "<tool_call>{\"name\":\"f\",\"arguments\":{\"a\":2}}</tool_call>");
        assert_eq!(
            events[1],
            OutputEvent::CallFinished { name: "f".into(), arguments: RawArguments::Json(serde_json::json!({"a": 2})) }
        );
    }

    #[test]
    fn multibyte_text_split_across_tokens_survives() {
        let (events, _) = run(false, "héllo – 日本");
        assert_eq!(events, vec![OutputEvent::Content("héllo – 日本".into())]);
    }
}
