//! Every member of "a character" at every cut (4.6f): answers made of characters of 1, 2, 3 and 4 UTF-8
//! bytes, cut by `max_tokens` (one token a byte, 4.8) after each of their bytes. The model, from SPEC
//! alone: the content is the bytes kept, a character cut inside ending as exactly one U+FFFD, streamed
//! and whole alike. The covering texts hold a character of each width and are cut at every byte, so
//! every (width, bytes kept of it) pair is met on every run; drawn texts follow.

use proptest::prelude::*;

/// Characters by their UTF-8 width (index + 1 bytes): none is whitespace or `<`, so 4.6b–e never apply.
pub const WIDTHS: [&[char]; 4] = [
    &['a', 'Z', '7', '!', '~'],
    &['é', 'ß', 'Ω', 'ж'],
    &['€', '日', '\u{FFFD}', 'ｱ'],
    &['𝄞', '😀', '\u{10FFFF}', '𠀋'],
];

/// The bytes the mock engine writes before the answer: its empty reasoning's end (4.9, 4.8).
pub const THINK_END: &str = "</think>";

/// Texts that put a character of every width between two others, so cutting each at every byte
/// meets every (width, bytes kept) pair.
pub const COVERING: [&str; 3] = ["aé€𝄞b", "😀日ßZ", "\u{FFFD}\u{10FFFF}Ω7ｱ"];

/// An answer: its characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The answer's text (after [`THINK_END`]).
    pub text: String,
}

impl Answer {
    /// The mock-engine script that writes it.
    pub fn script(&self) -> String {
        format!("{THINK_END}{}", self.text)
    }

    /// Every `max_tokens` worth asking: each byte of the answer kept, and one past its end.
    pub fn cuts(&self) -> std::ops::RangeInclusive<usize> {
        THINK_END.len() + 1..=THINK_END.len() + self.text.len() + 1
    }

    /// The content 4.6f wants for `max_tokens`: the whole characters kept, and one U+FFFD for a
    /// character cut inside.
    pub fn content(&self, max_tokens: usize) -> String {
        let kept = max_tokens.saturating_sub(THINK_END.len());
        let mut content = String::new();
        let mut used = 0;
        for c in self.text.chars() {
            if used + c.len_utf8() <= kept {
                content.push(c);
                used += c.len_utf8();
            } else {
                if used < kept {
                    content.push('\u{FFFD}');
                }
                break;
            }
        }
        content
    }
}

/// Drawn answers: 1 to 8 characters of any width.
pub fn answers() -> impl Strategy<Value = Answer> {
    let character = (0..4usize, 0..5usize).prop_map(|(width, at)| WIDTHS[width][at % WIDTHS[width].len()]);
    proptest::collection::vec(character, 1..=8).prop_map(|chars| Answer { text: chars.into_iter().collect() })
}

/// The covering answers.
pub fn covering() -> Vec<Answer> {
    COVERING.iter().map(|text| Answer { text: (*text).to_string() }).collect()
}

/// The answer as a report shows it.
pub fn describe(answer: &Answer) -> String {
    let widths: Vec<usize> = answer.text.chars().map(char::len_utf8).collect();
    format!("script {:?} (character widths {widths:?}), cut at every byte", answer.script())
}

/// The variants the case is named against.
pub const VARIANTS: &[&str] = &["cut-bytes-each-replaced", "cut-character-dropped"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_width_and_every_byte_kept_of_it_is_met() {
        let mut met = std::collections::BTreeSet::new();
        for answer in covering() {
            let mut start = 0;
            for c in answer.text.chars() {
                for kept in 1..c.len_utf8() {
                    met.insert((c.len_utf8(), kept));
                    let cut = THINK_END.len() + start + kept;
                    assert!(answer.cuts().contains(&cut));
                    assert!(answer.content(cut).ends_with('\u{FFFD}'), "{answer:?} at {cut}");
                }
                start += c.len_utf8();
            }
        }
        let wanted: std::collections::BTreeSet<_> = (2..=4).flat_map(|w| (1..w).map(move |k| (w, k))).collect();
        assert_eq!(met, wanted);
    }

    #[test]
    fn the_model_keeps_whole_characters_and_one_mark() {
        let answer = Answer { text: "a€b".into() };
        let at = |k: usize| answer.content(THINK_END.len() + k);
        assert_eq!([at(1), at(2), at(3), at(4), at(5), at(6)], ["a", "a\u{FFFD}", "a\u{FFFD}", "a€", "a€b", "a€b"]);
        assert!(
            WIDTHS.iter().enumerate().all(|(w, cs)| cs.iter().all(|c| c.len_utf8() == w + 1 && !c.is_whitespace()))
        );
    }
}
