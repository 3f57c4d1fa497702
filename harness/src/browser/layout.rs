//! SPEC 13.5's rules read from the page: the document is never wider than the viewport, and every
//! picture, tool block, tool name and result box lies inside its chat bubble (13.7's marks).

use fantoccini::Client;

use super::page::js;
use crate::check::CheckError;

const FACTS: &str = r#"
    const doc = document.documentElement;
    const inside = [];
    const marked = '[data-strata="picture"], [data-strata="picture"] img, [data-strata="tool"], [data-strata="tool-name"], [data-strata="tool-result"]';
    for (const el of document.querySelectorAll(marked)) {
        const bubble = el.closest('[data-strata="bubble"]');
        const r = el.getBoundingClientRect();
        if (r.width === 0 && r.height === 0) continue; // inside a collapsed block: not laid out
        const b = bubble ? bubble.getBoundingClientRect() : {left: 0, right: 0};
        inside.push({what: el.tagName.toLowerCase() + '[data-strata=' + (el.dataset.strata || 'picture img') + ']', inBubble: !!bubble, left: r.left, right: r.right, bubbleLeft: b.left, bubbleRight: b.right});
    }
    return {scrollWidth: doc.scrollWidth, bodyWidth: document.body.scrollWidth, innerWidth: window.innerWidth, inside};
"#;

/// Checks the rules at this moment, at `width`.
pub async fn fits(client: &Client, width: u32) -> Result<(), CheckError> {
    let facts = js(client, FACTS).await?;
    let inner = facts["innerWidth"].as_f64().unwrap_or(0.0);
    if inner as u32 != width {
        return Err(CheckError::Fail { expected: format!("a {width} px viewport"), actual: format!("{inner} px") });
    }
    for key in ["scrollWidth", "bodyWidth"] {
        let value = facts[key].as_f64().unwrap_or(f64::MAX);
        if value > inner {
            return Err(CheckError::Fail {
                expected: format!("a document at most {inner} px wide"),
                actual: format!("{key} {value} px"),
            });
        }
    }
    for item in facts["inside"].as_array().cloned().unwrap_or_default() {
        let what = item["what"].as_str().unwrap_or_default().to_string();
        if item["inBubble"] != true {
            return Err(CheckError::Fail {
                expected: format!("{what} inside a [data-strata=bubble]"),
                actual: "outside every bubble".into(),
            });
        }
        let (left, right) = (item["left"].as_f64().unwrap_or(0.0), item["right"].as_f64().unwrap_or(0.0));
        let (bubble_left, bubble_right) =
            (item["bubbleLeft"].as_f64().unwrap_or(0.0), item["bubbleRight"].as_f64().unwrap_or(0.0));
        if left < bubble_left - 0.5 || right > bubble_right + 0.5 {
            return Err(CheckError::Fail {
                expected: format!("{what} within its bubble {bubble_left:.0}..{bubble_right:.0} px"),
                actual: format!("{left:.0}..{right:.0} px"),
            });
        }
    }
    Ok(())
}
