//! The names the model sees for MCP tools (SPEC 5.6, strata-wire C-H1): `<server>__<tool>`, every
//! character outside `[A-Za-z0-9_-]` made `_`, cut to 64 characters, collisions numbered `_2`, `_3`, ….

use std::collections::{HashMap, HashSet};

/// The longest name offered to the model.
pub const MAX_NAME: usize = 64;

/// One part of a name made safe: characters outside `[A-Za-z0-9_-]` become `_`; empty becomes `x`.
pub fn clean(part: &str) -> String {
    let cleaned: String =
        part.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
    if cleaned.is_empty() { "x".to_string() } else { cleaned }
}

/// `<clean(server)>__<clean(tool)>`, cut to [`MAX_NAME`] characters.
pub fn namespaced(server: &str, tool: &str) -> String {
    let mut name = format!("{}__{}", clean(server), clean(tool));
    name.truncate(MAX_NAME);
    name
}

/// Gives each wanted name a unique one, in order: a name already taken becomes
/// `<first 60 characters>_2`, `_3`, … (the first free one).
///
/// Linear in the number of names: each stem remembers the next number to try (a number below it is
/// taken for good, since names are never released), so many tools of one name do not rescan from `_2`.
pub fn unique(wanted: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut taken = HashSet::new();
    let mut next_number: HashMap<String, usize> = HashMap::new();
    let mut names = Vec::new();
    for name in wanted {
        let mut chosen = name.clone();
        if taken.contains(&chosen) {
            let stem: String = name.chars().take(60).collect();
            let n = next_number.entry(stem.clone()).or_insert(2);
            chosen = format!("{stem}_{n}");
            while taken.contains(&chosen) {
                *n += 1;
                chosen = format!("{stem}_{n}");
            }
            *n += 1;
        }
        taken.insert(chosen.clone());
        names.push(chosen);
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cleaned_and_joined() {
        assert_eq!(namespaced("my server", "read.file"), "my_server__read_file");
        assert_eq!(namespaced("", "é"), "x___");
    }

    #[test]
    fn long_names_are_cut_to_64() {
        let name = namespaced("s", &"t".repeat(100));
        assert_eq!(name.len(), 64);
    }

    #[test]
    fn collisions_are_numbered() {
        let long = "a".repeat(64);
        let names = unique(["x__y".to_string(), "x__y".to_string(), "x__y".to_string(), long.clone(), long]);
        assert_eq!(names[..3], ["x__y", "x__y_2", "x__y_3"]);
        assert_eq!(names[4], format!("{}_2", "a".repeat(60)));
    }

    /// The clause as written: each name takes the first free `_2`, `_3`, … (quadratic, for comparison).
    fn first_free(wanted: &[String]) -> Vec<String> {
        let mut taken = HashSet::new();
        wanted
            .iter()
            .map(|name| {
                let mut chosen = name.clone();
                let mut n = 2;
                while taken.contains(&chosen) {
                    chosen = format!("{}_{n}", name.chars().take(60).collect::<String>());
                    n += 1;
                }
                taken.insert(chosen.clone());
                chosen
            })
            .collect()
    }

    #[test]
    fn numbering_is_the_first_free_number_even_with_literal_suffixes() {
        let long = "b".repeat(64);
        let wanted: Vec<String> = ["a", "a_3", "a", "a", "a_2", "a", "a_2", long.as_str(), long.as_str(), "a"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(unique(wanted.clone()), first_free(&wanted));
        let many: Vec<String> =
            (0..5000).map(|i| if i % 7 == 0 { format!("t_{}", i / 7 + 2) } else { "t".into() }).collect();
        let names = unique(many.clone());
        assert_eq!(names, first_free(&many));
        assert_eq!(names.iter().collect::<HashSet<_>>().len(), many.len(), "every name is unique");
    }
}
