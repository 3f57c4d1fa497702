//! SPEC 13.8–13.12 read from the page at one moment: accessibility by axe-core, target size (WCAG 2.2
//! 2.5.8 with its spacing exception), cut text, readable text, and pictures' aspect ratio and text
//! alternatives. Each rule is a script run in the page that returns what breaks it, named by a short
//! selector, so a failure says which element and why.

use std::path::PathBuf;
use std::sync::OnceLock;

use fantoccini::Client;
use serde_json::Value;

use super::page::js;
use crate::check::CheckError;

/// The WCAG tags axe-core runs (SPEC 13.8).
pub const AXE_TAGS: [&str; 6] = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"];
/// axe-core rules left to other clauses (13.9 measures target size, 13.12 text alternatives).
pub const AXE_RULES_ELSEWHERE: [&str; 2] = ["target-size", "image-alt"];

/// Shared helpers every rule script starts with: what is visible, and a short name for an element.
const HELPERS: &str = r#"
    const sel = (n) => '[data-strata="' + n + '"]';
    // Rendered with some size. What a closed <details> holds is laid out but skipped when painting
    // (content-visibility: hidden), which checkVisibility() reports and getClientRects() does not.
    const sized = (rects) => [...rects].some(r => r.width > 0 && r.height > 0);
    const visible = (e) => !!e && sized(e.getClientRects())
        && (e.checkVisibility ? e.checkVisibility({visibilityProperty: true, contentVisibilityAuto: true}) : getComputedStyle(e).visibility !== 'hidden');
    const describe = (e) => {
        const mark = e.closest('[data-strata]');
        const own = e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (typeof e.className === 'string' && e.className.trim() ? '.' + e.className.trim().split(/\s+/).join('.') : '');
        if (mark === e) return own + '[data-strata=' + e.dataset.strata + ']';
        return mark ? '[data-strata=' + mark.dataset.strata + '] ' + own : own;
    };
"#;

fn axe_source() -> Result<&'static str, CheckError> {
    static SOURCE: OnceLock<Result<String, String>> = OnceLock::new();
    let source = SOURCE.get_or_init(|| {
        let candidates: Vec<PathBuf> = std::env::var_os("MEDIACHECK_AXE")
            .map(PathBuf::from)
            .into_iter()
            .chain([
                PathBuf::from("ci/interop/node_modules/axe-core/axe.min.js"),
                PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../ci/interop/node_modules/axe-core/axe.min.js")),
            ])
            .collect();
        candidates.iter().find_map(|path| std::fs::read_to_string(path).ok()).ok_or_else(|| {
            format!(
                "axe-core is missing, so 13.8 cannot be checked: npm install axe-core@4.14.1 and set MEDIACHECK_AXE to \
                 its axe.min.js (looked at {})",
                candidates.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
            )
        })
    });
    source.as_deref().map_err(|why| CheckError::NotRun(why.clone()))
}

fn fail(rule: &str, found: &Value) -> Result<(), CheckError> {
    match found.as_array() {
        Some(list) if list.is_empty() => Ok(()),
        Some(list) => Err(CheckError::Fail {
            expected: rule.to_string(),
            actual: list
                .iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join("; "),
        }),
        None => Err(CheckError::Fail { expected: format!("{rule} (read from the page)"), actual: found.to_string() }),
    }
}

/// 13.8: axe-core's WCAG A/AA rules find no serious or critical violation.
pub async fn accessible(client: &Client) -> Result<(), CheckError> {
    let options = serde_json::json!({
        "runOnly": {"type": "tag", "values": AXE_TAGS},
        "rules": AXE_RULES_ELSEWHERE.iter().map(|r| (r.to_string(), serde_json::json!({"enabled": false}))).collect::<serde_json::Map<_, _>>(),
        "resultTypes": ["violations"],
    });
    let found = axe_violations(client, &options, &["serious", "critical"]).await?;
    fail("no serious or critical axe-core violation of the WCAG 2.x A/AA rules", &found)
}

