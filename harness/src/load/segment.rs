//! Execution segments: worker I of N takes a fixed, disjoint share of one run (k6's execution
//! segments), so N machines started by an existing engine (a Kubernetes Indexed Job, a CI matrix) add
//! up to exactly the run one machine would make.
//!
//! - Open loop: the whole run's schedule sends request `k` at `k / rate`; segment I sends the `k` with
//!   `k mod N = I - 1`, so the segments' arrivals interleave and their union is that schedule.
//! - Closed loop: `--concurrency` and `--max-requests` are totals; segment I takes `total / N`, plus one
//!   when `I - 1 < total mod N`, so the shares add up to the total exactly.
//! - Request `j` of segment I is request `j·N + I − 1` of the run: it picks its kind and picture the way
//!   that request of a single run would.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::LoadError;

/// The most segments one run may have.
pub const MAX_SEGMENTS: u32 = 10_000;

/// Segment `index` (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Segment {
    /// Which one, from 1.
    pub index: u32,
    /// Of how many.
    pub count: u32,
}

impl Segment {
    /// The whole run on one machine.
    pub const WHOLE: Segment = Segment { index: 1, count: 1 };

    /// Reads `I/N` (`--segment`).
    pub fn parse(text: &str) -> Result<Segment, LoadError> {
        let bad = || LoadError::BadSegment(text.to_string());
        let (index, count) = text.trim().split_once('/').ok_or_else(bad)?;
        let index: u32 = digits(index).ok_or_else(bad)?;
        let count: u32 = digits(count).ok_or_else(bad)?;
        if count == 0 || count > MAX_SEGMENTS || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Segment { index, count })
    }

    /// Segment `JOB_COMPLETION_INDEX + 1` of `count`: what a Kubernetes Indexed Job gives each pod
    /// (its index counts from 0).
    pub fn from_job_index(job_index: Option<&str>, count: u32) -> Result<Segment, LoadError> {
        let job_index = job_index.ok_or(LoadError::NoJobIndex)?;
        let bad = || LoadError::BadJobIndex(job_index.to_string(), count);
        if count == 0 || count > MAX_SEGMENTS {
            return Err(LoadError::BadSegment(format!("--segments {count}")));
        }
        let zero_based: u32 = digits(job_index).ok_or_else(bad)?;
        if zero_based >= count {
            return Err(bad());
        }
        Ok(Segment { index: zero_based + 1, count })
    }

    /// This segment's share of a total that is split (concurrency, a request cap).
    pub fn share(self, total: u64) -> u64 {
        let (count, before) = (u64::from(self.count), u64::from(self.index - 1));
        total / count + u64::from(before < total % count)
    }

    /// The run's number for this segment's request `local` (both from 0).
    pub fn global(self, local: u64) -> u64 {
        local.saturating_mul(u64::from(self.count)).saturating_add(u64::from(self.index - 1))
    }

    /// `segment-I-of-N`: the stem of this segment's files.
    pub fn stem(self) -> String {
        format!("segment-{}-of-{}", self.index, self.count)
    }
}

impl std::fmt::Display for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// ASCII digits only (no sign, no spaces inside, no `+`), at most 9 of them.
fn digits(text: &str) -> Option<u32> {
    let text = text.trim();
    if text.is_empty() || text.len() > 9 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// When the workers start: the same wall-clock instant for all (`--start-at`), or a delay from now
/// (`--start-in`, each worker's own now).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    /// As soon as the server is ready.
    Now,
    /// At this instant (`--start-at`, RFC 3339).
    At {
        /// The instant.
        at: SystemTime,
        /// As given on the command line.
        text: String,
    },
    /// This long after the worker started (`--start-in`).
    In(Duration),
}

impl Start {
    /// How the start reads in a run's identity: `--start-at`'s instant (in ms since the epoch), or
    /// `--start-in`'s delay, as the command line gave it.
    pub fn identity(&self) -> String {
        match self {
            Start::Now => "now".into(),
            Start::At { at, .. } => format!("at {}", unix_ms(*at)),
            Start::In(delay) => format!("in {} ms", delay.as_millis()),
        }
    }
}

