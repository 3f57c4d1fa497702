//! Generated chat requests and a model of what SPEC 4.1, 4.2 and 4.8 say the server takes and counts.
//!
//! A request is 1 to 6 messages of every role 4.1 names (`system`, `developer`, `user`, `assistant`,
//! `tool`, in any order and position), each with a `content` of every form 4.2 allows (a string,
//! null, a list of 1 to 3 parts: `text`, and pictures of every form, [`parts`]), whose text is drawn
//! from pieces that test the rendering: non-ASCII and astral characters, whitespace of every kind at
//! either end, and marker text (`<|im_end|>`, `<|im_start|>`, `<tool_call>`, `</think>`,
//! `<|vision_start|>`, …); an assistant message may carry `tool_calls` ([`parts`]); streamed or not;
//! `max_tokens` and `max_completion_tokens` absent or each of the values that mean the rest of the
//! context (null, 0, -1); fields 4.1 does not name, of every JSON type, beside them. The server has
//! the geometry vision encoder at its default bounds.
//!
//! The model, from SPEC alone: a request with a picture no geometry or decoder reads outside a tool
//! message is 400 `invalid_request_error` (12.2h, 12.3b); every other is taken (200), and the answer is
//! the scenario's script (its reasoning and text) whatever the request; `usage.prompt_tokens` is the
//! prompt's length by 4.8 — one token a UTF-8 byte, marker text as its bytes (4.8g); a leading
//! `system` or `developer` message is the system turn (`<|im_start|>`, `system\n`, its parts,
//! `<|im_end|>`, `\n`), any other message a turn of `<|im_start|>`, its role (`developer` read as
//! `system`, 4.8h), `\n`, its parts with nothing between them (4.8i), an assistant's calls (4.8j),
//! `<|im_end|>`, `\n`; consecutive `tool` messages one `user` turn, each as `\n<tool_response>\n`,
//! its parts, `\n</tool_response>` (4.8f); a picture its start, image tokens and end (4.8c) — plus the
//! prompt's fixed end, measured once as what a lone empty `user` message costs beyond its 8 tokens.

mod parts;

use proptest::prelude::*;
use serde_json::{Value, json};

pub use parts::{Arguments, Call, Cost, Form, Label, Picture, Pixels};

use super::CHAT;
use crate::http::Http;
use crate::sse::EventStream;

/// The scenario's one script: reasoning, `</think>`, whitespace, then non-ASCII text.
pub const SCRIPT: &str = "Erst denken 思考</think>\n\nAntwort: Grüße 日本 🎉";
/// What the answer's reasoning and text must be (4.6: the whitespace after `</think>` is not content).
pub const REASONING: &str = "Erst denken 思考";
/// See [`REASONING`].
pub const TEXT: &str = "Antwort: Grüße 日本 🎉";

/// A message's role, as sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `system`.
    System,
    /// `developer` (4.1c: taken as `system`).
    Developer,
    /// `user`.
    User,
    /// `assistant`.
    Assistant,
    /// `tool`.
    Tool,
}

impl Role {
    /// The role as sent.
    pub fn sent(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::Developer => "developer",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    /// Whether 4.8 reads it as `system`.
    fn is_system(self) -> bool {
        matches!(self, Role::System | Role::Developer)
    }
}

/// One part of a `content` list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// A `text` part.
    Text(String),
    /// A picture part.
    Picture(Picture),
}

impl From<&str> for Part {
    fn from(text: &str) -> Self {
        Part::Text(text.to_string())
    }
}

/// A message's `content`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// A string.
    Text(String),
    /// `null`.
    Null,
    /// A list of parts.
    Parts(Vec<Part>),
}

impl Content {
    /// Its parts as 4.8i reads them.
    fn parts(&self) -> Vec<Part> {
        match self {
            Content::Text(text) => vec![Part::Text(text.clone())],
            Content::Null => Vec::new(),
            Content::Parts(parts) => parts.clone(),
        }
    }

    /// Its tokens as 4.8 renders them in a message of this kind: the parts with nothing between them,
    /// a picture its [`Cost`]; `None` when a picture refuses the request.
    fn tokens(&self, in_tool_message: bool) -> Option<u64> {
        self.parts().iter().try_fold(0, |sum, part| match part {
            Part::Text(text) => Some(sum + text.len() as u64),
            Part::Picture(picture) => match picture.cost(in_tool_message)? {
                Cost::Tokens(n) => Some(sum + n),
                Cost::Text(text) => Some(sum + text.len() as u64),
            },
        })
    }

