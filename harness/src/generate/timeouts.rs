//! Time (1.11l, 1.11m): requests whose headers or body trickle in, on a server whose clocks are
//! shortened by configuration (`header_timeout_s` 2, `body_timeout_s` 1), each trickle well inside a
//! bound, between the two bounds, or past its own, in 3 or 12 pieces (so every read is far quicker
//! than the bound: a server that times each read, not the whole, is seen), length-framed or chunked.
//! Every pair of those axes' values is met on every run ([`super::covering::pairwise`]). The model,
//! from SPEC alone: headers complete before `header_timeout_s` are served, later ones dropped (no
//! answer but a 408, at the bound); a body complete before `body_timeout_s` is served, a later one is
//! 408 `invalid_request_error` "the request body did not arrive within 1 s", at the bound.

use std::time::Duration;

use proptest::prelude::*;

/// `header_timeout_s` of the server the requests go to.
pub const HEADER_TIMEOUT_S: u64 = 2;
/// `body_timeout_s` of the server the requests go to.
pub const BODY_TIMEOUT_S: u64 = 1;
/// How much later than its bound an answer may come (a loaded 2-core machine's scheduling).
pub const LATE: Duration = Duration::from_millis(1300);
/// How much earlier than its bound it may come (the client's clock starts before the server's).
pub const EARLY: Duration = Duration::from_millis(150);

/// How many values each axis takes, in [`Trickle`]'s order.
pub const LEVELS: [usize; 4] = [2, 3, 2, 2];

/// One request that trickles in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trickle {
    /// What trickles: the headers, the body.
    pub slow: usize,
    /// How long it takes in all: within both bounds, between them, past its own.
    pub total: usize,
    /// In 3 pieces, in 12.
    pub pieces: usize,
    /// The body with `Content-Length`, chunked.
    pub chunked: usize,
}

/// What the model wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted {
    /// 200 with the answer.
    Served,
    /// Dropped at `header_timeout_s`: no answer, or a 408.
    Dropped,
    /// 408 at `body_timeout_s` with 1.11m's message.
    TimedOut,
}

impl Trickle {
    /// The request a covering row (or a draw) of [`LEVELS`] names.
    pub fn from_row(row: &[usize]) -> Self {
        let at = |i: usize| row.get(i).copied().unwrap_or(0) % LEVELS[i];
        Trickle { slow: at(0), total: at(1), pieces: at(2), chunked: at(3) }
    }

    /// How long the slow part takes to arrive in all.
    pub fn duration(&self) -> Duration {
        let millis = match (self.slow, self.total) {
            (_, 0) => 400,
            (_, 1) => 1400,
            (0, _) => 2900,
            _ => 1700,
        };
        Duration::from_millis(millis)
    }

    /// The number of pieces.
    pub fn piece_count(&self) -> usize {
        if self.pieces == 0 { 3 } else { 12 }
    }

    /// The bound that applies to the slow part.
    pub fn bound(&self) -> Duration {
        Duration::from_secs(if self.slow == 0 { HEADER_TIMEOUT_S } else { BODY_TIMEOUT_S })
    }

    /// What the server must do.
    pub fn wanted(&self) -> Wanted {
        match (self.slow, self.duration() < self.bound()) {
            (_, true) => Wanted::Served,
            (0, false) => Wanted::Dropped,
            _ => Wanted::TimedOut,
        }
    }
}

/// What the client saw: the final answer's status and body (none: the connection ended without one),
/// and when it came (or the connection ended), from the first byte written.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The status and body of the answer, if one came.
    pub answer: Option<(u16, String)>,
    /// When the answer came or the connection ended.
    pub after: Duration,
}

/// The 408's message (1.11m).
pub fn timeout_message() -> String {
    format!("the request body did not arrive within {BODY_TIMEOUT_S} s")
}