/// Milliseconds since the Unix epoch (0 before it).
pub fn unix_ms(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// Microseconds since the Unix epoch (0 before it).
pub fn unix_us(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

/// Reads an RFC 3339 instant: `2026-12-01T10:00:00Z`, with optional fractional seconds and a `±HH:MM`
/// offset instead of `Z` (a lowercase `t`/`z` or a space between date and time, as RFC 3339 allows).
pub fn parse_rfc3339(text: &str) -> Result<SystemTime, LoadError> {
    let bad = || LoadError::NotAnInstant(text.to_string());
    let t = text.trim().as_bytes();
    if t.len() < 20
        || t[4] != b'-'
        || t[7] != b'-'
        || !matches!(t[10], b'T' | b't' | b' ')
        || t[13] != b':'
        || t[16] != b':'
    {
        return Err(bad());
    }
    let number = |from: usize, to: usize| -> Result<i64, LoadError> {
        let part = &t[from..to];
        if !part.iter().all(u8::is_ascii_digit) {
            return Err(bad());
        }
        Ok(part.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
    };
    let (year, month, day) = (number(0, 4)?, number(5, 7)?, number(8, 10)?);
    let (hour, minute, second) = (number(11, 13)?, number(14, 16)?, number(17, 19)?);
    let mut at = 19;
    let mut nanos: i64 = 0;
    if t[at] == b'.' {
        let digits_end = t[at + 1..].iter().position(|b| !b.is_ascii_digit()).map_or(t.len(), |p| at + 1 + p);
        if digits_end == at + 1 {
            return Err(bad());
        }
        for (place, digit) in t[at + 1..digits_end].iter().take(9).enumerate() {
            nanos += i64::from(digit - b'0') * 10i64.pow(8 - place as u32);
        }
        at = digits_end;
    }
    let offset_s = match &t[at..] {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let hours = number(at + 1, at + 3)?;
            let minutes = number(at + 4, at + 6)?;
            let _ = (h1, h2, m1, m2);
            if hours > 23 || minutes > 59 {
                return Err(bad());
            }
            let s = hours * 3600 + minutes * 60;
            if *sign == b'-' { -s } else { s }
        }
        _ => return Err(bad()),
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days_in_month = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1970..=9999).contains(&year)
        || !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month[(month - 1) as usize]
        || hour > 23
        || minute > 59
        || second > 60
    {
        return Err(bad());
    }
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second.min(59) - offset_s;
    let seconds = u64::try_from(seconds).map_err(|_| bad())?;
    Ok(UNIX_EPOCH + Duration::from_secs(seconds) + Duration::from_nanos(nanos as u64))
}

/// Writes an instant as RFC 3339 in UTC with milliseconds: `2026-12-01T10:00:00.000Z`.
pub fn format_rfc3339(at: SystemTime) -> String {
    let ms = unix_ms(at);
    let (days, in_day) = ((ms / 86_400_000) as i64, ms % 86_400_000);
    let (year, month, day) = civil_from_days(days);
    let (h, m, s, milli) = (in_day / 3_600_000, in_day / 60_000 % 60, in_day / 1000 % 60, in_day % 1000);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{milli:03}Z")
}

/// The date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 { month_from_march + 3 } else { month_from_march - 9 };
    (year_of_era + era * 400 + i64::from(month <= 2), month, day)
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn segments_read_and_refused() {
        assert_eq!(Segment::parse("1/1"), Ok(Segment::WHOLE));
        assert_eq!(Segment::parse("3/4"), Ok(Segment { index: 3, count: 4 }));
        assert_eq!(Segment::parse(" 4/4 "), Ok(Segment { index: 4, count: 4 }));
        for bad in ["0/4", "5/4", "a/b", "1/0", "", "/", "1/", "/4", "-1/4", "+1/4", "1/4/4", "1 /4x", "١/٤", "1/10001"]
        {
            assert!(Segment::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(Segment::from_job_index(Some("0"), 4), Ok(Segment { index: 1, count: 4 }));
        assert_eq!(Segment::from_job_index(Some("3"), 4), Ok(Segment { index: 4, count: 4 }));
        assert!(Segment::from_job_index(Some("4"), 4).is_err());
        assert!(Segment::from_job_index(Some("-1"), 4).is_err());
        assert!(Segment::from_job_index(Some("x"), 4).is_err());
        assert_eq!(Segment::from_job_index(None, 4), Err(LoadError::NoJobIndex));
        assert!(Segment::from_job_index(Some("0"), 0).is_err());
    }

    proptest! {
        /// The shares of any total add up to it exactly and differ by at most one.
        #[test]
        fn shares_add_up(total in 0u64..100_000, count in 1u32..200) {
            let shares: Vec<u64> = (1..=count).map(|index| Segment { index, count }.share(total)).collect();
            prop_assert_eq!(shares.iter().sum::<u64>(), total);
            let (min, max) = (shares.iter().min().copied().unwrap_or(0), shares.iter().max().copied().unwrap_or(0));
            prop_assert!(max - min <= 1);
        }

        /// Writing an instant and reading it back gives it again, to the millisecond.
        #[test]
        fn instants_round_trip(ms in 0u64..253_402_300_799_999) {
            let at = UNIX_EPOCH + Duration::from_millis(ms);
            prop_assert_eq!(parse_rfc3339(&format_rfc3339(at)).map(unix_ms), Ok(ms));
        }

        /// The segments' request numbers cover 0..n once each: disjoint, and nothing left out.
        #[test]
        fn request_numbers_partition_the_run(count in 1u32..50, n in 0u64..2_000) {
            let mut seen = vec![0u8; n as usize];
            for index in 1..=count {
                let segment = Segment { index, count };
                let mut local = 0;
                while segment.global(local) < n {
                    seen[segment.global(local) as usize] += 1;
                    local += 1;
                }
            }
            prop_assert!(seen.iter().all(|&times| times == 1));
        }
    }

    #[test]
    fn instants() {
        let at = |s: &str| parse_rfc3339(s).map(unix_ms);
        assert_eq!(at("1970-01-01T00:00:00Z"), Ok(0));
        assert_eq!(at("2026-12-01T10:00:00Z"), Ok(1_796_119_200_000));
        assert_eq!(at("2026-12-01T11:30:00+01:30"), Ok(1_796_119_200_000));
        assert_eq!(at("2026-12-01t08:00:00.250-02:00"), Ok(1_796_119_200_250));
        assert_eq!(at("2000-02-29 00:00:00z"), Ok(951_782_400_000));
        for bad in [
            "2026-12-01",
            "2026-12-01T10:00:00",
            "2026-13-01T10:00:00Z",
            "2026-02-29T10:00:00Z",
            "2026-12-01T24:00:00Z",
            "2026-12-01T10:00:00.Z",
            "2026-12-01T10:00:00+1:00",
            "2026-12-01T10:00:00+24:00",
            "tomorrow",
            "2026-12-01T10:00:00Zjunk",
        ] {
            assert!(parse_rfc3339(bad).is_err(), "{bad}");
        }
    }
}
