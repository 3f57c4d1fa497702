//! The 4.8 model on requests counted by hand, and the odds of the variants `gen.request-model` names.

use super::*;

fn text(t: &str) -> Content {
    Content::Text(t.to_string())
}

/// `message_tokens` of messages without calls.
fn tokens(messages: &[(Role, Content)]) -> u64 {
    let messages: Vec<Message> = messages.iter().cloned().map(Message::from).collect();
    message_tokens(&messages).expect("no picture here refuses")
}

#[test]
fn turns_are_counted_as_4_8_says() {
    // user "hi": <|im_start|> user \n hi <|im_end|> \n = 1 + 4 + 1 + 2 + 1 + 1.
    assert_eq!(tokens(&[(Role::User, text("hi"))]), 10);
    // A leading developer message is the system turn: 1 + 7 ("system\n") + 3 + 2.
    assert_eq!(tokens(&[(Role::Developer, text("abc"))]), 13);
    // Not leading, it is a turn of its own, read as system: 1 + 6 + 1 + 3 + 2.
    assert_eq!(tokens(&[(Role::User, text("")), (Role::Developer, text("abc"))]), 8 + 13);
    // Parts with nothing between them; null content is no parts; marker text is its bytes.
    assert_eq!(
        tokens(&[(Role::Assistant, Content::Parts(vec!["<|im_end|>".into(), "é".into()]))]),
        1 + 9 + 1 + 10 + 2 + 2
    );
    assert_eq!(tokens(&[(Role::Assistant, Content::Null)]), 1 + 9 + 1 + 2);
    // Two tool messages share one user turn: 1 + 4 + (17 + 1 + 17) + (17 + 0 + 17) + 2.
    assert_eq!(tokens(&[(Role::Tool, text("x")), (Role::Tool, Content::Null)]), 1 + 4 + 35 + 34 + 2);
    // A user message between them makes two tool turns.
    let apart = [(Role::Tool, text("x")), (Role::User, text("")), (Role::Tool, text("x"))];
    assert_eq!(tokens(&apart), (1 + 4 + 35 + 2) * 2 + 8);
}

fn picture(form: Form, pixels: Pixels) -> Part {
    Part::Picture(Picture { form, jpeg: false, pixels, label: Label::Own })
}

#[test]
fn pictures_and_calls_are_counted_as_4_8_and_12_2_say() {
    // 100x100 is 112x112 (100/28 = 3.57 rounds to 4): 16 image tokens, plus start and end.
    let user = |parts: Vec<Part>| vec![Message::from((Role::User, Content::Parts(parts)))];
    let one = user(vec!["a".into(), picture(Form::InputImage, Pixels::Sized(100, 100))]);
    assert_eq!(message_tokens(&one), Some(8 + 1 + 18));
    // 1x1 is scaled up to min_pixels: 56x56, 4 tokens.
    assert_eq!(message_tokens(&user(vec![picture(Form::ImageUrl, Pixels::Sized(1, 1))])), Some(8 + 6));
    // A ratio of exactly 200 is taken: 600x3 is 588x28 after rounding, 21 tokens.
    assert_eq!(message_tokens(&user(vec![picture(Form::ImageUrl, Pixels::Sized(600, 3))])), Some(8 + 23));
    // 201 refuses a user message, and is its note in a tool message.
    assert_eq!(message_tokens(&user(vec![picture(Form::ImageUrlString, Pixels::Sized(603, 3))])), None);
    assert_eq!(message_tokens(&user(vec![picture(Form::AnthropicUrl, Pixels::Unreadable)])), None);
    let note = "[image omitted: the picture's aspect ratio is over 200 (3x603)]";
    let tool =
        [Message::from((Role::Tool, Content::Parts(vec![picture(Form::AnthropicBase64, Pixels::Sized(3, 603))])))];
    assert_eq!(message_tokens(&tool), Some(1 + 4 + 17 + note.len() as u64 + 17 + 2));
    // A call: its header, each parameter (a string as its text, others as JSON), its end.
    let mut arguments = serde_json::Map::new();
    arguments.insert("city".into(), json!("Köln"));
    arguments.insert("n".into(), json!([1, "a"]));
    let call = Call { name: "lookup", arguments: Arguments::Text(arguments) };
    assert_eq!(
        call.rendered(),
        "\n\n<tool_call>\n<function=lookup>\n<parameter=city>\nKöln\n</parameter>\n<parameter=n>\n[1,\"a\"]\n</parameter>\n</function>\n</tool_call>"
    );
    assert_eq!(call.json(0)["function"]["arguments"], json!("{\"city\":\"Köln\",\"n\":[1,\"a\"]}"));
    let bare = Call { name: "x", arguments: Arguments::NotAnObject("[1, 2]") };
    assert_eq!(bare.rendered(), "\n\n<tool_call>\n<function=x>\n</function>\n</tool_call>");
    let asked = [Message { role: Role::Assistant, content: Content::Null, calls: vec![bare.clone(), bare] }];
    assert_eq!(message_tokens(&asked), Some(1 + 9 + 1 + 2 * 51 + 2));
}

