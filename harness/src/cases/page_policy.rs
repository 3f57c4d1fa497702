//! SPEC 13.23: the page's Content-Security-Policy, read from `GET /`'s headers and judged by a reading
//! of CSP Level 3 written here: a header may hold several policies (commas), each directives
//! (semicolons) whose names are case-insensitive, the first of a repeated directive the one that
//! counts; `Content-Security-Policy-Report-Only` enforces nothing. Every policy is enforced, so a rule
//! holds when one policy holds it: script only from the page's own origin (for script elements and
//! for inline handlers alike, each directive falling back as a browser falls back), `object-src
//! 'none'`, `base-uri 'none'` and `frame-ancestors 'none'`.

use super::case;
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;
use crate::http::Http;
use crate::scenario::KEYED;

pub fn cases() -> Vec<Case> {
    vec![case!(
        "page.served-with-a-content-security-policy",
        "13.23",
        Must,
        KEYED,
        "GET / carries a Content-Security-Policy that allows script only from the page's own origin (no inline script or handler, no eval, no nonce, hash or other source), with object-src 'none', base-uri 'none' and frame-ancestors 'none'",
        served_with_a_policy,
        [
            "page-without-csp",
            "page-csp-allows-inline",
            "page-csp-report-only",
            "page-csp-framed-anywhere",
            "page-csp-objects-allowed",
            "page-csp-base-free"
        ]
    )]
}

async fn served_with_a_policy(ctx: Ctx) -> CheckResult {
    policy_holds(&ctx.http).await
}

/// SPEC 13.23 on `GET /` of the server `http` talks to.
async fn policy_holds(http: &Http) -> CheckResult {
    let page = http.get("/").without_key().send().await?;
    expect_eq("GET / status", 200, page.status)?;
    let headers: Vec<String> = page
        .headers
        .get_all("content-security-policy")
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .collect();
    judge(&headers, http.base())
}

/// One policy: its directives, names lowercased, each with its source list.
struct Policy(Vec<(String, Vec<String>)>);

impl Policy {
    fn parse(text: &str) -> Policy {
        let mut directives: Vec<(String, Vec<String>)> = Vec::new();
        for directive in text.split(';') {
            let mut words = directive.split_ascii_whitespace();
            let Some(name) = words.next() else { continue };
            let name = name.to_ascii_lowercase();
            if !directives.iter().any(|(known, _)| *known == name) {
                directives.push((name, words.map(str::to_string).collect()));
            }
        }
        Policy(directives)
    }

    fn get(&self, name: &str) -> Option<&[String]> {
        self.0.iter().find(|(known, _)| known == name).map(|(_, sources)| sources.as_slice())
    }

    /// The first of `names` the policy has: the directive that governs, as a browser falls back.
    fn governing(&self, names: &[&str]) -> Option<(String, &[String])> {
        names.iter().find_map(|name| self.get(name).map(|sources| (name.to_string(), sources)))
    }
}

/// Script directives and what each falls back to: script elements and inline handlers.
const SCRIPT_CHAINS: [&[&str]; 2] =
    [&["script-src-elem", "script-src", "default-src"], &["script-src-attr", "script-src", "default-src"]];

/// Why `sources` allow script from elsewhere than `origin`, or `None` when they allow only it.
fn script_from_elsewhere(sources: &[String], origin: &str) -> Option<String> {
    let origin = origin.trim_end_matches('/');
    let own = |source: &String| {
        let lower = source.to_ascii_lowercase();
        lower == "'self'" || lower == "'none'" || lower == "'report-sample'" || lower.trim_end_matches('/') == origin
    };
    match sources.iter().find(|source| !own(source)) {
        Some(other) => Some(format!("it allows {other}")),
        None if sources.is_empty() => Some("its source list is empty".into()),
        None => None,
    }
}