/// What the model says of `seen`.
pub fn judge(trickle: &Trickle, seen: &Seen, content: &str) -> Result<(), String> {
    let at = seen.after;
    let bound = trickle.bound();
    let in_time = at + EARLY >= bound && at <= bound + LATE;
    match (trickle.wanted(), &seen.answer) {
        (Wanted::Served, Some((200, body))) if body.contains(content) => Ok(()),
        (Wanted::Served, other) => Err(format!(
            "{other:?} after {at:?}, for a {} of {:?} (within its {bound:?}: 200 with the answer)",
            what(trickle),
            trickle.duration()
        )),
        (Wanted::Dropped, None | Some((408, _))) if in_time => Ok(()),
        (Wanted::Dropped, other) => Err(format!(
            "{other:?} after {at:?}, for headers taking {:?} (1.11l: dropped at header_timeout_s {HEADER_TIMEOUT_S} s)",
            trickle.duration()
        )),
        (Wanted::TimedOut, Some((408, body))) if in_time && body.contains(&timeout_message()) => Ok(()),
        (Wanted::TimedOut, other) => Err(format!(
            "{other:?} after {at:?}, for a body taking {:?} in reads {:?} apart (1.11m: 408 {:?} at body_timeout_s {BODY_TIMEOUT_S} s)",
            trickle.duration(),
            trickle.duration() / trickle.piece_count() as u32,
            timeout_message()
        )),
    }
}

fn what(trickle: &Trickle) -> &'static str {
    if trickle.slow == 0 { "head" } else { "body" }
}

/// Every trickle, drawn.
pub fn trickles() -> impl Strategy<Value = Trickle> {
    proptest::collection::vec(0..3usize, LEVELS.len()).prop_map(|row| Trickle::from_row(&row))
}

/// The covering trickles.
pub fn covering() -> Vec<Trickle> {
    super::covering::pairwise(&LEVELS).iter().map(|row| Trickle::from_row(row)).collect()
}

/// The trickle in a line.
pub fn describe(trickle: &Trickle) -> String {
    format!(
        "the {} in {} pieces over {:?}, the body {}",
        what(trickle),
        trickle.piece_count(),
        trickle.duration(),
        if trickle.chunked == 1 { "chunked" } else { "with Content-Length" }
    )
}

/// The variants the case is named against.
pub const VARIANTS: &[&str] =
    &["body-timeout-per-read", "body-timeout-ignored", "header-timeout-ignored", "header-timeout-is-body-timeout"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bound_is_met_on_both_sides_by_the_covering_trickles() {
        let rows = covering();
        let wanted: Vec<(usize, Wanted)> = rows.iter().map(|t| (t.slow, t.wanted())).collect();
        for need in [(0, Wanted::Served), (0, Wanted::Dropped), (1, Wanted::Served), (1, Wanted::TimedOut)] {
            assert!(wanted.contains(&need), "{need:?}");
        }
        // Headers between the two bounds (served, though slower than body_timeout_s).
        assert!(rows.iter().any(|t| t.slow == 0 && t.total == 1));
        // A timed-out body in many quick reads.
        assert!(rows.iter().any(|t| t.wanted() == Wanted::TimedOut && t.pieces == 1));
        assert!(rows.len() <= 8, "{} rows", rows.len());
    }

    #[test]
    fn the_judge_holds_the_bound_on_both_sides() {
        let body = Trickle { slow: 1, total: 2, pieces: 1, chunked: 0 };
        let answer = Some((408, format!("{{\"error\":{{\"message\":\"{}\"}}}}", timeout_message())));
        let seen = |millis: u64| Seen { answer: answer.clone(), after: Duration::from_millis(millis) };
        assert!(judge(&body, &seen(1050), "x").is_ok());
        assert!(judge(&body, &seen(500), "x").is_err());
        assert!(judge(&body, &seen(2900), "x").is_err());
        let late = Seen { answer: Some((200, "x".into())), after: Duration::from_millis(1700) };
        assert!(judge(&body, &late, "x").is_err());
    }
}