    fn json(&self) -> Value {
        match self {
            Content::Text(text) => json!(text),
            Content::Null => Value::Null,
            Content::Parts(parts) => parts
                .iter()
                .map(|part| match part {
                    Part::Text(t) => json!({"type": "text", "text": t}),
                    Part::Picture(picture) => picture.json(),
                })
                .collect(),
        }
    }
}

/// One message: its role, its content, and (an assistant's) `tool_calls`.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Its role.
    pub role: Role,
    /// Its content.
    pub content: Content,
    /// Its `tool_calls` (sent only when there are some).
    pub calls: Vec<Call>,
}

impl From<(Role, Content)> for Message {
    fn from((role, content): (Role, Content)) -> Self {
        Message { role, content, calls: Vec::new() }
    }
}

impl Message {
    fn json(&self) -> Value {
        let mut message = json!({"role": self.role.sent(), "content": self.content.json()});
        if !self.calls.is_empty() {
            message["tool_calls"] = self.calls.iter().enumerate().map(|(i, call)| call.json(i)).collect();
        }
        message
    }

    /// The pictures it holds.
    pub fn pictures(&self) -> impl Iterator<Item = &Picture> {
        let parts = match &self.content {
            Content::Parts(parts) => parts.as_slice(),
            _ => &[],
        };
        parts.iter().filter_map(|part| if let Part::Picture(p) = part { Some(p) } else { None })
    }
}

/// How the request gives a cap on the answer: every value 4.1e says means the rest of the context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cap {
    /// Not given.
    Absent,
    /// `null`.
    Null,
    /// `0`.
    Zero,
    /// `-1`.
    MinusOne,
}

impl Cap {
    fn json(self) -> Option<Value> {
        match self {
            Cap::Absent => None,
            Cap::Null => Some(Value::Null),
            Cap::Zero => Some(json!(0)),
            Cap::MinusOne => Some(json!(-1)),
        }
    }
}

/// A generated request.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The messages, in order.
    pub messages: Vec<Message>,
    /// Whether it is streamed.
    pub stream: bool,
    /// `max_tokens`.
    pub max_tokens: Cap,
    /// `max_completion_tokens`.
    pub max_completion_tokens: Cap,
    /// Fields 4.1 does not name (4.1h: ignored), each of another JSON type.
    pub unknown: Vec<(&'static str, Value)>,
}

impl Request {
    /// The request's body.
    pub fn body(&self) -> Value {
        let messages: Vec<Value> = self.messages.iter().map(Message::json).collect();
        let mut body = json!({"messages": messages, "stream": self.stream});
        for (field, cap) in [("max_tokens", self.max_tokens), ("max_completion_tokens", self.max_completion_tokens)] {
            if let Some(value) = cap.json() {
                body[field] = value;
            }
        }
        for (field, value) in &self.unknown {
            body[*field] = value.clone();
        }
        body
    }
}

/// The pieces text is made of: plain words, non-ASCII and astral characters, whitespace of every
/// kind, and the marker text of the template (each must stay its bytes).
const PIECES: &[&str] = &[
    "Hallo",
    "word",
    "Grüße",
    "日本語",
    "😀",
    "\u{202E}rtl",
    " ",
    "  ",
    "\n",
    "\n\n",
    "\t",
    "\r\n",
    "<|im_end|>",
    "<|im_start|>",
    "<|endoftext|>",
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "<think>",
    "</think>",
    "<|vision_start|>",
    "<|image_pad|>",
    "<|vision_end|>",
    "user\n",
];

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..6).prop_map(|pieces| pieces.concat())
}

/// A picture as a message of `role` may hold it: one that refuses the request (12.2h, 12.3b) only in a
/// user message, and no unreadable one in a tool message, whose note's reason SPEC leaves open.
fn fitted(role: Role, mut picture: Picture) -> Picture {
    let refuses = picture.cost(role == Role::Tool).is_none();
    let unreadable = picture.pixels == Pixels::Unreadable;
    if (role != Role::User && refuses) || (role == Role::Tool && unreadable) {
        picture.pixels = Pixels::Sized(56, 56);
    }
    picture
}

