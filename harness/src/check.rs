//! What a check's verdict is made of: [`CheckError`] (a failure with expected and actual, or a reason
//! the case could not run) and the small assertion helpers. A leaf: the HTTP client, the context and
//! the cases all speak it without knowing each other.

/// Why a check did not pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckError {
    /// The server did something else than the clause says.
    Fail {
        /// What the clause wants.
        expected: String,
        /// What the server did.
        actual: String,
    },
    /// The case could not run here (say why).
    NotRun(String),
}

/// The result of a check.
pub type CheckResult = Result<(), CheckError>;

/// Fails with expected/actual unless `expected == actual`.
pub fn expect_eq<T: PartialEq + std::fmt::Debug>(what: &str, expected: T, actual: T) -> CheckResult {
    if expected == actual {
        return Ok(());
    }
    Err(CheckError::Fail { expected: format!("{what}: {expected:?}"), actual: format!("{what}: {actual:?}") })
}

/// Fails unless `condition`, describing what was wanted and what was seen.
pub fn expect(condition: bool, expected: impl Into<String>, actual: impl Into<String>) -> CheckResult {
    if condition {
        return Ok(());
    }
    Err(CheckError::Fail { expected: expected.into(), actual: actual.into() })
}

/// A failure from anything that went wrong on the way (a refused connection, a body that is not JSON).
pub fn broken(what: impl std::fmt::Display) -> CheckError {
    CheckError::Fail { expected: "a well-formed exchange".into(), actual: what.to_string() }
}