/// Runs axe-core in the page with `options` (injecting it first when the page has none): its
/// violations of the `impacts` named (every impact when none is), each as
/// `rule (impact: help) at targets`, in a JSON array. axe-core missing is a reason not to run.
pub async fn axe_violations(client: &Client, options: &Value, impacts: &[&str]) -> Result<Value, CheckError> {
    let source = axe_source()?;
    if js(client, "return typeof window.axe === 'undefined';").await? == Value::Bool(true) {
        client.execute(&format!("{source}\n;return true;"), vec![]).await.map_err(|e| CheckError::Fail {
            expected: "axe-core to load into the page".into(),
            actual: e.to_string(),
        })?;
    }
    let impacts = serde_json::json!(impacts);
    let script = format!(
        r#"const done = arguments[arguments.length - 1];
        const impacts = {impacts};
        axe.run(document, {options}).then(
            (r) => done(r.violations.filter(v => impacts.length === 0 || impacts.includes(v.impact))
                .map(v => v.id + ' (' + v.impact + ': ' + v.help + ') at ' + v.nodes.map(n => n.target.join(' ')).join(', '))),
            (e) => done('axe-core failed: ' + e));"#
    );
    client
        .execute_async(&script, vec![])
        .await
        .map_err(|e| CheckError::Fail { expected: "axe-core to run".into(), actual: e.to_string() })
}

/// 13.9: every named control at least 24 × 24 px, or clear of other targets as 2.5.8 allows.
pub async fn targets_large_enough(client: &Client) -> Result<(), CheckError> {
    let script = format!(
        r#"{HELPERS}
        const named = [];
        const add = (what, e) => {{ if (visible(e)) named.push([what, e]); }};
        add('send', document.querySelector(sel('send')));
        add('stop', document.querySelector(sel('stop')));
        add('open-settings', document.querySelector(sel('open-settings')));
        document.querySelectorAll(sel('tool')).forEach((t, i) =>
            add('tool ' + (i + 1) + ' toggle', t.tagName === 'DETAILS' ? t.querySelector(':scope > summary') : t));
        document.querySelectorAll(sel('picture') + ' a[download]').forEach((a, i) => add('picture ' + (i + 1) + ' download', a));
        const interactive = [...document.querySelectorAll('a[href], button, input, select, textarea, summary, [role=button], [tabindex]:not([tabindex="-1"])')].filter(visible);
        const box = (e) => e.getBoundingClientRect();
        const small = (r) => r.width < 23.99 || r.height < 23.99;
        const centre = (r) => [r.left + r.width / 2, r.top + r.height / 2];
        const related = (a, b) => a === b || a.contains(b) || b.contains(a);
        const undersized = interactive.filter(e => small(box(e)));
        const found = [];
        for (const [what, e] of named) {{
            const r = box(e);
            if (!small(r)) continue;
            const [x, y] = centre(r);
            const near = interactive.find(o => !related(o, e) && (() => {{
                const q = box(o);
                const dx = Math.max(q.left - x, 0, x - q.right), dy = Math.max(q.top - y, 0, y - q.bottom);
                return dx * dx + dy * dy < 144;
            }})()) || undersized.find(o => !related(o, e) && (() => {{
                const [ox, oy] = centre(box(o));
                return (ox - x) ** 2 + (oy - y) ** 2 < 576;
            }})());
            if (near) found.push(what + ' (' + describe(e) + ') is ' + r.width.toFixed(1) + ' x ' + r.height.toFixed(1) + ' px and its 24 px circle meets ' + describe(near));
        }}
        return found;"#
    );
    fail("every control at least 24 x 24 px, or spaced as WCAG 2.5.8 allows", &js(client, &script).await?)
}

