//! The 4.8 model on requests counted by hand, and the odds of the variants `gen.request-model` names.

use super::*;

fn text(t: &str) -> Content {
    Content::Text(t.to_string())
}

#[test]
fn turns_are_counted_as_4_8_says() {
    // user "hi": <|im_start|> user \n hi <|im_end|> \n = 1 + 4 + 1 + 2 + 1 + 1.
    assert_eq!(message_tokens(&[(Role::User, text("hi"))]), 10);
    // A leading developer message is the system turn: 1 + 7 ("system\n") + 3 + 2.
    assert_eq!(message_tokens(&[(Role::Developer, text("abc"))]), 13);
    // Not leading, it is a turn of its own, read as system: 1 + 6 + 1 + 3 + 2.
    assert_eq!(message_tokens(&[(Role::User, text("")), (Role::Developer, text("abc"))]), 8 + 13);
    // Parts with nothing between them; null content is no parts; marker text is its bytes.
    assert_eq!(
        message_tokens(&[(Role::Assistant, Content::Parts(vec!["<|im_end|>".into(), "é".into()]))]),
        1 + 9 + 1 + 10 + 2 + 2
    );
    assert_eq!(message_tokens(&[(Role::Assistant, Content::Null)]), 1 + 9 + 1 + 2);
    // Two tool messages share one user turn: 1 + 4 + (17 + 1 + 17) + (17 + 0 + 17) + 2.
    assert_eq!(message_tokens(&[(Role::Tool, text("x")), (Role::Tool, Content::Null)]), 1 + 4 + 35 + 34 + 2);
    // A user message between them makes two tool turns.
    let apart = [(Role::Tool, text("x")), (Role::User, text("")), (Role::Tool, text("x"))];
    assert_eq!(message_tokens(&apart), (1 + 4 + 35 + 2) * 2 + 8);
}

#[test]
fn the_body_holds_every_field_as_generated() {
    let request = Request {
        messages: vec![(Role::Developer, Content::Parts(vec!["a".into(), "b".into()])), (Role::Tool, Content::Null)],
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
    let held = crate::generate::runs_holding_each(requests(), crate::generate::DEFAULT_BUDGET as usize, 7, |r| {
        let any = |f: &dyn Fn(&(Role, Content)) -> bool| r.messages.iter().any(f);
        vec![
            any(&|(role, _)| *role == Role::Assistant),
            any(&|(role, _)| *role == Role::Developer),
            any(&|(_, c)| matches!(c, Content::Parts(p) if p.len() >= 2)),
            any(&|(_, c)| marker(&c.rendered())),
            any(&|(_, c)| *c == Content::Null),
            r.max_tokens == Cap::Zero,
            !r.unknown.is_empty(),
        ]
    });
    for (variant, held) in VARIANTS.iter().zip(held) {
        assert!(held >= 999, "{variant} met in {held} runs of 1,000");
    }
}
