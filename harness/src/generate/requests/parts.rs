//! What a generated request's messages hold besides text, and what SPEC says each costs the prompt:
//! pictures in every form 4.2 takes (`image_url` as `{url}` or a string, `input_image`, an Anthropic
//! `image` with a base64 or a url source), PNG or JPEG, labelled as what they are, as `image/png`
//! whatever they are, as `application/octet-stream` or with a parameter (12.3d: the bytes decide), of
//! sizes around 12.2's bounds (below `min_pixels`, halves of 28, a ratio of exactly 200 and of 201), and
//! now and then bytes no decoder reads; and an assistant's `tool_calls`, their `arguments` an object,
//! JSON text of one, text that is not JSON, a list, or absent (4.8j).
//!
//! The costs, from SPEC alone: a picture is `<|vision_start|>`, the 12.2 image tokens (the harness's
//! own [`crate::geometry`]), `<|vision_end|>` (4.8c, 12.1a); one whose ratio is over 200 is, in a tool
//! message, the note of 12.2g as text, and elsewhere refuses the request (12.2h), as an unreadable one
//! does (12.3b); a call is `\n\n<tool_call>\n<function=NAME>\n`, each argument's
//! `<parameter=KEY>\n`, its value (a string as its text, anything else as its JSON), `\n</parameter>\n`,
//! then `</function>\n</tool_call>` (4.8j).

use base64::Engine as _;
use fixtures::images::PictureFormat;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::geometry::{expected_tokens, takes_tokens};

/// How a picture part is written (4.2c–e).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `{"type":"image_url","image_url":{"url":…}}`.
    ImageUrl,
    /// `{"type":"image_url","image_url":"…"}`.
    ImageUrlString,
    /// `{"type":"input_image","image_url":"…"}`.
    InputImage,
    /// `{"type":"image","source":{"type":"base64","media_type":…,"data":…}}`.
    AnthropicBase64,
    /// `{"type":"image","source":{"type":"url","url":"data:…"}}`.
    AnthropicUrl,
}

/// The media type a picture is labelled with (12.3d: its bytes decide, whatever the label says).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    /// What it is.
    Own,
    /// `image/png`, whatever it is.
    Png,
    /// `application/octet-stream`.
    OctetStream,
    /// What it is, with a `name` parameter.
    Parameter,
}

/// A picture's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pixels {
    /// A `width` × `height` picture.
    Sized(u32, u32),
    /// A PNG signature followed by bytes no decoder reads (12.3).
    Unreadable,
}

/// One picture part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Picture {
    /// How it is written.
    pub form: Form,
    /// PNG or JPEG.
    pub jpeg: bool,
    /// Its size, or unreadable bytes.
    pub pixels: Pixels,
    /// Its label.
    pub label: Label,
}

/// Sizes around 12.2's bounds: under `min_pixels` (1×1, 27×29), halves of 28 (70, 126), a ratio of
/// exactly 200 both ways (taken), and of 201 (no geometry).
pub const SIZES: [(u32, u32); 9] =
    [(1, 1), (27, 29), (56, 56), (70, 126), (100, 100), (600, 3), (3, 600), (603, 3), (3, 603)];

impl Picture {
    fn bytes(&self) -> Vec<u8> {
        match self.pixels {
            Pixels::Sized(width, height) => {
                let format = if self.jpeg { PictureFormat::Jpeg } else { PictureFormat::Png };
                fixtures::images::picture(format, width, height, width * 1000 + height)
            }
            Pixels::Unreadable => fixtures::images::corrupt_png(),
        }
    }

    fn label(&self) -> &'static str {
        let own = if self.jpeg && self.pixels != Pixels::Unreadable { "image/jpeg" } else { "image/png" };
        match (self.label, own) {
            (Label::Own, own) => own,
            (Label::Png, _) => "image/png",
            (Label::OctetStream, _) => "application/octet-stream",
            (Label::Parameter, "image/jpeg") => "image/jpeg;name=a.jpg",
            (Label::Parameter, _) => "image/png;name=a.png",
        }
    }

    /// The part as sent.
    pub fn json(&self) -> Value {
        let data = base64::engine::general_purpose::STANDARD.encode(self.bytes());
        let url = format!("data:{};base64,{data}", self.label());
        match self.form {
            Form::ImageUrl => json!({"type": "image_url", "image_url": {"url": url}}),
            Form::ImageUrlString => json!({"type": "image_url", "image_url": url}),
            Form::InputImage => json!({"type": "input_image", "image_url": url}),
            Form::AnthropicBase64 => {
                json!({"type": "image", "source": {"type": "base64", "media_type": self.label(), "data": data}})
            }
            Form::AnthropicUrl => json!({"type": "image", "source": {"type": "url", "url": url}}),
        }
    }

    /// What it costs the prompt in a message of this kind: its tokens, or the text in its place (a tool
    /// message's note); `None` when it refuses the request (12.2h, 12.3b).
    pub fn cost(&self, in_tool_message: bool) -> Option<Cost> {
        match self.pixels {
            Pixels::Sized(width, height) if takes_tokens(width, height) => {
                Some(Cost::Tokens(expected_tokens(width, height) + 2))
            }
            Pixels::Sized(width, height) if in_tool_message => {
                Some(Cost::Text(format!("[image omitted: the picture's aspect ratio is over 200 ({width}x{height})]")))
            }
            _ => None,
        }
    }
}

