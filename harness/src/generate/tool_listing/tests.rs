//! The 5.6 names and the `GET /mcp` model on listings worked by hand.

use super::*;

#[test]
fn names_are_offered_as_spec_5_6_says() {
    let tools = ["echo".to_string(), "naïve tool".into(), "".into()];
    assert_eq!(offered_names("fake", &tools), ["fake__echo", "fake__na_ve_tool", "fake__x"]);
    let long = "s".repeat(70);
    let named = offered_names(&long, &["a".into(), "b".into(), "c".into()]);
    assert_eq!(named[0], "s".repeat(64));
    assert_eq!(named[1], format!("{}_2", "s".repeat(60)));
    assert_eq!(named[2], format!("{}_3", "s".repeat(60)));
    let taken = offered_names("p", &["x_2".into(), "x".into(), "x.".into(), "x-".into()]);
    assert_eq!(taken, ["p__x_2", "p__x", "p__x_", "p__x-"]);
}

#[test]
fn empty_names_are_left_out_and_descriptions_fall_back_to_the_title_and_are_cut() {
    let tool = |name: &str, title: Option<&str>, description: Option<&str>| Listed {
        name: name.into(),
        title: title.map(Into::into),
        description: description.map(Into::into),
    };
    let listing = Listing {
        server: "my srv".into(),
        page_size: 1,
        tools: vec![
            tool("", Some("t"), None),
            tool("a.b", Some("Title"), None),
            tool("a b", None, None),
            tool("c", Some("t"), Some(&"é".repeat(301))),
        ],
    };
    assert_eq!(
        expected(&listing),
        [
            json!({"name": "my_srv__a_b", "tool": "a.b", "description": "Title"}),
            json!({"name": "my_srv__a_b_2", "tool": "a b", "description": ""}),
            json!({"name": "my_srv__c", "tool": "c", "description": "é".repeat(300)}),
        ]
    );
}

#[test]
fn each_named_variant_is_met_in_999_runs_of_1000() {
    // A quarter of the budget: each listing starts a server.
    let budget = (crate::generate::DEFAULT_BUDGET / 4) as usize;
    let held = crate::generate::runs_holding_each(listings(), budget, VARIANTS.len(), |listing| {
        let shown = expected(listing);
        vec![
            // names-unclean: a name 5.6 changes.
            shown
                .iter()
                .any(|t| t["name"] != format!("{}__{}", listing.server, t["tool"].as_str().unwrap_or_default())),
            // names-cut-at-63: a name of 64 characters.
            shown.iter().any(|t| t["name"].as_str().is_some_and(|n| n.chars().count() == 64)),
            // tools-without-descriptions: a description or title that is not empty.
            shown.iter().any(|t| t["description"] != ""),
            // descriptions-cut-in-bytes: a description shown whose 300 characters are more than 300 bytes.
            shown.iter().any(|t| t["description"].as_str().is_some_and(|d| d.len() > 300)),
            // stdio-listing-first-page: a tool shown from a page after the first.
            listing.page_size > 0 && listing.tools.iter().skip(listing.page_size).any(|t| !t.name.is_empty()),
            // tool-names-unprefixed: a tool shown at all.
            !shown.is_empty(),
        ]
    });
    for (variant, held) in VARIANTS.iter().zip(held) {
        assert!(held >= 999, "{variant} met in {held} runs of 1,000");
    }
}
