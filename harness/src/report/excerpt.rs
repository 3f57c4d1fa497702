//! A bounded excerpt of a text a report embeds (a case's expected and actual, a shrunk request, an
//! exchange): a server can answer with megabytes, and a report shows at most [`BOUND`] bytes of each
//! field, cut at a character boundary, with a line that says how many bytes were left out. The JSON
//! report keeps every text whole.

use std::borrow::Cow;

/// The most bytes of one text field the HTML and terminal reports show.
pub const BOUND: usize = 64 * 1024;

/// `text` whole when it holds at most `bound` bytes; else its first `bound` bytes or fewer (never
/// half a character) and a line saying how many bytes were left out.
pub fn excerpt(text: &str, bound: usize) -> Cow<'_, str> {
    if text.len() <= bound {
        return Cow::Borrowed(text);
    }
    let mut cut = bound;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let left_out = text.len() - cut;
    Cow::Owned(format!(
        "{}\n… {} bytes more not shown (of {}: a report shows the first {} KiB of each text; the JSON report has it \
         whole)",
        &text[..cut],
        grouped(left_out),
        grouped(text.len()),
        bound / 1024
    ))
}

/// `n` with a comma between each group of three digits (`10,485,760`).
pub fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (at, digit) in digits.chars().enumerate() {
        if at > 0 && (digits.len() - at).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_within_the_bound_is_whole_and_a_longer_one_says_what_it_left_out() {
        assert!(matches!(excerpt("short", 5), Cow::Borrowed("short")));
        let long = format!("{}é", "a".repeat(9));
        let cut = excerpt(&long, 10);
        assert_eq!(
            cut,
            "aaaaaaaaa\n… 2 bytes more not shown (of 11: a report shows the first 0 KiB of each text; the JSON report has it whole)"
        );
        let answer = "x".repeat(10 << 20);
        let cut = excerpt(&answer, BOUND);
        assert!(cut.len() < BOUND + 200, "{}", cut.len());
        assert!(cut.ends_with("… 10,420,224 bytes more not shown (of 10,485,760: a report shows the first 64 KiB of each text; the JSON report has it whole)"), "{}", &cut[BOUND..]);
        assert_eq!(
            (grouped(0), grouped(999), grouped(1000), grouped(1_234_567)),
            ("0".into(), "999".into(), "1,000".into(), "1,234,567".into())
        );
    }
}
