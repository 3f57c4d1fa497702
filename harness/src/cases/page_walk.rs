//! One walk through the page at every width, shared by the cases that one server runs (one scenario
//! group): the first of them to run walks it, checking at each point what every case of the group
//! checks there, and each case then reads its own verdict — its first failure, with the width, as if
//! it had walked alone — at the cost of one browser and one server restart a width instead of one
//! per case. A case the run does not hold is not checked; a walk step that fails (the page did not do
//! what the next point needs) fails every case still open. A case that walks alone
//! ([`at_every_width`]) is a walk of one.

use std::collections::HashMap;
use std::future::Future;

use futures::future::BoxFuture;

use super::page_visit::{Visit, WidthCheck, at_width, open};
use crate::browser::driver;
use crate::browser::proxy::Framing;
use crate::case::{CheckError, CheckResult};
use crate::context::Ctx;

/// The walk at one width: its steps, each case's checks among them through [`Verdicts::check`].
pub(super) type Steps = for<'a> fn(&'a Visit<'a>, &'a mut Verdicts) -> BoxFuture<'a, CheckResult>;

/// [`Steps`], or a closure that does the same.
type StepsFn = dyn for<'a> Fn(&'a Visit<'a>, &'a mut Verdicts) -> BoxFuture<'a, CheckResult> + Send + Sync;

/// Which cases are still open on the walk, and what each has found so far.
pub(super) struct Verdicts {
    width: u32,
    open: Vec<&'static str>,
    failed: HashMap<&'static str, CheckError>,
    checked: HashMap<&'static str, usize>,
}

impl Verdicts {
    /// Whether any case is still open (a walk with none left ends).
    fn any_open(&self) -> bool {
        !self.open.is_empty()
    }

    /// Runs `check` for the case `id` when it is open; a failure closes it, named with the width and
    /// `point` (the state the page was in).
    pub(super) async fn check<F, Fut>(&mut self, id: &'static str, point: &str, check: F)
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = CheckResult>,
    {
        if self.open.contains(&id) {
            *self.checked.entry(id).or_default() += 1;
            if let Err(error) = check().await {
                let error = match error {
                    CheckError::Fail { expected, actual } if !point.is_empty() => {
                        CheckError::Fail { expected: format!("{point}: {expected}"), actual }
                    }
                    other => other,
                };
                self.close(id, at_width(error, self.width));
            }
        }
    }

    fn close(&mut self, id: &'static str, error: CheckError) {
        self.open.retain(|open| *open != id);
        self.failed.insert(id, error);
    }

    /// The walk cannot go on at this width: every open case fails with `error`.
    fn all_fail(&mut self, error: CheckError) {
        let error = at_width(error, self.width);
        for id in std::mem::take(&mut self.open) {
            self.failed.insert(id, error.clone());
        }
    }
}

/// What a walk found: the case that walked it (the screenshots are under its name) and each case's
/// verdicts; or why it could not start.
struct Walked {
    by: &'static str,
    widths: usize,
    found: Result<Verdicts, CheckError>,
}

/// Walks `steps` at every width for the cases `wanted`, `case` naming the screenshots (one named
/// `failed` at a width where a case failed).
async fn walk(ctx: &Ctx, case: &'static str, wanted: Vec<&'static str>, steps: &StepsFn) -> Walked {
    let widths = match driver::widths() {
        Ok(widths) => widths,
        Err(why) => return Walked { by: case, widths: 0, found: Err(CheckError::NotRun(why)) },
    };
    let driver = match driver::driver().await {
        Ok(driver) => driver,
        Err(error) => return Walked { by: case, widths: widths.len(), found: Err(error) },
    };
    let mut verdicts = Verdicts { width: 0, open: wanted, failed: HashMap::new(), checked: HashMap::new() };
    for (i, width) in widths.iter().copied().enumerate() {
        verdicts.width = width;
        let http = if i == 0 { Ok(ctx.http.clone()) } else { ctx.restart().await };
        let visit = match http {
            Ok(http) => open(ctx, &driver, case, width, http.base(), Framing::AsServed).await,
            Err(error) => Err(error),
        };
        match visit {
            Ok(visit) => {
                let failed_before = verdicts.failed.len();
                if let Err(error) = steps(&visit, &mut verdicts).await {
                    verdicts.all_fail(error);
                }
                if verdicts.failed.len() > failed_before {
                    visit.session.screenshot("failed").await;
                }
                visit.session.close().await;
            }
            Err(error) => verdicts.all_fail(error),
        }
        if !verdicts.any_open() {
            break;
        }
    }
    Walked { by: case, widths: widths.len(), found: Ok(verdicts) }
}

/// Runs `check` for the case `case` alone at every width, each in a fresh browser on a restarted
/// server: its first failure, with the width.
pub(super) async fn at_every_width(ctx: &Ctx, case: &'static str, check: WidthCheck) -> CheckResult {
    let steps = steps_fn(move |visit, verdicts| {
        Box::pin(async move {
            verdicts.check(case, "", || check(visit)).await;
            Ok(())
        })
    });
    verdict(&walk(ctx, case, vec![case], &steps).await, case, 1)
}

/// `async fn $case(ctx)`: the case `$id`, running `$check` at every width ([`at_every_width`]).
macro_rules! every_width_cases {
    ($($case:ident = $id:literal, $check:ident;)*) => {
        $(async fn $case(ctx: $crate::context::Ctx) -> $crate::case::CheckResult {
            $crate::cases::page_walk::at_every_width(&ctx, $id, $check).await
        })*
    };
}
pub(super) use every_width_cases;

/// Lets a closure be [`StepsFn`] (the compiler infers the lifetimes it takes from this bound).
fn steps_fn<F>(steps: F) -> F
where
    F: for<'a> Fn(&'a Visit<'a>, &'a mut Verdicts) -> BoxFuture<'a, CheckResult> + Send + Sync,
{
    steps
}

