//! Concurrency over a shared bound (1.11n–p, 1.11s): a body A that holds part of `max_body_mib` 1 —
//! half sent and left open, complete with its answer still streaming, or answered — while a body B of
//! 64 KiB, ~293 KiB or ~684 KiB arrives, then a body C of 64 KiB, then A's rest. Every pair of the
//! axes' values (A's phase, size and framing, B's size) is met on every run, and the states 1.11s
//! names whose condition joins three axes are added whole. The model, from SPEC alone, keeps the
//! room's account: a body holds no room within 64 KiB, else all its bytes read so far in KiB rounded
//! up, until it is parsed; B is served when its bytes fit beside what A holds, else 503; C and A always.

use proptest::prelude::*;

/// The room, in KiB (`max_body_mib` 1).
pub const ROOM_KIB: usize = 1024;
/// What a body may send without taking room (1.11o).
pub const FREE: usize = 64 << 10;
/// A's sizes.
pub const A_SIZES: [usize; 2] = [600_000, 1_000_000];
/// B's sizes.
pub const B_SIZES: [usize; 3] = [FREE, 300_000, 700_000];
/// How many values each axis takes, in [`Plan`]'s order.
pub const LEVELS: [usize; 4] = [3, 2, 2, 3];

/// One interleaving.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// When B comes: A's body half sent and held open; A's body whole and its answer streaming; A
    /// answered.
    pub phase: usize,
    /// A's size: [`A_SIZES`].
    pub a_size: usize,
    /// A's body with `Content-Length`, or chunked.
    pub a_chunked: usize,
    /// B's size: [`B_SIZES`].
    pub b_size: usize,
}

/// KiB rounded up.
pub fn kib(bytes: usize) -> usize {
    bytes.div_ceil(1024)
}

/// The room a body holds after `read` bytes (1.11s).
pub fn held(read: usize) -> usize {
    if read <= FREE { 0 } else { kib(read) }
}

impl Plan {
    /// The plan a covering row (or a draw) names.
    pub fn from_row(row: &[usize]) -> Self {
        let at = |i: usize| row.get(i).copied().unwrap_or(0) % LEVELS[i];
        Plan { phase: at(0), a_size: at(1), a_chunked: at(2), b_size: at(3) }
    }

    /// A's body length.
    pub fn a_len(&self) -> usize {
        A_SIZES[self.a_size]
    }

    /// B's body length.
    pub fn b_len(&self) -> usize {
        B_SIZES[self.b_size]
    }

    /// What A has sent when B comes, in body bytes.
    pub fn a_sent(&self) -> usize {
        if self.phase == 0 { self.a_len() / 2 } else { self.a_len() }
    }

    /// Whether B finds room: A holds room only while its body is being read (phase 0).
    pub fn b_served(&self) -> bool {
        let a_holds = if self.phase == 0 { held(self.a_sent()) } else { 0 };
        held(self.b_len()) == 0 || a_holds + held(self.b_len()) <= ROOM_KIB
    }
}

/// What the client saw: the statuses of B, C and A, and B's answer's text.
#[derive(Debug, Clone)]
pub struct Seen {
    /// B's status and body.
    pub b: (u16, String),
    /// C's status.
    pub c: u16,
    /// A's status.
    pub a: u16,
}

/// What the model says of `seen`.
pub fn judge(plan: &Plan, seen: &Seen) -> Result<(), String> {
    let (b, body) = &seen.b;
    let a_holds = if plan.phase == 0 { held(plan.a_sent()) } else { 0 };
    let account = format!(
        "A holds {a_holds} KiB of {ROOM_KIB} ({} bytes read{}), B needs {} KiB",
        plan.a_sent(),
        ["", ", answer streaming", ", answered"][plan.phase],
        held(plan.b_len())
    );
    if plan.b_served() && *b != 200 {
        return Err(format!("B of {} bytes: {b} {body:.160} ({account}: room enough, 1.11n-o, 1.11s)", plan.b_len()));
    }
    if !plan.b_served() && (*b != 503 || !body.contains("the server is reading other large requests")) {
        return Err(format!(
            "B of {} bytes: {b} {body:.160} ({account}: 503 server_error, 1.11n, 1.11p)",
            plan.b_len()
        ));
    }
    if seen.c != 200 {
        return Err(format!("C of 65,536 bytes: {} ({account}; its first 64 KiB need no room, 1.11o)", seen.c));
    }
    if seen.a != 200 {
        return Err(format!("A of {} bytes: {} (it had its room, 1.11n)", plan.a_len(), seen.a));
    }
    Ok(())
}

/// Every plan, drawn.
pub fn plans() -> impl Strategy<Value = Plan> {
    proptest::collection::vec(0..3usize, LEVELS.len()).prop_map(|row| Plan::from_row(&row))
}

/// The covering plans, then the states whose condition joins three axes: a large A's answer
/// streaming with a large B (room given back once A is parsed, not once it is answered), and a
/// large A half read with the largest B (no room) and with a middle one (room).
pub fn covering() -> Vec<Plan> {
    let mut rows: Vec<Plan> = super::covering::pairwise(&LEVELS).iter().map(|row| Plan::from_row(row)).collect();
    for a_chunked in 0..2 {
        rows.push(Plan { phase: 1, a_size: 1, a_chunked, b_size: 2 });
        rows.push(Plan { phase: 0, a_size: 1, a_chunked, b_size: 2 });
    }
    rows.push(Plan { phase: 0, a_size: 1, a_chunked: 0, b_size: 1 });
    rows
}

/// The plan in a line.
pub fn describe(plan: &Plan) -> String {
    format!(
        "A of {} bytes ({}), {}; then B of {} bytes, C of 65,536, then A's rest",
        plan.a_len(),
        if plan.a_chunked == 1 { "chunked" } else { "Content-Length" },
        ["half sent and held open", "sent whole, its answer streaming", "answered"][plan.phase],
        plan.b_len()
    )
}

/// The variants the case is named against.
pub const VARIANTS: &[&str] = &["room-held-until-answered", "body-room-unbounded", "room-refuses-small-bodies"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_account_follows_1_11s() {
        assert_eq!((held(FREE), held(FREE + 1), held(1_048_000)), (0, 65, 1024));
        let plan = |phase, a_size, b_size| Plan { phase, a_size, a_chunked: 0, b_size };
        assert!(!plan(0, 1, 2).b_served(), "489 + 684 KiB > 1024");
        assert!(plan(0, 0, 2).b_served(), "293 + 684 KiB <= 1024");
        assert!(plan(1, 1, 2).b_served() && plan(0, 1, 0).b_served());
    }

    #[test]
    fn every_named_variant_is_met_by_the_covering_plans() {
        let rows = covering();
        assert!(rows.iter().any(|p| p.phase == 1 && p.a_size == 1 && p.b_size == 2 && p.a_chunked == 0));
        assert!(rows.iter().any(|p| !p.b_served()));
        assert!(rows.iter().any(|p| p.phase == 0 && p.b_served() && p.b_size != 0));
        assert!(rows.len() <= 16, "{} rows", rows.len());
    }
}
