//! One visit to the page at 768 px that the cases one server runs share (a [`crate::context::Group`]):
//! the first case to ask makes it — a fresh browser through the recording proxy, the key entered, the
//! visit's steps, each reading the page into a point — and every case then judges its own rules on
//! the points reached and the proxy's log, the screenshots shared under its name. For what does not
//! change with the width (how text is drawn, what is stored and sent), at the cost of one browser for
//! several cases. [`super::page_walk`] is the same for a walk at every width.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use super::page_visit::{Visit, open};
use crate::browser::driver;
use crate::browser::proxy::{Framing, Recorded};
use crate::case::{CheckError, CheckResult};
use crate::context::Ctx;

/// What the page showed at one point of a visit.
pub(super) struct Point {
    /// Where the visit was ("after a reload"), for failures.
    pub(super) name: &'static str,
    /// What the visit read there.
    pub(super) facts: Value,
}

/// A visit's steps: they push a [`Point`] wherever the cases read the page.
pub(super) type Steps = for<'a> fn(&'a Visit<'a>, &'a mut Vec<Point>) -> BoxFuture<'a, CheckResult>;

/// What a visit saw: the case that made it, the points it reached, every request the page made, and
/// why it stopped early, if it did.
pub(super) struct Visited {
    by: &'static str,
    pub(super) points: Vec<Point>,
    pub(super) log: Vec<Recorded>,
    pub(super) broke: Option<CheckError>,
}

impl Visited {
    /// The point named `name`, or why the visit never reached it.
    pub(super) fn at(&self, name: &str) -> Result<&Point, CheckError> {
        self.points.iter().find(|p| p.name == name).ok_or_else(|| {
            self.broke.clone().unwrap_or_else(|| CheckError::NotRun(format!("the visit never got to {name}")))
        })
    }
}

/// The group's visit `name` through a proxy framing streams as `framing`, made by `steps` (by the
/// first of the group's cases to ask, `case` when it is this one).
pub(super) async fn visited(
    ctx: &Ctx,
    name: &'static str,
    case: &'static str,
    framing: Framing,
    steps: Steps,
) -> Arc<Visited> {
    let seen = ctx.group.once(name, || visit(ctx, case, framing, steps)).await;
    if seen.by != case {
        driver::share_screenshots(seen.by, case);
    }
    seen
}

async fn visit(ctx: &Ctx, case: &'static str, framing: Framing, steps: Steps) -> Visited {
    let mut visited = Visited { by: case, points: Vec::new(), log: Vec::new(), broke: None };
    let driver = match driver::driver().await {
        Ok(driver) => driver,
        Err(error) => {
            visited.broke = Some(error);
            return visited;
        }
    };
    let visit = match open(ctx, &driver, case, 768, ctx.http.base(), framing).await {
        Ok(visit) => visit,
        Err(error) => {
            visited.broke = Some(error);
            return visited;
        }
    };
    if let Err(error) = steps(&visit, &mut visited.points).await {
        visit.session.screenshot("failed").await;
        visited.broke = Some(error);
    }
    visited.log = visit.proxy.log();
    visit.session.close().await;
    visited
}