/// A walk the cases of one group share: its name in the group and its steps at one width. Every case
/// of the group is open on it.
pub(super) struct Walk {
    pub(super) name: &'static str,
    pub(super) steps: Steps,
}

/// The case `case`'s verdict on the group's walk `shared` (walked by the first of its cases to ask), its
/// screenshots shared: its first failure, or a pass only when it was checked `per_width` times at
/// every width.
pub(super) async fn judged(ctx: &Ctx, shared: &Walk, case: &'static str, per_width: usize) -> CheckResult {
    let walked = ctx.group.once(shared.name, || walk(ctx, case, ctx.group.cases().to_vec(), &shared.steps)).await;
    if walked.by != case {
        driver::share_screenshots(walked.by, case);
    }
    verdict(&walked, case, per_width)
}

/// `case`'s verdict in what a walk found: its first failure, or a pass only when it was checked
/// `per_width` times at each width.
fn verdict(walked: &Walked, case: &str, per_width: usize) -> CheckResult {
    let verdicts = walked.found.as_ref().map_err(Clone::clone)?;
    if let Some(error) = verdicts.failed.get(case) {
        return Err(error.clone());
    }
    let checked = verdicts.checked.get(case).copied().unwrap_or_default();
    if checked != per_width * walked.widths {
        return Err(CheckError::NotRun(format!(
            "the walk checked this case {checked} times, not {per_width} at each of {} widths",
            walked.widths
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fail(what: &str) -> CheckError {
        CheckError::Fail { expected: what.into(), actual: "no".into() }
    }

    fn verdicts(open: &[&'static str]) -> Verdicts {
        Verdicts { width: 320, open: open.to_vec(), failed: HashMap::new(), checked: HashMap::new() }
    }

    #[tokio::test]
    async fn a_case_is_read_as_if_it_had_walked_alone() {
        let mut found = verdicts(&["a", "b", "c"]);
        found.check("a", "collapsed", || async { Err(fail("a rule")) }).await;
        assert!(found.any_open());
        found.check("b", "", || async { Ok(()) }).await;
        assert!(found.any_open());
        found.check("c", "collapsed", || async { Err(CheckError::NotRun("no axe".into())) }).await;
        assert!(found.any_open());
        found.width = 390;
        let mut asked = false;
        found
            .check("a", "expanded", || async {
                asked = true;
                Ok(())
            })
            .await;
        assert!(!asked, "a failed case is not checked again");
        found.check("b", "", || async { Ok(()) }).await;
        assert!(found.any_open());
        found.check("z", "", || async { Err(fail("not held")) }).await;
        assert!(found.any_open(), "a case the group lacks is skipped");
        let walked = Walked { by: "a", widths: 2, found: Ok(found) };
        assert_eq!(verdict(&walked, "a", 1), Err(fail("at 320 px: collapsed: a rule")));
        assert_eq!(verdict(&walked, "b", 1), Ok(()));
        assert_eq!(verdict(&walked, "c", 1), Err(CheckError::NotRun("no axe".into())));
        assert!(matches!(verdict(&walked, "b", 2), Err(CheckError::NotRun(_))), "checked fewer times than asked");
        assert!(matches!(verdict(&walked, "z", 1), Err(CheckError::NotRun(_))), "never checked is never a pass");
    }

    #[tokio::test]
    async fn a_broken_step_fails_every_open_case_and_ends_the_walk() {
        let mut found = verdicts(&["a", "b"]);
        found.check("a", "", || async { Err(fail("first")) }).await;
        assert!(found.any_open(), "b is still open");
        found.all_fail(fail("the page to load"));
        assert!(!found.any_open());
        found.check("b", "", || async { Ok(()) }).await;
        assert!(!found.any_open());
        let walked = Walked { by: "a", widths: 1, found: Ok(found) };
        assert_eq!(verdict(&walked, "a", 1), Err(fail("at 320 px: first")));
        assert_eq!(verdict(&walked, "b", 1), Err(fail("at 320 px: the page to load")));
        let not_started = Walked { by: "a", widths: 0, found: Err(CheckError::NotRun("no browser".into())) };
        assert_eq!(verdict(&not_started, "b", 1), Err(CheckError::NotRun("no browser".into())));
    }
}
