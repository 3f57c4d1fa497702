//! Generated Responses API answers, held to the README's "What comes back" by a model written here,
//! from the README alone. Each run draws answers from a seed (`VISION_GEN_SEED`, else the clock;
//! printed, so a failure replays): an `output` of 0–4 items — messages of 1–3 parts (`output_text`,
//! `refusal`, empty or blank text, text over several lines), `reasoning` items, tool-call items — and
//! every `status` (`completed`, `incomplete` for each reason and none, `failed`, `cancelled`,
//! `in_progress`, none at all), with `usage` or without. Every answer is one request upstream and one call counted.

use super::support;

use serde_json::{Value, json};
use support::{Draw, Setup, png, requests, seed};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// Answers drawn a run, besides the fixed corners.
const DRAWN: usize = 40;
/// What a reasoning item says: it must never reach the client.
const REASONING: &str = "REASONING-CANARY: the model thinking aloud";

/// One part of a message.
#[derive(Debug, Clone)]
enum Part {
    Text(String),
    Refusal(String),
}

/// One item of `output`.
#[derive(Debug, Clone)]
enum Item {
    Message(Vec<Part>),
    Reasoning,
    FunctionCall,
    WebSearch,
}

/// One generated answer.
#[derive(Debug, Clone)]
struct Answer {
    output: Vec<Item>,
    /// `status`, and `incomplete_details.reason` (`None`: `incomplete_details` null).
    status: &'static str,
    reason: Option<&'static str>,
    usage: bool,
}

const TEXTS: [&str; 7] =
    ["- a red square", "", "   ", "- line one\n- line two", "- 日本語の文字", "  - padded  ", "\n"];
/// Each `status` with its `incomplete_details.reason`; `""` is an answer without `status`.
const STATUSES: [(&str, Option<&str>); 8] = [
    ("", None),
    ("completed", None),
    ("incomplete", Some("max_output_tokens")),
    ("incomplete", Some("content_filter")),
    ("incomplete", None),
    ("failed", None),
    ("cancelled", None),
    ("in_progress", None),
];

fn draw_answer(draw: &mut Draw) -> Answer {
    let items = (0..draw.next(5))
        .map(|_| match draw.next(5) {
            0 => Item::Reasoning,
            1 => [Item::FunctionCall, Item::WebSearch][draw.next(2)].clone(),
            _ => Item::Message(
                (0..1 + draw.next(3))
                    .map(|_| {
                        let text = TEXTS[draw.next(TEXTS.len())].to_string();
                        if draw.next(4) == 0 {
                            Part::Refusal(format!("I cannot help with that{text}"))
                        } else {
                            Part::Text(text)
                        }
                    })
                    .collect(),
            ),
        })
        .collect();
    let (status, reason) = STATUSES[draw.next(STATUSES.len())];
    Answer { output: items, status, reason, usage: draw.next(3) != 0 }
}

impl Answer {
    fn json(&self) -> Value {
        let output: Vec<Value> = self
            .output
            .iter()
            .enumerate()
            .map(|(at, item)| match item {
                Item::Reasoning => json!({"type": "reasoning", "id": format!("rs_{at}"),
                    "summary": [{"type": "summary_text", "text": REASONING}]}),
                Item::FunctionCall => json!({"type": "function_call", "id": format!("fc_{at}"), "call_id": "c",
                    "name": "lookup", "arguments": format!("{{\"q\":\"{REASONING}\"}}")}),
                Item::WebSearch => json!({"type": "web_search_call", "id": format!("ws_{at}"), "status": "completed"}),
                Item::Message(parts) => json!({"type": "message", "id": format!("msg_{at}"), "role": "assistant",
                    "status": "completed", "content": parts.iter().map(|part| match part {
                        Part::Text(text) => json!({"type": "output_text", "text": text, "annotations": []}),
                        Part::Refusal(refusal) => json!({"type": "refusal", "refusal": refusal}),
                    }).collect::<Vec<_>>()}),
            })
            .collect();
        let mut answer = json!({"id": "resp_gen", "object": "response", "status": self.status,
            "incomplete_details": self.reason.map(|reason| json!({"reason": reason})), "output": output});
        if self.status.is_empty() {
            answer.as_object_mut().map(|a| a.remove("status"));
        }
        if self.usage {
            answer["usage"] = json!({"input_tokens": 300, "output_tokens": 40, "total_tokens": 340});
        }
        answer
    }

