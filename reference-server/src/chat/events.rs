//! The `strata_mcp` events of SPEC 6.2 and the finish reasons of 4.3, as types: one enum, serialized
//! (internally tagged by `event`) into exactly the shapes the clause lists, fields in its order.

use serde::Serialize;
use serde_json::Value;

/// One `strata_mcp` event.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "lowercase")]
pub enum McpEvent {
    /// The model named a call: `{"event":"start","id","name"}`.
    Start {
        /// The call id.
        id: String,
        /// The tool's name as the model sees it.
        name: String,
    },
    /// Just before the call runs: `{"event":"call","id","name","server","tool","arguments","round"}`.
    Call {
        /// The call id.
        id: String,
        /// The tool's name as the model sees it.
        name: String,
        /// The MCP server, or null for a name no server offers.
        server: Option<String>,
        /// The tool's own name on that server.
        tool: String,
        /// The arguments.
        arguments: Value,
        /// The tool round, from 1.
        round: usize,
    },
    /// After the call, or for a call that was announced and not run.
    Result(ResultEvent),
    /// The rounds ran out: `{"event":"limit","max_rounds":N}`.
    Limit {
        /// The configured `mcp.max_rounds`.
        max_rounds: usize,
    },
}

/// `{"event":"result","id","ok","text","chars","truncated","ms"}`, plus `"skipped":true` after `ok`
/// for a call not run, and `media` last when pictures were cached (8.6).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultEvent {
    /// The call id.
    pub id: String,
    /// Whether the tool succeeded.
    pub ok: bool,
    /// Present (true) only for a call that was not run.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub skipped: bool,
    /// The result text, capped.
    pub text: String,
    /// The text's length before the cap, in characters.
    pub chars: usize,
    /// Whether the cap cut it.
    pub truncated: bool,
    /// How long the call took.
    pub ms: u64,
    /// The cached pictures, when there are any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<MediaEntry>,
}

impl ResultEvent {
    /// The result of a call announced and not run (strata-wire C-J4).
    pub fn not_run(id: &str) -> Self {
        Self {
            id: id.to_string(),
            ok: false,
            skipped: true,
            text: "not run".into(),
            chars: 0,
            truncated: false,
            ms: 0,
            media: Vec::new(),
        }
    }
}

/// One cached picture of a result (SPEC 8.6).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MediaEntry {
    /// `strata-tool-media:<name>`.
    #[serde(rename = "ref")]
    pub reference: String,
    /// `/tool-media/<name>`.
    pub url: String,
    /// The format's MIME type.
    pub mime: &'static str,
    /// The picture's size.
    pub bytes: usize,
    /// Its width.
    pub width: u32,
    /// Its height.
    pub height: u32,
}

impl McpEvent {
    /// As JSON, for a chunk or a whole answer.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// Why an answer ended (SPEC 4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishReason {
    /// The model finished, or the tool rounds ran out.
    Stop,
    /// The token budget ran out.
    Length,
    /// The model called one of the request's own tools.
    ToolCalls,
}

impl FinishReason {
    /// Its wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::ToolCalls => "tool_calls",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_event_has_the_exact_shape_and_order_of_6_2() {
        let start = McpEvent::Start { id: "c1".into(), name: "s__t".into() };
        assert_eq!(start.to_json().to_string(), r#"{"event":"start","id":"c1","name":"s__t"}"#);
        let call = McpEvent::Call {
            id: "c1".into(),
            name: "s__t".into(),
            server: None,
            tool: "s__t".into(),
            arguments: json!({"a": 1}),
            round: 1,
        };
        assert_eq!(
            call.to_json().to_string(),
            r#"{"event":"call","id":"c1","name":"s__t","server":null,"tool":"s__t","arguments":{"a":1},"round":1}"#
        );
        let skipped = McpEvent::Result(ResultEvent::not_run("c2"));
        assert_eq!(
            skipped.to_json().to_string(),
            r#"{"event":"result","id":"c2","ok":false,"skipped":true,"text":"not run","chars":0,"truncated":false,"ms":0}"#
        );
        let media = MediaEntry {
            reference: "strata-tool-media:x.png".into(),
            url: "/tool-media/x.png".into(),
            mime: "image/png",
            bytes: 3,
            width: 1,
            height: 2,
        };
        let result = McpEvent::Result(ResultEvent {
            id: "c3".into(),
            ok: true,
            skipped: false,
            text: "t".into(),
            chars: 1,
            truncated: false,
            ms: 5,
            media: vec![media],
        });
        assert_eq!(
            result.to_json().to_string(),
            r#"{"event":"result","id":"c3","ok":true,"text":"t","chars":1,"truncated":false,"ms":5,"media":[{"ref":"strata-tool-media:x.png","url":"/tool-media/x.png","mime":"image/png","bytes":3,"width":1,"height":2}]}"#
        );
        assert_eq!(McpEvent::Limit { max_rounds: 8 }.to_json().to_string(), r#"{"event":"limit","max_rounds":8}"#);
    }
}
