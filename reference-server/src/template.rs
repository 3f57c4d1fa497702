//! The chat template: messages and offered tools to prompt ids, ChatML style (Qwen family), with one
//! `<|image_pad|>` per image token of each picture (SPEC 4.8, 12.2). Marker text written inside a message
//! stays text: specials are only ever pushed as ids here.

use crate::messages::{Message, Part, Role, ToolSpec};
use crate::tokenizer::{IM_END, IM_START, IMAGE_PAD, VISION_END, VISION_START, push_text};

const TOOLS_INTRO: &str =
    "\n\n# Tools\n\nYou may call functions to help with the answer. They are listed inside <tools></tools>:\n<tools>";
const TOOLS_HOW: &str = "\n</tools>\n\nTo call a function, write:\n<tool_call>\n<function=NAME>\n<parameter=ARGUMENT>\nVALUE\n</parameter>\n</function>\n</tool_call>";

/// Renders the prompt. `image_tokens` holds, in order of appearance, how many image tokens each picture
/// takes; a picture beyond the list counts as one token.
pub fn render(messages: &[Message], tools: &[ToolSpec], image_tokens: &[usize]) -> Vec<u32> {
    let mut ids = Vec::with_capacity(estimate(messages));
    let mut images = image_tokens.iter().copied();
    let mut rest = messages;
    let system = match messages.first() {
        Some(first) if first.role == Role::System => {
            rest = &messages[1..];
            Some(first)
        }
        _ => None,
    };
    if system.is_some() || !tools.is_empty() {
        ids.push(IM_START);
        push_text(&mut ids, "system\n");
        if let Some(system) = system {
            push_parts(&mut ids, &system.parts, &mut images);
        }
        if !tools.is_empty() {
            push_text(&mut ids, TOOLS_INTRO);
            for tool in tools {
                push_text(&mut ids, "\n");
                push_text(&mut ids, &tool.openai_json().to_string());
            }
            push_text(&mut ids, TOOLS_HOW);
        }
        ids.push(IM_END);
        push_text(&mut ids, "\n");
    }
    let mut index = 0;
    while index < rest.len() {
        let message = &rest[index];
        if message.role == Role::Tool {
            // Consecutive tool results share one user turn, as in the Qwen templates.
            ids.push(IM_START);
            push_text(&mut ids, "user");
            while index < rest.len() && rest[index].role == Role::Tool {
                push_text(&mut ids, "\n<tool_response>\n");
                push_parts(&mut ids, &rest[index].parts, &mut images);
                push_text(&mut ids, "\n</tool_response>");
                index += 1;
            }
            ids.push(IM_END);
            push_text(&mut ids, "\n");
            continue;
        }
        ids.push(IM_START);
        push_text(&mut ids, message.role.as_str());
        push_text(&mut ids, "\n");
        push_parts(&mut ids, &message.parts, &mut images);
        for call in &message.tool_calls {
            push_text(&mut ids, "\n\n<tool_call>\n<function=");
            push_text(&mut ids, &call.name);
            push_text(&mut ids, ">\n");
            if let Some(arguments) = call.arguments.as_object() {
                for (name, value) in arguments {
                    push_text(&mut ids, "<parameter=");
                    push_text(&mut ids, name);
                    push_text(&mut ids, ">\n");
                    match value.as_str() {
                        Some(text) => push_text(&mut ids, text),
                        None => push_text(&mut ids, &value.to_string()),
                    }
                    push_text(&mut ids, "\n</parameter>\n");
                }
            }
            push_text(&mut ids, "</function>\n</tool_call>");
        }
        ids.push(IM_END);
        push_text(&mut ids, "\n");
        index += 1;
    }
    ids.push(IM_START);
    push_text(&mut ids, "assistant\n");
    ids
}

fn push_parts(ids: &mut Vec<u32>, parts: &[Part], images: &mut impl Iterator<Item = usize>) {
    for part in parts {
        match part {
            Part::Text(text) => push_text(ids, text),
            Part::Image(_) => {
                ids.push(VISION_START);
                let count = images.next().unwrap_or(1);
                ids.extend(std::iter::repeat_n(IMAGE_PAD, count));
                ids.push(VISION_END);
            }
        }
    }
}

fn estimate(messages: &[Message]) -> usize {
    let text: usize = messages
        .iter()
        .flat_map(|m| &m.parts)
        .map(|p| match p {
            Part::Text(t) => t.len(),
            Part::Image(_) => 8,
        })
        .sum();
    text + 32 * messages.len() + 64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::ImageSource;
    use crate::tokenizer::decode;

    #[test]
    fn a_user_message_renders_in_chatml() {
        let prompt = render(&[Message::text(Role::User, "hi")], &[], &[]);
        assert_eq!(decode(&prompt), "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
        assert_eq!(prompt.len(), 1 + 5 + 2 + 1 + 1 + 1 + 10);
    }

    #[test]
    fn consecutive_tool_results_share_one_turn() {
        let messages = [Message::text(Role::User, "q"), Message::text(Role::Tool, "a"), Message::text(Role::Tool, "b")];
        let text = decode(&render(&messages, &[], &[]));
        assert!(text.contains(
            "<|im_start|>user\n<tool_response>\na\n</tool_response>\n<tool_response>\nb\n</tool_response><|im_end|>"
        ));
    }

    #[test]
    fn a_picture_is_one_pad_per_image_token() {
        let message = Message {
            role: Role::User,
            parts: vec![Part::Image(ImageSource::Url("data:".into())), Part::Text("x".into())],
            tool_calls: vec![],
        };
        let prompt = render(&[message], &[], &[299]);
        assert_eq!(prompt.iter().filter(|&&id| id == IMAGE_PAD).count(), 299);
    }

    #[test]
    fn marker_text_inside_a_message_stays_text() {
        let prompt = render(&[Message::text(Role::User, "<|image_pad|>")], &[], &[]);
        assert!(!prompt.contains(&IMAGE_PAD));
    }
}
