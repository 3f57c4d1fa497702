//! Reading a server-sent-event body the way any client would: `data:` lines as JSON, `[DONE]`, and
//! comments. The harness has its own reader on purpose — it never borrows the server's code.

use serde_json::Value;

use crate::check::CheckError;
use crate::events::{self, Event, ResultEvent};

/// A parsed event stream.
#[derive(Debug, Default, Clone)]
pub struct EventStream {
    /// Every JSON `data:` payload, in order.
    pub chunks: Vec<Value>,
    /// Lines of `data:` that were not JSON (other than `[DONE]`).
    pub bad_lines: Vec<String>,
    /// Comment lines (`: keep-alive`).
    pub comments: usize,
    /// Whether `data: [DONE]` came.
    pub done: bool,
    /// Whether anything came after `[DONE]`.
    pub data_after_done: bool,
}

impl EventStream {
    /// Parses a whole body.
    pub fn parse(body: &str) -> Self {
        let mut stream = EventStream::default();
        for line in body.lines() {
            if line.starts_with(':') {
                stream.comments += 1;
            } else if let Some(data) = line.strip_prefix("data:") {
                let data = data.trim_start();
                if stream.done {
                    stream.data_after_done = true;
                }
                if data == "[DONE]" {
                    stream.done = true;
                } else {
                    match serde_json::from_str(data) {
                        Ok(value) => stream.chunks.push(value),
                        Err(_) => stream.bad_lines.push(data.chars().take(200).collect()),
                    }
                }
            }
        }
        stream
    }

    /// `delta.content` joined.
    pub fn content(&self) -> String {
        self.chunks.iter().filter_map(|c| c["choices"][0]["delta"]["content"].as_str()).collect()
    }

    /// `delta.reasoning_content` joined.
    pub fn reasoning(&self) -> String {
        self.chunks.iter().filter_map(|c| c["choices"][0]["delta"]["reasoning_content"].as_str()).collect()
    }

    /// The `strata_mcp` objects as they came, in order.
    pub fn mcp_events(&self) -> Vec<Value> {
        self.chunks.iter().filter_map(|c| c.get("strata_mcp").cloned()).collect()
    }

    /// The `strata_mcp` events read as SPEC 6.2's (one that does not read fails the check).
    pub fn events(&self) -> Result<Vec<Event>, CheckError> {
        self.mcp_events().iter().map(events::parse).collect()
    }

    /// The `result` events.
    pub fn results(&self) -> Result<Vec<ResultEvent>, CheckError> {
        let events = self.events()?.into_iter();
        Ok(events.filter_map(|e| if let Event::Result(result) = e { Some(result) } else { None }).collect())
    }

    /// The chunk carrying `usage`.
    pub fn usage(&self) -> Option<&Value> {
        self.chunks.iter().rev().find_map(|c| c.get("usage"))
    }

    /// The last chunk's finish reason.
    pub fn finish_reason(&self) -> Option<&str> {
        self.chunks.iter().rev().find_map(|c| c["choices"][0]["finish_reason"].as_str())
    }
}
