//! The conversation as the server understands it, whatever the client's wire shape: roles, text and
//! picture parts, tool calls and tool results (SPEC 4.2).

use serde_json::Value;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Instructions.
    System,
    /// The person.
    User,
    /// The model.
    Assistant,
    /// A tool's result.
    Tool,
}

impl Role {
    /// The role's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// Where a picture comes from, before it is prepared.
#[derive(Debug, Clone, PartialEq)]
pub enum ImageSource {
    /// `data:<mime>;base64,<data>` or any other URL string the client sent.
    Url(String),
    /// Decoded bytes the server already holds (an MCP result, or a picture lifted out of tool text).
    Bytes(std::sync::Arc<Vec<u8>>),
}

/// One piece of a message's content.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// Text.
    Text(String),
    /// A picture.
    Image(ImageSource),
}

/// A call the model made.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The call id, when known.
    pub id: Option<String>,
    /// The function name.
    pub name: String,
    /// The arguments object.
    pub arguments: Value,
}

/// One message.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its content, in order. A plain string is one text part.
    pub parts: Vec<Part>,
    /// Calls an assistant message made.
    pub tool_calls: Vec<ToolCall>,
}

impl Message {
    /// A message holding one text.
    pub fn text(role: Role, text: impl Into<String>) -> Self {
        Self { role, parts: vec![Part::Text(text.into())], tool_calls: Vec::new() }
    }
}

/// A function the model may call, as offered in the prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The name the model writes.
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON Schema of its arguments (always an object schema).
    pub parameters: Value,
}

impl ToolSpec {
    /// The OpenAI form `{"type":"function","function":{name, description, parameters}}`.
    pub fn openai_json(&self) -> Value {
        serde_json::json!({
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        })
    }

    /// The declared JSON type of a parameter, if the schema says.
    pub fn parameter_type(&self, parameter: &str) -> Option<&str> {
        self.parameters.get("properties")?.get(parameter)?.get("type")?.as_str()
    }
}