    /// What the README says the tool answers: its text, or the failure's words.
    fn wanted(&self, limit: u32) -> Result<String, &'static str> {
        let mut lines = Vec::new();
        for item in &self.output {
            if let Item::Message(parts) = item {
                for part in parts {
                    lines.push(match part {
                        Part::Text(text) => text.clone(),
                        Part::Refusal(refusal) => format!("The vision service refused: {refusal}"),
                    });
                }
            }
        }
        let text = lines.join("\n");
        let blank = text.trim().is_empty();
        let filter = self.reason == Some("content_filter");
        match self.status {
            "completed" if blank => Ok("The vision service returned no text.".into()),
            "completed" => Ok(text),
            "incomplete" => Ok(match (blank, filter) {
                (true, true) => {
                    "The answer was stopped by the vision service's content filter before any text; it was not retried."
                        .into()
                }
                (false, true) => format!(
                    "{}\n\n(The answer was stopped by the vision service's content filter; it was not retried.)",
                    text.trim_end()
                ),
                (true, false) => format!(
                    "The answer was cut off at the output limit of {limit} tokens before any text; it was not retried."
                ),
                (false, false) => format!(
                    "{}\n\n(The answer was cut off at the output limit of {limit} tokens; it was not retried.)",
                    text.trim_end()
                ),
            }),
            "" => Err("could not be read"),
            _ => Err("could not finish the answer"),
        }
    }
}

#[tokio::test]
async fn every_answer_shape_is_read_as_the_readme_says() {
    let seed = seed();
    println!("VISION_GEN_SEED={seed:#x}");
    let mut draw = Draw(seed);
    // The corners, on every run: each status alone with one text, a reasoning model's answer, refusals.
    let mut answers: Vec<Answer> = STATUSES
        .iter()
        .map(|&(status, reason)| Answer {
            output: vec![Item::Message(vec![Part::Text("- fact".into())])],
            status,
            reason,
            usage: true,
        })
        .collect();
    answers.push(Answer {
        output: vec![Item::Reasoning, Item::Message(vec![Part::Text("- seen".into())])],
        status: "completed",
        reason: None,
        usage: true,
    });
    answers.push(Answer {
        output: vec![Item::Message(vec![Part::Refusal("no".into())]), Item::Message(vec![Part::Text("- a".into())])],
        status: "completed",
        reason: None,
        usage: false,
    });
    answers.extend((0..DRAWN).map(|_| draw_answer(&mut draw)));
    let setup = Setup::new(1000, 1000);
    setup.write("a.png", &png(20, 20));
    let mut wrong = Vec::new();
    for (at, answer) in answers.iter().enumerate() {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/responses"))
            .respond_with(ResponseTemplate::new(200).set_body_json(answer.json()))
            .mount(&server)
            .await;
        let analyzer = setup.analyzer(&server.uri());
        let before = analyzer.budget().used_today().unwrap_or(0);
        let got = analyzer.analyze("a.png", support::PROMPT, None).await.map_err(|e| e.to_string());
        let wanted = answer.wanted(300);
        let agrees = match (&got, &wanted) {
            (Ok(got), Ok(wanted)) => got == wanted,
            (Err(got), Err(words)) => got.contains(words) && !got.contains("CANARY") && !got.contains("fact"),
            _ => false,
        };
        if !agrees {
            wrong.push(format!("#{at} {answer:?}\n  got {got:?}\n  the README says {wanted:?}"));
        }
        if got.as_ref().is_ok_and(|text| text.contains("CANARY")) {
            wrong.push(format!("#{at}: a reasoning item or tool call reached the client: {got:?}"));
        }
        let sent = requests(&server).await.len();
        let counted = analyzer.budget().used_today().unwrap_or(0) - before;
        if (sent, counted) != (1, 1) {
            wrong.push(format!("#{at}: {sent} requests upstream and {counted} calls counted, not one each"));
        }
    }
    assert!(wrong.is_empty(), "seed {seed:#x} (VISION_GEN_SEED replays it):\n{}", wrong.join("\n"));
}
