//! The `strata_mcp` events of SPEC 6.2 as the harness reads them: its own types, written from the
//! clause and never the server's, so a verdict cannot inherit the server's mistakes. Each keeps the JSON
//! it came from for the cases that compare shapes byte for byte.

use serde::Deserialize;
use serde_json::Value;

use crate::check::CheckError;

/// One event, told apart by its `event` field.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "event", rename_all = "lowercase")]
pub enum Event {
    /// The model named a call.
    Start {
        /// The call id.
        id: String,
        /// The tool's name as offered to the model.
        name: String,
    },
    /// A call about to run.
    Call {
        /// The call id.
        id: String,
        /// The tool's name as offered to the model.
        name: String,
        /// The MCP server (null for a name no server offers).
        server: Option<String>,
        /// The tool's own name.
        tool: String,
        /// The arguments.
        arguments: Value,
        /// The tool round, from 1.
        round: u64,
    },
    /// What a call came to.
    Result(ResultEvent),
    /// The rounds ran out.
    Limit {
        /// `mcp.max_rounds`.
        max_rounds: u64,
    },
}

/// A `result` event.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ResultEvent {
    /// The call id.
    pub id: String,
    /// Whether the tool succeeded.
    pub ok: bool,
    /// Whether the call was announced and not run.
    #[serde(default)]
    pub skipped: bool,
    /// The result text, capped.
    pub text: String,
    /// The text's length before the cap.
    pub chars: u64,
    /// Whether the cap cut it.
    pub truncated: bool,
    /// How long the call took.
    pub ms: u64,
    /// The cached pictures (absent: none).
    #[serde(default)]
    pub media: Vec<Media>,
    /// The event as it came.
    #[serde(skip)]
    pub raw: Value,
}

/// One cached picture of a result (SPEC 8.6).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Media {
    /// `strata-tool-media:<name>`.
    #[serde(rename = "ref")]
    pub reference: String,
    /// `/tool-media/<name>`.
    pub url: String,
    /// The MIME type.
    pub mime: String,
    /// The picture's size in bytes.
    pub bytes: u64,
    /// Its width.
    pub width: u64,
    /// Its height.
    pub height: u64,
    /// The entry as it came.
    #[serde(skip)]
    pub raw: Value,
}

impl Media {
    /// The last segment of the URL: the picture's name.
    pub fn name(&self) -> &str {
        self.url.rsplit('/').next().unwrap_or_default()
    }
}

/// Reads one event; one that does not have 6.2's fields and types fails the check, naming what is wrong.
pub fn parse(value: &Value) -> Result<Event, CheckError> {
    let mut event = serde_json::from_value::<Event>(value.clone()).map_err(|error| CheckError::Fail {
        expected: "a strata_mcp event with SPEC 6.2's fields and types".into(),
        actual: format!("{error}: {}", value.to_string().chars().take(300).collect::<String>()),
    })?;
    if let Event::Result(result) = &mut event {
        result.raw = value.clone();
        let entries = value.get("media").and_then(Value::as_array).into_iter().flatten();
        for (media, raw) in result.media.iter_mut().zip(entries) {
            media.raw = raw.clone();
        }
    }
    Ok(event)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_kind_reads_and_a_wrong_type_fails_naming_the_field() {
        let start = parse(&json!({"event": "start", "id": "c", "name": "s__t"})).expect("start");
        assert_eq!(start, Event::Start { id: "c".into(), name: "s__t".into() });
        let media = json!({"ref": "strata-tool-media:a.png", "url": "/tool-media/a.png", "mime": "image/png", "bytes": 3, "width": 1, "height": 2});
        let value = json!({"event": "result", "id": "c", "ok": true, "text": "t", "chars": 1, "truncated": false, "ms": 4, "media": [media]});
        let Ok(Event::Result(result)) = parse(&value) else { panic!("a result") };
        assert_eq!((result.media[0].name(), result.media[0].height, &result.raw), ("a.png", 2, &value));
        assert_eq!(result.media[0].raw, media);
        assert!(!result.skipped);
        assert_eq!(parse(&json!({"event": "limit", "max_rounds": 2})).ok(), Some(Event::Limit { max_rounds: 2 }));
        let Err(CheckError::Fail { actual, .. }) = parse(&json!({"event": "result", "id": "c", "success": true}))
        else {
            panic!("a result without ok must fail")
        };
        assert!(actual.contains("ok"), "{actual}");
        assert!(parse(&json!({"event": "started", "id": "c"})).is_err());
    }
}
