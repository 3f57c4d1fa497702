//! The generator's reach, in odds: at the default budget, at least 999 runs of 1,000 of
//! [`conversations`] hold what each variant `gen.lifting-model` names needs in order to be caught (a
//! picture lifted before non-ASCII text, in a later text part, as the eighth of a message, a short
//! run, wrong padding, …), each piece read the way the model reads the text. [`VARIANTS`] lists them.

use super::*;

/// What the model does with one piece of a message.
struct Seen {
    part: usize,
    /// A picture the model lifts.
    lifted: bool,
    /// Whether one of the message's 8 lifts was still free when it came.
    room: bool,
    /// Whether its run starts a run of its own (a `data:` prefix, or no base64 character before it).
    own_run: bool,
    /// Whether the next piece of its part is text that starts with a non-ASCII character.
    non_ascii_next: bool,
}

/// Each piece of `message` as the model reads it, the 8 lifts counted per message (or per part).
fn seen(message: &Message, per_part: bool) -> Vec<(Seen, &Piece)> {
    let mut left = PER_MESSAGE;
    let mut out = Vec::new();
    for (p, part) in message.parts.iter().enumerate() {
        if per_part {
            left = PER_MESSAGE;
        }
        let mut last_in_class = false;
        for (i, piece) in part.iter().enumerate() {
            let text = piece.text();
            let own_run = !last_in_class || matches!(piece, Piece::Picture(pic) if pic.prefix.is_some());
            let found = own_run && matches!(piece, Piece::Picture(_)) && lifted(&text, &mut 1) != text;
            let room = left > 0;
            let lifted = found && room;
            left -= usize::from(lifted);
            let non_ascii_next =
                matches!(part.get(i + 1), Some(Piece::Text(t)) if t.chars().next().is_some_and(|c| !c.is_ascii()));
            // A picture is followed by a space before a base64 character (Message::texts).
            last_in_class = !matches!(piece, Piece::Picture(_)) && text.bytes().last().is_some_and(in_class)
                || text.is_empty() && last_in_class;
            out.push((Seen { part: p, lifted, room, own_run, non_ascii_next }, piece));
        }
    }
    out
}

fn tool_pieces(c: &Conversation) -> impl Iterator<Item = (Seen, &Piece)> {
    c.0.iter().filter(|m| m.role == "tool").flat_map(|m| seen(m, false))
}

fn bare_symbols(pic: &Pic) -> usize {
    STANDARD_NO_PAD.encode(pic.bytes()).len()
}

/// What each variant gen.lifting-model names needs at least once in a run of its budget.
fn needs(variant: &str, c: &Conversation) -> bool {
    let picture = |piece: &Piece| match piece {
        Piece::Picture(pic) => Some(pic.clone()),
        _ => None,
    };
    match variant {
        "lift-note" | "lift-keeps-base64" => tool_pieces(c).any(|(s, _)| s.lifted),
        "lift-swallows-non-ascii" => tool_pieces(c).any(|(s, _)| s.lifted && s.non_ascii_next),
        "lift-digit-end-refused" => {
            tool_pieces(c).any(|(s, p)| s.lifted && picture(p).is_some_and(|pic| pic.three_left))
        }
        "lift-first-text-part-only" => tool_pieces(c).any(|(s, _)| s.lifted && s.part > 0),
        "lift-anything" => tool_pieces(c).any(|(s, p)| s.room && matches!(p, Piece::Noise { .. })),
        "lift-users" => c.0.iter().filter(|m| m.role == "user").flat_map(|m| seen(m, false)).any(|(s, _)| s.lifted),
        "lift-cap-off-by-one" => {
            c.0.iter()
                .filter(|m| m.role == "tool")
                .any(|m| seen(m, false).iter().filter(|(s, _)| s.lifted).count() == 8)
        }
        "lift-per-part" => c.0.iter().filter(|m| m.role == "tool").any(|m| {
            let count = |per_part| seen(m, per_part).iter().filter(|(s, _)| s.lifted).count();
            count(true) > count(false)
        }),
        "lift-short-runs" => tool_pieces(c).any(|(s, p)| {
            s.room
                && s.own_run
                && picture(p)
                    .is_some_and(|pic| pic.padding != Padding::Wrong && (1000..1024).contains(&bare_symbols(&pic)))
        }),
        "lift-partial-padding" => tool_pieces(c).any(|(s, p)| {
            s.room
                && s.own_run
                && picture(p).is_some_and(|pic| pic.padding == Padding::Wrong && bare_symbols(&pic) >= 1024)
        }),
        other => panic!("no odds for {other}"),
    }
}

/// The variants `needs` knows: `cases::generated`'s tests require gen.lifting-model to name no other.
pub(crate) const VARIANTS: &[&str] = &[
    "lift-swallows-non-ascii",
    "lift-digit-end-refused",
    "lift-first-text-part-only",
    "lift-anything",
    "lift-users",
    "lift-note",
    "lift-keeps-base64",
    "lift-cap-off-by-one",
    "lift-short-runs",
    "lift-partial-padding",
    "lift-per-part",
];

#[test]
fn nearly_every_run_holds_what_each_named_variant_needs() {
    let variants = VARIANTS;
    let budget = crate::generate::DEFAULT_BUDGET as usize;
    let held = crate::generate::runs_holding_each(conversations(), budget, variants.len(), |c| {
        variants.iter().map(|variant| needs(variant, c)).collect()
    });
    let weak: Vec<_> = variants.iter().zip(held).filter(|(_, held)| *held < 999).collect();
    assert!(weak.is_empty(), "runs of 1,000 holding what a variant needs: {weak:?}");
}
