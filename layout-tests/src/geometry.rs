//! Layout facts read from the page, and the rules of SPEC 13.5: the document is never wider than the
//! viewport, and every preview, tool block, tool name and result box fits inside its chat bubble.

use fantoccini::Client;
use serde_json::Value;

use crate::page::js;

const FACTS: &str = r#"
    const doc = document.documentElement;
    const inside = [];
    for (const el of document.querySelectorAll('.bubble .preview, .bubble .preview img, .bubble .tool-call, .bubble .tool-name, .bubble pre, .bubble .text')) {
        const r = el.getBoundingClientRect();
        const b = el.closest('.bubble').getBoundingClientRect();
        inside.push({what: el.tagName.toLowerCase() + '.' + el.className, left: r.left, right: r.right, bubbleLeft: b.left, bubbleRight: b.right});
    }
    return {scrollWidth: doc.scrollWidth, bodyWidth: document.body.scrollWidth, innerWidth: window.innerWidth, inside};
"#;

/// Checks the layout rules at the current state; panics with what broke them.
pub async fn assert_fits(client: &Client, width: u32, step: &str) {
    let facts: Value = js(client, FACTS).await;
    let inner = facts["innerWidth"].as_f64().unwrap_or(0.0);
    assert_eq!(inner as u32, width, "{step}: the viewport is {width} px");
    for key in ["scrollWidth", "bodyWidth"] {
        let value = facts[key].as_f64().unwrap_or(f64::MAX);
        assert!(
            value <= inner,
            "{step} at {width}px: the document is {value} px wide ({key}) in a {inner} px viewport"
        );
    }
    for item in facts["inside"].as_array().cloned().unwrap_or_default() {
        let (left, right) = (item["left"].as_f64().unwrap_or(0.0), item["right"].as_f64().unwrap_or(0.0));
        let (bubble_left, bubble_right) =
            (item["bubbleLeft"].as_f64().unwrap_or(0.0), item["bubbleRight"].as_f64().unwrap_or(0.0));
        assert!(
            left >= bubble_left - 0.5 && right <= bubble_right + 0.5,
            "{step} at {width}px: {} spans {left}..{right}, outside its bubble {bubble_left}..{bubble_right}",
            item["what"]
        );
    }
}