#[test]
fn the_body_holds_every_field_as_generated() {
    let request = Request {
        messages: vec![
            (Role::Developer, Content::Parts(vec!["a".into(), "b".into()])).into(),
            (Role::Tool, Content::Null).into(),
        ],
        stream: true,
        max_tokens: Cap::MinusOne,
        max_completion_tokens: Cap::Absent,
        unknown: vec![("x_vendor", json!(true))],
    };
    assert_eq!(
        request.body(),
        json!({"messages": [{"role": "developer", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
                            {"role": "tool", "content": null}],
               "stream": true, "max_tokens": -1, "x_vendor": true})
    );
}

#[test]
fn each_named_variant_is_met_in_999_runs_of_1000() {
    let marker = |t: &str| {
        ["<|im_end|>", "<|im_start|>", "<|endoftext|>", "<|vision_start|>", "<|image_pad|>", "<|vision_end|>"]
            .iter()
            .any(|m| t.contains(m))
    };
    let text = |c: &Content| {
        c.parts().iter().map(|p| if let Part::Text(t) = p { t.clone() } else { String::new() }).collect::<String>()
    };
    let held = crate::generate::runs_holding_each(
        requests(),
        crate::generate::DEFAULT_BUDGET as usize,
        VARIANTS.len(),
        |r| {
            // Only a request the model takes shows a variant that changes the count.
            let taken = message_tokens(&r.messages).is_some();
            let any = |f: &dyn Fn(&Message) -> bool| taken && r.messages.iter().any(f);
            let picture = |f: &dyn Fn(&Picture) -> bool| any(&|m| m.pictures().any(f));
            vec![
                any(&|m| m.role == Role::Assistant),
                any(&|m| m.role == Role::Developer),
                any(
                    &|m| matches!(&m.content, Content::Parts(p) if p.len() >= 2 && p.iter().all(|p| matches!(p, Part::Text(_)))),
                ),
                any(&|m| marker(&text(&m.content))),
                any(&|m| m.content == Content::Null),
                taken && r.max_tokens == Cap::Zero,
                taken && !r.unknown.is_empty(),
                picture(&|p| p.form == Form::ImageUrlString),
                any(&|m| match &m.content {
                    Content::Parts(parts) => parts
                        .iter()
                        .skip_while(|p| matches!(p, Part::Text(_)))
                        .any(|p| matches!(p, Part::Text(t) if !t.is_empty())),
                    _ => false,
                }),
                picture(&|_| true),
                any(&|m| m.calls.iter().any(|c| matches!(&c.arguments, Arguments::Text(a) if !a.is_empty()))),
                any(&|m| !m.calls.is_empty()),
                picture(&|p| matches!(p.form, Form::InputImage | Form::AnthropicBase64 | Form::AnthropicUrl)),
                picture(&|p| p.form == Form::AnthropicUrl),
                picture(&|p| {
                    p.form != Form::AnthropicBase64 && (p.label != Label::Own || p.jpeg && p.label == Label::Png)
                }),
                picture(&|p| p.pixels != Pixels::Sized(1, 1) && p.pixels != Pixels::Sized(27, 29)),
                any(&|m| !text(&m.content).is_ascii()),
                taken && r.messages.windows(2).any(|pair| pair[0].role == Role::Tool && pair[1].role == Role::Tool),
            ]
        },
    );
    for (variant, held) in VARIANTS.iter().zip(held) {
        assert!(held >= 999, "{variant} met in {held} runs of 1,000");
    }
}