/// The clause's rules on the policies of `headers` (`origin`: the page's own, which a source may name).
fn judge(headers: &[String], origin: &str) -> CheckResult {
    let policies: Vec<Policy> = headers.iter().flat_map(|h| h.split(',')).map(Policy::parse).collect();
    expect(
        !policies.is_empty(),
        "a Content-Security-Policy header on GET / (SPEC 13.23; a Report-Only one enforces nothing)",
        "none",
    )?;
    let shown = headers.join(" | ");
    for chain in SCRIPT_CHAINS {
        let why: Vec<String> = policies
            .iter()
            .map(|policy| match policy.governing(chain) {
                None => format!("no {} (nor what it falls back to)", chain[0]),
                Some((name, sources)) => {
                    script_from_elsewhere(sources, origin).map_or_else(String::new, |why| format!("{name}: {why}"))
                }
            })
            .collect();
        expect(
            why.iter().any(String::is_empty),
            format!("a policy whose {} allows script only from the page's own origin ('self')", chain[0]),
            format!("{} — in {shown}", why.join("; ")),
        )?;
    }
    let none = |sources: Option<(String, &[String])>| {
        sources.is_some_and(|(_, s)| s.len() == 1 && s[0].eq_ignore_ascii_case("'none'"))
    };
    for chain in [&["object-src", "default-src"][..], &["base-uri"], &["frame-ancestors"]] {
        expect(
            policies.iter().any(|policy| none(policy.governing(chain))),
            format!("a policy with {} 'none'", chain[0]),
            shown.clone(),
        )?;
    }
    // Every policy is enforced: each one that governs fetches must let the page read its blob:
    // downloads (the page works under it).
    let blob = |sources: Option<(String, &[String])>| {
        sources.is_none_or(|(_, s)| s.iter().any(|source| source.eq_ignore_ascii_case("blob:")))
    };
    expect(
        policies.iter().all(|policy| blob(policy.governing(&["connect-src", "default-src"]))),
        "every connect-src (or default-src without one) allows blob: (the page's downloads are read in it)",
        shown,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::judge;

    const ORIGIN: &str = "http://127.0.0.1:8080";
    const GOOD: &str = "script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

    fn holds(headers: &[&str]) -> bool {
        judge(&headers.iter().map(|h| h.to_string()).collect::<Vec<_>>(), ORIGIN).is_ok()
    }

    #[test]
    fn policies_that_keep_script_to_the_page_hold() {
        for good in [
            GOOD,
            "default-src 'self'; connect-src 'self' blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
            "DEFAULT-SRC 'SELF'; Connect-Src 'self' BLOB:; Object-Src 'none'; base-uri 'none'; frame-ancestors 'none'; img-src * blob:",
            "default-src 'none'; connect-src blob:; script-src 'self' http://127.0.0.1:8080/; base-uri 'none'; frame-ancestors 'none'",
            "script-src 'self' 'report-sample'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; script-src *",
        ] {
            assert!(holds(&[good]), "{good}");
        }
        assert!(holds(&["img-src *", GOOD]), "two headers: one policy holds every rule");
        assert!(holds(&[&format!("img-src *, {GOOD}")]), "two policies in one header");
        assert!(
            holds(&["script-src 'self'; script-src-attr 'unsafe-inline'", GOOD]),
            "another policy's script-src-attr is refused by this one's script-src"
        );
    }

    #[test]
    fn policies_that_let_other_script_in_or_leave_a_rule_out_fail() {
        for bad in [
            "script-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
            "script-src 'self' 'unsafe-eval'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
            "script-src 'self' 'nonce-abc'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
            "script-src 'self' 'sha256-abc='; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
            "script-src 'self' 'strict-dynamic'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
            "script-src 'self' https:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
            "script-src 'self' http://127.0.0.1:8081; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
            "script-src; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
            "script-src 'self'; script-src-attr 'unsafe-inline'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
            "script-src 'self'; script-src-elem *; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
            "object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
            "script-src 'self'; base-uri 'none'; frame-ancestors 'none'",
            "script-src 'self'; object-src 'self'; base-uri 'none'; frame-ancestors 'none'",
            "script-src 'self'; object-src 'none'; frame-ancestors 'none'",
            "default-src 'none'; script-src 'self'; object-src 'none'; frame-ancestors 'none'",
            "script-src 'self'; object-src 'none'; base-uri 'none'",
            "default-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
            "script-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
            "script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'self'",
        ] {
            assert!(!holds(&[bad]), "{bad}");
        }
        assert!(!holds(&[]), "no header");
    }
}
