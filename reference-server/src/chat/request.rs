//! `POST /v1/chat/completions` bodies: the OpenAI shape (and the image part shapes of strata-wire C-D1)
//! read into [`ChatRequest`]. Anything of the wrong type is a 400 that says which field (SPEC 4.2, 4.10).

use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::messages::{ImageSource, Message, Part, Role, ToolCall, ToolSpec};

/// A chat request, parsed.
#[derive(Debug, Clone)]
pub struct ChatRequest {
    /// The conversation.
    pub messages: Vec<Message>,
    /// The request's own tools (the client runs them).
    pub tools: Vec<ToolSpec>,
    /// Stream as server-sent events.
    pub stream: bool,
    /// The most tokens to generate per round; `None` means the rest of the context.
    pub max_tokens: Option<usize>,
    /// `"strata_mcp": true` exactly (SPEC 6.1).
    pub strata_mcp: bool,
    /// `tool_choice` names one function or is `"required"`.
    pub forced_tool_choice: bool,
    /// `response_format` asks for json_object or json_schema.
    pub structured_response: bool,
    /// The `model` the client named.
    pub model: Option<String>,
}

impl ChatRequest {
    /// Reads a request body.
    pub fn from_json(body: &Value) -> Result<Self, ApiError> {
        let object = body.as_object().ok_or_else(|| ApiError::malformed("the body must be a JSON object"))?;
        let messages = match object.get("messages") {
            Some(Value::Array(items)) if !items.is_empty() => {
                items.iter().enumerate().map(|(i, m)| message(i, m)).collect::<Result<Vec<_>, _>>()?
            }
            Some(Value::Array(_)) => return Err(ApiError::malformed("messages is empty")),
            _ => return Err(ApiError::malformed("messages must be a list of messages")),
        };
        let tools = match object.get("tools") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items.iter().enumerate().map(|(i, t)| tool(i, t)).collect::<Result<_, _>>()?,
            Some(_) => return Err(ApiError::malformed("tools must be a list")),
        };
        let stream = match object.get("stream") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(ApiError::malformed("stream must be true or false")),
        };
        let max_tokens = max_tokens(object)?;
        let strata_mcp = object.get("strata_mcp") == Some(&Value::Bool(true));
        let forced_tool_choice = match object.get("tool_choice") {
            Some(Value::String(s)) => s == "required",
            Some(Value::Object(_)) => true,
            _ => false,
        };
        let structured_response = object
            .get("response_format")
            .and_then(|f| f.get("type"))
            .and_then(Value::as_str)
            .is_some_and(|t| t == "json_object" || t == "json_schema");
        let model = object.get("model").and_then(Value::as_str).map(str::to_string);
        Ok(Self { messages, tools, stream, max_tokens, strata_mcp, forced_tool_choice, structured_response, model })
    }
}

fn max_tokens(object: &Map<String, Value>) -> Result<Option<usize>, ApiError> {
    let value = object.get("max_tokens").or_else(|| object.get("max_completion_tokens"));
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_i64() {
            Some(0 | -1) => Ok(None),
            Some(n) if n > 0 => Ok(Some(n as usize)),
            _ => Err(ApiError::malformed("max_tokens must be a positive integer")),
        },
    }
}

fn message(index: usize, value: &Value) -> Result<Message, ApiError> {
    let at = |what: &str| ApiError::malformed(format!("messages[{index}]: {what}"));
    let object = value.as_object().ok_or_else(|| at("a message must be an object"))?;
    let role = match object.get("role").and_then(Value::as_str) {
        Some("system" | "developer") => Role::System,
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("tool") => Role::Tool,
        Some(other) => return Err(at(&format!("unknown role '{}'", other.chars().take(40).collect::<String>()))),
        None => return Err(at("role must be a string")),
    };
    let parts = match object.get("content") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(text)) => vec![Part::Text(text.clone())],
        Some(Value::Array(items)) => {
            items.iter().enumerate().map(|(j, p)| part(index, j, p)).collect::<Result<Vec<_>, _>>()?
        }
        Some(_) => return Err(at("content must be a string or a list of parts")),
    };
    let tool_calls = match object.get("tool_calls") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(calls)) => calls.iter().map(|c| tool_call(index, c)).collect::<Result<_, _>>()?,
        Some(_) => return Err(at("tool_calls must be a list")),
    };
    Ok(Message { role, parts, tool_calls })
}