/// 13.10: tool names, results and the gone note are never clipped.
pub async fn no_cut_text(client: &Client) -> Result<(), CheckError> {
    let script = format!(
        r#"{HELPERS}
        const clips = (v) => v === 'hidden' || v === 'clip';
        const found = [];
        const roots = [...document.querySelectorAll([sel('tool-name'), sel('tool-result'), sel('picture-gone')].join(','))].filter(visible);
        for (const root of roots) {{
            for (const e of [root, ...root.querySelectorAll('*')].filter(visible)) {{
                const s = getComputedStyle(e);
                const wide = e.scrollWidth > e.clientWidth + 1, tall = e.scrollHeight > e.clientHeight + 1;
                if (s.textOverflow === 'ellipsis' && wide) found.push(describe(e) + ': text-overflow: ellipsis cuts ' + e.scrollWidth + ' px of text to ' + e.clientWidth);
                else if ((clips(s.overflowX) && wide) || (clips(s.overflowY) && tall)) found.push(describe(e) + ': overflow ' + s.overflowX + '/' + s.overflowY + ' cuts ' + e.scrollWidth + ' x ' + e.scrollHeight + ' px of text to ' + e.clientWidth + ' x ' + e.clientHeight);
            }}
            const bubble = root.closest(sel('bubble'));
            const r = root.getBoundingClientRect();
            for (let a = root.parentElement; a; a = a.parentElement) {{
                const s = getComputedStyle(a);
                if (clips(s.overflowX) || clips(s.overflowY)) {{
                    const q = a.getBoundingClientRect();
                    if (r.left < q.left - 0.5 || r.right > q.right + 0.5 || (clips(s.overflowY) && (r.top < q.top - 0.5 || r.bottom > q.bottom + 0.5)))
                        found.push(describe(root) + ' is cut off by ' + describe(a) + ' (overflow ' + s.overflowX + '/' + s.overflowY + ')');
                }}
                if (a === bubble) break;
            }}
        }}
        return found;"#
    );
    fail("tool names, results and notes never clipped (they wrap or scroll)", &js(client, &script).await?)
}

/// 13.11: no visible text under 12 px.
pub async fn readable_text(client: &Client) -> Result<(), CheckError> {
    let script = format!(
        r#"{HELPERS}
        const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
        const found = [];
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {{
            const text = n.textContent.trim();
            if (!text || !visible(n.parentElement)) continue;
            const range = document.createRange();
            range.selectNodeContents(n);
            if (!sized(range.getClientRects())) continue;
            const size = parseFloat(getComputedStyle(n.parentElement).fontSize);
            if (size < 11.995) found.push(describe(n.parentElement) + ' at ' + size + ' px: "' + text.slice(0, 40) + '"');
        }}
        return found;"#
    );
    fail("no visible text smaller than 12 px", &js(client, &script).await?)
}

/// 13.12: each picture drawn at its own aspect ratio (within 1 %) and with a text alternative.
pub async fn pictures_true_and_described(client: &Client) -> Result<(), CheckError> {
    let script = format!(
        r#"{HELPERS}
        const found = [];
        [...document.querySelectorAll(sel('picture') + ' img')].forEach((img, i) => {{
            const what = 'picture ' + (i + 1) + ' (' + describe(img) + ')';
            const label = (img.getAttribute('alt') || '').trim() || (img.getAttribute('aria-label') || '').trim()
                || (img.getAttribute('aria-labelledby') || '').split(/\s+/).filter(Boolean).map(id => (document.getElementById(id) || {{}}).textContent || '').join(' ').trim();
            if (!label) found.push(what + ' has no text alternative (alt, aria-label or aria-labelledby)');
            if (!visible(img) || !img.naturalWidth || !img.naturalHeight) return;
            const r = img.getBoundingClientRect();
            const fit = getComputedStyle(img).objectFit;
            const natural = img.naturalWidth / img.naturalHeight;
            const drawn = fit === 'fill' ? r.width / r.height : natural;
            const off = Math.abs(drawn - natural) / natural;
            if (off > 0.01) found.push(what + ' drawn ' + r.width.toFixed(1) + ' x ' + r.height.toFixed(1) + ' px (object-fit ' + fit + ') from ' + img.naturalWidth + ' x ' + img.naturalHeight + ': ' + (off * 100).toFixed(1) + ' % off its aspect ratio');
        }});
        return found;"#
    );
    fail("every picture at its own aspect ratio (within 1 %) and with a text alternative", &js(client, &script).await?)
}