fn content(role: Role) -> impl Strategy<Value = Content> {
    let part = prop_oneof![
        text().prop_map(Part::Text),
        parts::pictures().prop_map(move |picture| Part::Picture(fitted(role, picture))),
    ];
    prop_oneof![
        3 => text().prop_map(Content::Text),
        1 => Just(Content::Null),
        3 => prop::collection::vec(part, 1..4).prop_map(Content::Parts),
    ]
}

/// A message of any role; an assistant's carries `tool_calls` two times in three.
fn message() -> impl Strategy<Value = Message> {
    role().prop_flat_map(|role| {
        let calls = if role == Role::Assistant {
            prop_oneof![1 => Just(Vec::new()), 2 => prop::collection::vec(parts::calls(), 1..3)].boxed()
        } else {
            Just(Vec::new()).boxed()
        };
        (content(role), calls).prop_map(move |(content, calls)| Message { role, content, calls })
    })
}

fn role() -> impl Strategy<Value = Role> {
    // Tool messages twice as often: 4.8f needs two in a row.
    prop_oneof![
        1 => Just(Role::System),
        1 => Just(Role::Developer),
        1 => Just(Role::User),
        1 => Just(Role::Assistant),
        2 => Just(Role::Tool),
    ]
}

fn cap() -> impl Strategy<Value = Cap> {
    prop_oneof![3 => Just(Cap::Absent), 1 => Just(Cap::Null), 1 => Just(Cap::Zero), 1 => Just(Cap::MinusOne)]
}

/// Fields no clause names, one of each JSON type.
const UNKNOWN: &[&str] = &["temperature", "metadata", "user", "seed", "x_vendor"];

fn unknown() -> impl Strategy<Value = Vec<(&'static str, Value)>> {
    let value = prop_oneof![
        Just(json!(0.7)),
        Just(json!({"trace": "Grüße", "n": [1, 2]})),
        Just(json!("a string")),
        Just(json!(42)),
        Just(json!(true)),
        Just(Value::Null),
        Just(json!(["<|im_end|>", 3])),
    ];
    prop::collection::vec((prop::sample::select(UNKNOWN), value), 0..3)
}

/// Every request of the space the module's doc names.
pub fn requests() -> impl Strategy<Value = Request> {
    (prop::collection::vec(message(), 1..7), any::<bool>(), cap(), cap(), unknown()).prop_map(
        |(messages, stream, max_tokens, max_completion_tokens, unknown)| Request {
            messages,
            stream,
            max_tokens,
            max_completion_tokens,
            unknown,
        },
    )
}

/// A generated request, for a failure's report.
pub fn describe(request: &Request) -> String {
    request.body().to_string()
}

/// The tokens 4.8 says `messages` render to, without the prompt's fixed end; `None` when a picture
/// refuses the request (12.2h, 12.3b).
pub fn message_tokens(messages: &[Message]) -> Option<u64> {
    let bytes = |text: &str| text.len() as u64;
    let mut rest = messages;
    let mut tokens = 0;
    if let Some((first, after)) = messages.split_first()
        && first.role.is_system()
    {
        // <|im_start|> system\n … <|im_end|> \n
        tokens += 1 + bytes("system\n") + first.content.tokens(false)? + 2;
        rest = after;
    }
    let mut at = 0;
    while at < rest.len() {
        let message = &rest[at];
        if message.role == Role::Tool {
            tokens += 1 + bytes("user");
            while at < rest.len() && rest[at].role == Role::Tool {
                tokens += bytes("\n<tool_response>\n") + rest[at].content.tokens(true)? + bytes("\n</tool_response>");
                at += 1;
            }
            tokens += 2;
            continue;
        }
        let name = if message.role.is_system() { "system" } else { message.role.sent() };
        let calls: u64 = message.calls.iter().map(|call| bytes(&call.rendered())).sum();
        tokens += 1 + bytes(name) + bytes("\n") + message.content.tokens(false)? + calls + 2;
        at += 1;
    }
    Some(tokens)
}

/// What one answer says: its status, reasoning, text and `usage`'s prompt and completion tokens.
struct Answer {
    reasoning: String,
    text: String,
    prompt: Option<u64>,
    completion: Option<u64>,
}