fn part(index: usize, at_part: usize, value: &Value) -> Result<Part, ApiError> {
    let at = |what: &str| ApiError::malformed(format!("messages[{index}].content[{at_part}]: {what}"));
    if let Value::String(text) = value {
        return Ok(Part::Text(text.clone()));
    }
    let object = value.as_object().ok_or_else(|| at("a part must be an object"))?;
    let kind = object.get("type").and_then(Value::as_str).ok_or_else(|| at("type must be a string"))?;
    let url_of = |v: Option<&Value>| -> Result<String, ApiError> {
        match v {
            Some(Value::String(url)) => Ok(url.clone()),
            Some(Value::Object(inner)) => match inner.get("url") {
                Some(Value::String(url)) => Ok(url.clone()),
                _ => Err(at("image_url.url must be a string")),
            },
            _ => Err(at("image_url must be a string or {\"url\": …}")),
        }
    };
    match kind {
        "text" | "input_text" => match object.get("text") {
            Some(Value::String(text)) => Ok(Part::Text(text.clone())),
            _ => Err(at("text must be a string")),
        },
        "image_url" | "input_image" => Ok(Part::Image(ImageSource::Url(url_of(object.get("image_url"))?))),
        "image" => {
            let source =
                object.get("source").and_then(Value::as_object).ok_or_else(|| at("source must be an object"))?;
            match source.get("type").and_then(Value::as_str) {
                Some("base64") => {
                    let mime = source.get("media_type").and_then(Value::as_str).unwrap_or("image/png");
                    let data =
                        source.get("data").and_then(Value::as_str).ok_or_else(|| at("source.data must be a string"))?;
                    Ok(Part::Image(ImageSource::Url(format!("data:{mime};base64,{data}"))))
                }
                Some("url") => Ok(Part::Image(ImageSource::Url(url_of(source.get("url"))?))),
                _ => Err(at("source.type must be base64 or url")),
            }
        }
        other => Err(at(&format!("unsupported part type '{}'", other.chars().take(40).collect::<String>()))),
    }
}

fn tool_call(index: usize, value: &Value) -> Result<ToolCall, ApiError> {
    let at = |what: &str| ApiError::malformed(format!("messages[{index}].tool_calls: {what}"));
    let function = value.get("function").and_then(Value::as_object).ok_or_else(|| at("function must be an object"))?;
    let name = function.get("name").and_then(Value::as_str).ok_or_else(|| at("function.name must be a string"))?;
    let arguments = match function.get("arguments") {
        Some(Value::String(text)) => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone())),
        Some(other) => other.clone(),
        None => Value::Object(Map::new()),
    };
    let id = value.get("id").and_then(Value::as_str).map(str::to_string);
    Ok(ToolCall { id, name: name.to_string(), arguments })
}

fn tool(index: usize, value: &Value) -> Result<ToolSpec, ApiError> {
    let at = |what: &str| ApiError::malformed(format!("tools[{index}]: {what}"));
    let function = value.get("function").and_then(Value::as_object).ok_or_else(|| at("function must be an object"))?;
    let name = function.get("name").and_then(Value::as_str).ok_or_else(|| at("function.name must be a string"))?;
    let description = function.get("description").and_then(Value::as_str).unwrap_or_default();
    let parameters = match function.get("parameters") {
        Some(p @ Value::Object(_)) => p.clone(),
        _ => serde_json::json!({"type": "object", "properties": {}}),
    };
    Ok(ToolSpec { name: name.to_string(), description: description.to_string(), parameters })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strata_mcp_counts_only_as_the_json_boolean() {
        let base = |flag: Value| json!({"messages": [{"role": "user", "content": "hi"}], "strata_mcp": flag});
        assert!(ChatRequest::from_json(&base(json!(true))).expect("valid").strata_mcp);
        for other in [json!("yes"), json!(1), json!("true"), json!(null)] {
            assert!(!ChatRequest::from_json(&base(other)).expect("valid").strata_mcp);
        }
    }

    #[test]
    fn wrong_types_are_malformed_and_name_the_field() {
        let cases = [
            (json!([]), "JSON object"),
            (json!({"messages": "hi"}), "messages"),
            (json!({"messages": []}), "empty"),
            (json!({"messages": [{"role": 3}]}), "messages[0]"),
            (json!({"messages": [{"role": "user", "content": 5}]}), "messages[0]"),
            (json!({"messages": [{"role": "user", "content": "x"}], "stream": "yes"}), "stream"),
            (json!({"messages": [{"role": "user", "content": "x"}], "max_tokens": "9"}), "max_tokens"),
        ];
        for (body, needle) in cases {
            let err = ChatRequest::from_json(&body).expect_err(&body.to_string());
            assert_eq!(err.status.as_u16(), 400);
            assert!(err.message.starts_with("the request is malformed ("), "{}", err.message);
            assert!(err.message.contains(needle), "{} lacks {needle}", err.message);
        }
    }

    #[test]
    fn every_image_part_shape_becomes_a_picture() {
        let body = json!({"messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
            {"type": "image_url", "image_url": "data:image/png;base64,AB"},
            {"type": "input_image", "image_url": "data:image/png;base64,AC"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "AD"}},
        ]}]});
        let request = ChatRequest::from_json(&body).expect("valid");
        let urls: Vec<_> = request.messages[0]
            .parts
            .iter()
            .map(|p| match p {
                Part::Image(ImageSource::Url(u)) => u.clone(),
                other => panic!("not a picture: {other:?}"),
            })
            .collect();
        assert_eq!(urls[3], "data:image/jpeg;base64,AD");
        assert_eq!(urls.len(), 4);
    }
}