/// What a picture costs the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cost {
    /// Its start, image tokens and end.
    Tokens(u64),
    /// A note in its place, one token a byte.
    Text(String),
}

/// Pictures of every form, label and size; one in 12 unreadable.
pub fn pictures() -> impl Strategy<Value = Picture> {
    let form = prop_oneof![
        Just(Form::ImageUrl),
        Just(Form::ImageUrlString),
        Just(Form::InputImage),
        Just(Form::AnthropicBase64),
        Just(Form::AnthropicUrl),
    ];
    let label = prop_oneof![3 => Just(Label::Own), 1 => Just(Label::Png), 1 => Just(Label::OctetStream), 1 => Just(Label::Parameter)];
    let pixels = prop_oneof![
        11 => prop::sample::select(&SIZES[..]).prop_map(|(w, h)| Pixels::Sized(w, h)),
        1 => Just(Pixels::Unreadable),
    ];
    (form, any::<bool>(), pixels, label).prop_map(|(form, jpeg, pixels, label)| Picture { form, jpeg, pixels, label })
}

/// How a call's `arguments` are written.
#[derive(Debug, Clone, PartialEq)]
pub enum Arguments {
    /// Absent.
    Absent,
    /// An object.
    Object(Map<String, Value>),
    /// JSON text of an object (OpenAI's form).
    Text(Map<String, Value>),
    /// Text that is not an object's JSON: not JSON at all, or a list.
    NotAnObject(&'static str),
}

/// One `tool_calls` entry of an assistant message.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// `function.name`.
    pub name: &'static str,
    /// `function.arguments`.
    pub arguments: Arguments,
}

impl Call {
    /// The entry as sent.
    pub fn json(&self, index: usize) -> Value {
        let mut function = json!({"name": self.name});
        match &self.arguments {
            Arguments::Absent => {}
            Arguments::Object(map) => function["arguments"] = Value::Object(map.clone()),
            Arguments::Text(map) => function["arguments"] = json!(Value::Object(map.clone()).to_string()),
            Arguments::NotAnObject(text) => function["arguments"] = json!(text),
        }
        json!({"id": format!("call_{index}"), "type": "function", "function": function})
    }

    /// The call as 4.8j renders it.
    pub fn rendered(&self) -> String {
        let mut out = format!("\n\n<tool_call>\n<function={}>\n", self.name);
        if let Arguments::Object(map) | Arguments::Text(map) = &self.arguments {
            for (key, value) in map {
                let value = value.as_str().map_or_else(|| value.to_string(), str::to_string);
                out.push_str(&format!("<parameter={key}>\n{value}\n</parameter>\n"));
            }
        }
        out.push_str("</function>\n</tool_call>");
        out
    }
}

/// Names a model may call: plain, namespaced, non-ASCII, marker text.
const NAMES: &[&str] = &["lookup", "fake__picture", "wetter_größe", "<|im_end|>", ""];
/// Argument names.
const KEYS: &[&str] = &["city", "n", "flag", "items", "note", "ünï"];

fn argument_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!("Grüße")),
        Just(json!("")),
        Just(json!(" padded\n")),
        Just(json!("<|im_end|></parameter>")),
        Just(json!(3)),
        Just(json!(-2.5)),
        Just(json!(true)),
        Just(Value::Null),
        Just(json!([1, "a"])),
        Just(json!({"k": "v"})),
    ]
}

fn argument_map() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((prop::sample::select(KEYS), argument_value()), 0..4)
        .prop_map(|pairs| pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// Calls of every name and form of arguments.
pub fn calls() -> impl Strategy<Value = Call> {
    let arguments = prop_oneof![
        1 => Just(Arguments::Absent),
        2 => argument_map().prop_map(Arguments::Object),
        3 => argument_map().prop_map(Arguments::Text),
        1 => prop::sample::select(&["not json {", "[1, 2]", "\"text\""][..]).prop_map(Arguments::NotAnObject),
    ];
    (prop::sample::select(NAMES), arguments).prop_map(|(name, arguments)| Call { name, arguments })
}
