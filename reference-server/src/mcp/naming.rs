//! The names the model sees for MCP tools (SPEC 5.6, strata-wire C-H1): `<server>__<tool>`, every
//! character outside `[A-Za-z0-9_-]` made `_`, cut to 64 characters, collisions numbered `_2`, `_3`, ….

use std::collections::HashSet;

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
pub fn unique(wanted: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut taken = HashSet::new();
    let mut names = Vec::new();
    for name in wanted {
        let mut chosen = name.clone();
        let mut n = 2;
        while taken.contains(&chosen) {
            let stem: String = name.chars().take(60).collect();
            chosen = format!("{stem}_{n}");
            n += 1;
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
}
