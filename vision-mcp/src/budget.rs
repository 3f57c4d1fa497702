//! The call budget (seed 003): a SQLite file that survives restarts, limits per rolling 24 hours and
//! per rolling 10 minutes, and a call reserved in one `BEGIN IMMEDIATE` transaction *before* the API is
//! asked. A reserved call stays consumed whatever happens next (failure, timeout, cancellation).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, TransactionBehavior};

/// Why no call was reserved. The texts go back to the client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    /// The day's calls are used up.
    #[error("the limit of {0} calls per day is used up; nothing was sent")]
    Day(u32),
    /// The 10 minutes' calls are used up.
    #[error("the limit of {0} calls per 10 minutes is used up; try again later (nothing was sent)")]
    TenMinutes(u32),
    /// The database cannot be opened or written.
    #[error("the usage database cannot be used, so nothing was sent")]
    Unusable,
}

/// The limits and where they are kept.
#[derive(Debug, Clone)]
pub struct Budget {
    path: PathBuf,
    per_day: u32,
    per_10_min: u32,
    /// Whether this process has set the database up (WAL, the table). Held while doing it, so
    /// concurrent first calls do not race on switching the journal mode, which SQLite may refuse
    /// with "busy" without waiting.
    set_up: Arc<Mutex<bool>>,
}

fn now_seconds() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO).as_secs() as i64
}

impl Budget {
    /// A budget kept in `path`.
    pub fn new(path: &Path, per_day: u32, per_10_min: u32) -> Self {
        Self { path: path.to_path_buf(), per_day, per_10_min, set_up: Arc::new(Mutex::new(false)) }
    }

    fn connect(&self) -> rusqlite::Result<Connection> {
        let connection = Connection::open(&self.path)?;
        connection.busy_timeout(Duration::from_secs(10))?;
        let mut set_up = self.set_up.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !*set_up {
            connection.execute_batch(
                "PRAGMA journal_mode = WAL; CREATE TABLE IF NOT EXISTS calls (at INTEGER NOT NULL);
                 CREATE INDEX IF NOT EXISTS calls_at ON calls (at);",
            )?;
            *set_up = true;
        }
        Ok(connection)
    }

    /// Whether the database can be opened and written now (checked at startup, for a log line).
    pub fn usable(&self) -> bool {
        self.connect().is_ok()
    }

    /// Reserves one call now, or says why not. Blocking: call it on a blocking thread.
    pub fn reserve(&self) -> Result<(), BudgetError> {
        self.reserve_at(now_seconds())
    }

    /// Reserves one call at `now` (seconds since the epoch).
    pub fn reserve_at(&self, now: i64) -> Result<(), BudgetError> {
        let mut connection = self.connect().map_err(|_| BudgetError::Unusable)?;
        let transaction =
            connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|_| BudgetError::Unusable)?;
        let count = |since: i64| -> Result<u32, BudgetError> {
            transaction
                .query_row("SELECT COUNT(*) FROM calls WHERE at > ?1", [since], |row| row.get::<_, u32>(0))
                .map_err(|_| BudgetError::Unusable)
        };
        if count(now - 86_400)? >= self.per_day {
            return Err(BudgetError::Day(self.per_day));
        }
        if count(now - 600)? >= self.per_10_min {
            return Err(BudgetError::TenMinutes(self.per_10_min));
        }
        transaction.execute("INSERT INTO calls (at) VALUES (?1)", [now]).map_err(|_| BudgetError::Unusable)?;
        transaction.commit().map_err(|_| BudgetError::Unusable)
    }

    /// Calls recorded in the last 24 hours (for tests and the log).
    pub fn used_today(&self) -> Result<u32, BudgetError> {
        let connection = self.connect().map_err(|_| BudgetError::Unusable)?;
        connection
            .query_row("SELECT COUNT(*) FROM calls WHERE at > ?1", [now_seconds() - 86_400], |row| row.get(0))
            .map_err(|_| BudgetError::Unusable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_windows_are_enforced_and_roll() {
        let dir = tempfile::tempdir().expect("dir");
        let budget = Budget::new(&dir.path().join("usage.sqlite3"), 4, 2);
        let t = 1_000_000;
        assert_eq!(budget.reserve_at(t), Ok(()));
        assert_eq!(budget.reserve_at(t + 1), Ok(()));
        assert_eq!(budget.reserve_at(t + 2), Err(BudgetError::TenMinutes(2)));
        assert_eq!(budget.reserve_at(t + 601), Ok(()));
        assert_eq!(budget.reserve_at(t + 602), Ok(()));
        assert_eq!(budget.reserve_at(t + 1300), Err(BudgetError::Day(4)));
        assert_eq!(budget.reserve_at(t + 86_401), Ok(()), "a call 24 hours old no longer counts");
    }

    /// `reserve` and `used_today` count back from the clock's now: a call recorded 25 hours ago no longer
    /// counts against the day, nor one 11 minutes ago against the 10 minutes (a clock stuck at the
    /// epoch would count every call ever made).
    #[test]
    fn reserve_and_used_today_read_the_real_clock() {
        let dir = tempfile::tempdir().expect("dir");
        let now = now_seconds();
        assert!(now > 1_700_000_000, "the clock reads a date after 2023: {now}");
        let day = Budget::new(&dir.path().join("day.sqlite3"), 1, 5);
        assert_eq!(day.reserve_at(now - 25 * 3_600), Ok(()));
        assert_eq!(day.used_today(), Ok(0), "a call 25 hours old is not today's");
        assert_eq!(day.reserve(), Ok(()), "the day's one call is free again");
        assert_eq!(day.used_today(), Ok(1));
        assert_eq!(day.reserve(), Err(BudgetError::Day(1)));
        let ten = Budget::new(&dir.path().join("ten.sqlite3"), 5, 1);
        assert_eq!(ten.reserve_at(now - 11 * 60), Ok(()));
        assert_eq!(ten.reserve(), Ok(()), "a call 11 minutes old is out of the 10 minutes");
        assert_eq!(ten.reserve(), Err(BudgetError::TenMinutes(1)));
    }

    #[test]
    fn the_day_is_a_rolling_24_hours_not_a_calendar_day() {
        let dir = tempfile::tempdir().expect("dir");
        let budget = Budget::new(&dir.path().join("usage.sqlite3"), 2, 100);
        let midnight = 1_796_083_200; // 2026-12-01T00:00:00Z
        let first = midnight - 3600;
        assert_eq!(budget.reserve_at(first), Ok(()));
        assert_eq!(budget.reserve_at(first + 1), Ok(()));
        // Two hours later it is another day on the calendar, but not 24 hours later.
        assert_eq!(budget.reserve_at(midnight + 3600), Err(BudgetError::Day(2)));
        assert_eq!(budget.reserve_at(first + 86_399), Err(BudgetError::Day(2)), "23:59:59 later");
        assert_eq!(budget.reserve_at(first + 86_400), Ok(()), "exactly 24 hours later the first no longer counts");
        assert_eq!(budget.reserve_at(first + 86_400), Err(BudgetError::Day(2)), "the second still does");
        assert_eq!(budget.reserve_at(first + 86_401), Ok(()), "a second later the second no longer counts either");
    }

    #[test]
    fn an_unusable_database_reserves_nothing() {
        let dir = tempfile::tempdir().expect("dir");
        let budget = Budget::new(&dir.path().join("no-such-folder/usage.sqlite3"), 4, 2);
        assert_eq!(budget.reserve(), Err(BudgetError::Unusable));
        assert!(!budget.usable());
    }
}