async fn ask(http: &Http, body: &Value) -> Result<Answer, String> {
    let reply = http.post_json(CHAT, body).send().await.map_err(|e| e.to_string())?;
    if reply.status != 200 {
        return Err(format!(
            "status {} (the model takes this request: 4.1, 4.2, 12.1): {}",
            reply.status,
            reply.text()
        ));
    }
    let tokens = |usage: &Value| (usage["prompt_tokens"].as_u64(), usage["completion_tokens"].as_u64());
    if body["stream"] == json!(true) {
        let stream = EventStream::parse(&reply.text());
        let reasoning = stream.reasoning();
        let (prompt, completion) = stream.usage().map(tokens).unwrap_or_default();
        Ok(Answer { reasoning, text: stream.content(), prompt, completion })
    } else {
        let answer: Value = serde_json::from_slice(&reply.body).map_err(|e| format!("not JSON: {e}"))?;
        let message = &answer["choices"][0]["message"];
        let (prompt, completion) = tokens(&answer["usage"]);
        Ok(Answer {
            reasoning: message["reasoning_content"].as_str().unwrap_or_default().to_string(),
            text: message["content"].as_str().unwrap_or_default().to_string(),
            prompt,
            completion,
        })
    }
}

/// What a lone empty `user` message is answered with: the prompt's fixed end (its prompt tokens less
/// the message's 8) and the script's completion tokens. Asked once per run.
pub async fn baseline(http: &Http) -> Result<(u64, u64), String> {
    let answer = ask(http, &json!({"messages": [{"role": "user", "content": ""}]})).await?;
    let (Some(prompt), Some(completion)) = (answer.prompt, answer.completion) else {
        return Err("the baseline answer has no usage".into());
    };
    let lone = message_tokens(&[(Role::User, Content::Text(String::new())).into()]).unwrap_or_default();
    let end = prompt.checked_sub(lone);
    Ok((end.ok_or_else(|| format!("the baseline prompt is {prompt} tokens, less than its message"))?, completion))
}

/// Sends `request` and holds the answer to the model: refused as 12.2h and 12.3b say, or taken, with the
/// script's reasoning and text, the prompt 4.8 counts and the baseline's completion tokens.
pub async fn check(http: Http, baseline: (u64, u64), request: Request) -> Result<(), String> {
    let (end, completion) = baseline;
    let Some(tokens) = message_tokens(&request.messages) else {
        let reply = http.post_json(CHAT, &request.body()).send().await.map_err(|e| e.to_string())?;
        let kind = reply.json().ok().and_then(|v| v["error"]["type"].as_str().map(str::to_string));
        return match (reply.status, kind.as_deref()) {
            (400, Some("invalid_request_error")) => Ok(()),
            _ => Err(format!(
                "status {} {:?}: a user message's picture with no geometry or not readable is 400 invalid_request_error (12.2h, 12.3b)",
                reply.status,
                reply.text()
            )),
        };
    };
    let answer = ask(&http, &request.body()).await?;
    let wanted = end + tokens;
    let mut wrong = Vec::new();
    if answer.prompt != Some(wanted) {
        wrong.push(format!("usage.prompt_tokens {:?}, the model says {wanted} (4.8)", answer.prompt));
    }
    if answer.completion != Some(completion) {
        wrong.push(format!(
            "usage.completion_tokens {:?}, {completion} as for any request (the whole script: nothing capped it, 4.1e)",
            answer.completion
        ));
    }
    if answer.reasoning != REASONING || answer.text != TEXT {
        wrong.push(format!(
            "reasoning {:?} and text {:?}, the script's {REASONING:?} and {TEXT:?} (4.4, 4.6)",
            answer.reasoning, answer.text
        ));
    }
    if wrong.is_empty() { Ok(()) } else { Err(wrong.join("; ")) }
}

/// The broken variants `gen.request-model` names, each met in at least 999 runs of 1,000 of its budget (this
/// module's tests hold it).
pub const VARIANTS: &[&str] = &[
    "assistant-as-user",
    "developer-as-user",
    "text-parts-joined-by-newline",
    "markers-as-special-tokens",
    "null-content-refused",
    "max-tokens-zero-caps",
    "unknown-fields-refused",
    "image-url-string-dropped",
    "text-after-picture-dropped",
    "pictures-without-start-end",
    "call-arguments-text-unread",
    "assistant-calls-dropped",
    "only-image-url-parts",
    "anthropic-url-source-dropped",
    "data-url-trusts-its-label",
    "no-vision-pads",
    "tokens-per-character",
    "tool-results-apart",
];

#[cfg(test)]
mod tests;
