//! `mediacheck load merge DIR…`: the report of a run made by many workers, from what each segment
//! wrote (its ledger and interval logs, [`super::worker`]).
//!
//! Latency percentiles come from the *added* histograms of every interval of every segment (never
//! averaged); requests, errors, pictures checked and `lost:` are summed; throughput is over the union
//! of the segments' time. Outputs of different runs (run id, scenario, any option) are refused, naming
//! the first difference; a log that does not decode, or holds another number of latencies than its
//! ledger says, is refused naming the file. A missing segment is reported as such (`3 of 4
//! segments`), never as a smaller healthy run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::{Deserializer, Serializer as _, V2DeflateSerializer};
use serde_json::{Value, json};

use super::cost::Cost;
use super::intervals::{Series, new_histogram};
use super::options::{LoadScenario, Op, Pace, Phase};
use super::recorder::Recorded;
use super::report::{LoadReport, Spent, Timing, render};
use super::segment::Segment;
use super::worker::{FORMAT, from_unix_us};

/// Why outputs cannot be merged (one line, exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    /// A folder that cannot be read.
    #[error("{0}: cannot read this folder: {1}")]
    Unreadable(PathBuf, String),
    /// No ledger anywhere.
    #[error("no segment ledger (segment-I-of-N.json) in {0}")]
    NoSegments(String),
    /// A ledger that is not one.
    #[error("{0}: not a segment ledger: {1}")]
    NotALedger(PathBuf, String),
    /// A ledger of another format version.
    #[error("{0}: written by another version ('{1}'; this mediacheck reads '{FORMAT}')")]
    OtherFormat(PathBuf, String),
    /// Two segments of different runs.
    #[error("{path}: {what} is {theirs}, but {first} has {ours}: outputs of different runs")]
    Differs {
        /// The ledger that differs.
        path: PathBuf,
        /// What differs.
        what: String,
        /// Its value there.
        theirs: String,
        /// The first ledger.
        first: PathBuf,
        /// Its value in the first.
        ours: String,
    },
    /// One segment twice.
    #[error("segment {0} twice: {1} and {2}")]
    Duplicate(Segment, PathBuf, PathBuf),
    /// A log that does not decode.
    #[error("{0}: not an interval log: {1}")]
    CorruptLog(PathBuf, String),
    /// A log whose latencies do not add up to its ledger's count.
    #[error("{0}: holds {1} latencies, its ledger says {2}")]
    ShortLog(PathBuf, u64, u64),
}

/// A merged run.
#[derive(Debug)]
pub struct Merged {
    /// The report, as a single run's, with the segments listed.
    pub report: LoadReport,
    /// The run.
    pub run_id: String,
    /// Segments found, by number.
    pub found: Vec<u32>,
    /// Segments the run has.
    pub expected: u32,
    /// Pictures two segments both announced as new.
    pub shared_new_pictures: u64,
    /// Merged histograms, compressed V2 in base64, by series: what an outside tool can compare.
    pub histograms: BTreeMap<String, String>,
}

impl Merged {
    /// Segments the run has that no output came from.
    pub fn missing(&self) -> Vec<u32> {
        (1..=self.expected).filter(|i| !self.found.contains(i)).collect()
    }

    /// Whether the run as a whole passed: every segment there, nothing lost, no error, no new picture
    /// written twice, something done.
    pub fn passed(&self) -> bool {
        self.missing().is_empty()
            && self.report.lost == 0
            && self.report.errors == 0
            && self.report.ok > 0
            && self.shared_new_pictures == 0
    }
}

/// One segment's ledger, as read.
struct Ledger {
    path: PathBuf,
    value: Value,
    segment: Segment,
}

/// Finds the ledgers in `dirs` (in each folder, or one level down: a CI matrix's artifacts unpack
/// one folder per job).
fn find_ledgers(dirs: &[PathBuf]) -> Result<Vec<PathBuf>, MergeError> {
    let mut found = BTreeSet::new();
    for dir in dirs {
        let mut here = ledgers_in(dir)?;
        if here.is_empty() {
            for entry in read_dir(dir)? {
                if entry.is_dir() {
                    here.extend(ledgers_in(&entry)?);
                }
            }
        }
        found.extend(here);
    }
    if found.is_empty() {
        let names: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        return Err(MergeError::NoSegments(names.join(", ")));
    }
    Ok(found.into_iter().collect())
}

fn read_dir(dir: &Path) -> Result<Vec<PathBuf>, MergeError> {
    let unreadable = |e: std::io::Error| MergeError::Unreadable(dir.to_path_buf(), e.to_string());
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(unreadable)? {
        paths.push(entry.map_err(unreadable)?.path());
    }
    paths.sort();
    Ok(paths)
}

fn ledgers_in(dir: &Path) -> Result<Vec<PathBuf>, MergeError> {
    let is_ledger = |path: &PathBuf| {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        name.strip_prefix("segment-").and_then(|rest| rest.strip_suffix(".json")).is_some_and(|middle| {
            middle.split_once("-of-").is_some_and(|(i, n)| Segment::parse(&format!("{i}/{n}")).is_ok())
        })
    };
    let canonical = |p: PathBuf| std::fs::canonicalize(&p).unwrap_or(p);
    Ok(read_dir(dir)?.into_iter().filter(is_ledger).map(canonical).collect())
}

/// What every ledger must hold as a number.
const REQUIRED: [&str; 7] = [
    "/sent",
    "/timing/started_unix_us",
    "/timing/ended_unix_us",
    "/timing/late_us",
    "/pictures/checked",
    "/pictures/lost",
    "/pictures/bytes",
];

fn read_ledger(path: &Path) -> Result<Ledger, MergeError> {
    let not = |why: String| MergeError::NotALedger(path.to_path_buf(), why);
    let bytes = std::fs::read(path).map_err(|e| not(e.to_string()))?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| not(e.to_string()))?;
    match value["format"].as_str() {
        Some(FORMAT) => {}
        Some(other) => return Err(MergeError::OtherFormat(path.to_path_buf(), other.to_string())),
        None => return Err(not("no \"format\"".into())),
    }
    let segment: Segment =
        serde_json::from_value(value["segment"].clone()).map_err(|e| not(format!("segment: {e}")))?;
    if segment.index == 0 || segment.index > segment.count {
        return Err(not(format!("segment {segment}")));
    }
    // The counts a merge sums: a ledger without one is refused, never read as 0.
    for pointer in REQUIRED {
        if value.pointer(pointer).and_then(Value::as_u64).is_none() {
            return Err(not(format!("no number at {pointer}")));
        }
    }
    Ok(Ledger { path: path.to_path_buf(), value, segment })
}

/// The first key at which two identities differ, with both values.
fn first_difference(ours: &Value, theirs: &Value, at: &str) -> Option<(String, String, String)> {
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            keys.into_iter().find_map(|key| {
                let (x, y) = (a.get(key).unwrap_or(&Value::Null), b.get(key).unwrap_or(&Value::Null));
                first_difference(x, y, &if at.is_empty() { key.clone() } else { format!("{at}.{key}") })
            })
        }
        (a, b) if a == b => None,
        (a, b) => Some((at.to_string(), b.to_string(), a.to_string())),
    }
}

/// Checks that every ledger belongs to the first one's run, and that no segment comes twice.
fn same_run(ledgers: &[Ledger]) -> Result<(), MergeError> {
    let first = &ledgers[0];
    let mut seen: BTreeMap<u32, &Path> = BTreeMap::new();
    for ledger in ledgers {
        let differs = |what: &str, ours: &Value, theirs: &Value| MergeError::Differs {
            path: ledger.path.clone(),
            what: what.to_string(),
            theirs: theirs.to_string(),
            first: first.path.clone(),
            ours: ours.to_string(),
        };
        if ledger.value["run_id"] != first.value["run_id"] {
            return Err(differs("the run id", &first.value["run_id"], &ledger.value["run_id"]));
        }
        if let Some((key, theirs, ours)) = first_difference(&first.value["identity"], &ledger.value["identity"], "") {
            return Err(MergeError::Differs {
                path: ledger.path.clone(),
                what: key,
                theirs,
                first: first.path.clone(),
                ours,
            });
        }
        if ledger.segment.count != first.segment.count {
            return Err(differs("the number of segments", &json!(first.segment.count), &json!(ledger.segment.count)));
        }
        if let Some(other) = seen.insert(ledger.segment.index, &ledger.path) {
            return Err(MergeError::Duplicate(ledger.segment, other.to_path_buf(), ledger.path.clone()));
        }
    }
    Ok(())
}

fn series_of(op: &str, phase: &str) -> Option<Series> {
    let op = [Op::MediaGet, Op::ChatImage, Op::CacheWrite].into_iter().find(|o| o.name() == op)?;
    let phase = Phase::ALL.into_iter().find(|p| p.slug() == phase)?;
    Some((op, phase))
}

/// Decodes every interval of a log and adds it to `into`; returns how many latencies it held.
fn add_log(path: &Path, into: &mut Histogram<u64>) -> Result<u64, MergeError> {
    let corrupt = |why: String| MergeError::CorruptLog(path.to_path_buf(), why);
    let text = std::fs::read(path).map_err(|e| corrupt(e.to_string()))?;
    let mut deserializer = Deserializer::new();
    let mut count = 0;
    for (number, entry) in IntervalLogIterator::new(&text).enumerate() {
        let interval = match entry.map_err(|e| corrupt(format!("entry {} does not parse ({e:?})", number + 1)))? {
            LogEntry::Interval(interval) => interval,
            LogEntry::StartTime(_) | LogEntry::BaseTime(_) => continue,
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(interval.encoded_histogram())
            .map_err(|e| corrupt(format!("entry {}: {e}", number + 1)))?;
        let histogram: Histogram<u64> = deserializer
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| corrupt(format!("entry {}: {e}", number + 1)))?;
        count += histogram.len();
        into.add(&histogram).map_err(|e| corrupt(format!("entry {}: {e:?}", number + 1)))?;
    }
    Ok(count)
}

fn u64_at(value: &Value, pointer: &str) -> u64 {
    value.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
}

/// Reads the outputs in `dirs` and merges them.
pub fn merge(dirs: &[PathBuf]) -> Result<Merged, MergeError> {
    let mut ledgers: Vec<Ledger> = find_ledgers(dirs)?.iter().map(|p| read_ledger(p)).collect::<Result<_, _>>()?;
    // By segment number, not file name (segment-10-of-12 sorts before segment-2-of-12).
    ledgers.sort_by_key(|l| l.segment.index);
    same_run(&ledgers)?;
    let first = &ledgers[0];
    let not = |why: String| MergeError::NotALedger(first.path.clone(), why);
    let identity = &first.value["identity"];
    let scenario: LoadScenario =
        serde_json::from_value(identity["scenario"].clone()).map_err(|e| not(format!("scenario: {e}")))?;
    let pace: Pace = serde_json::from_value(identity["pace"].clone()).map_err(|e| not(format!("pace: {e}")))?;

    let mut recorded = Recorded::default();
    let mut cost: Option<Cost> = None;
    let (mut sent, mut notes) = (0u64, Vec::new());
    let (mut started, mut ended, mut first_send, mut last_send) = (u64::MAX, 0u64, u64::MAX, 0u64);
    let mut new_by: BTreeMap<String, u32> = BTreeMap::new();
    let mut shared_new_pictures = 0;
    let mut segment_lines = Vec::new();
    for ledger in &ledgers {
        let (value, dir) = (&ledger.value, ledger.path.parent().unwrap_or(Path::new(".")));
        for log in value["logs"].as_array().map(Vec::as_slice).unwrap_or_default() {
            let (op, phase, file) = (log["op"].as_str(), log["phase"].as_str(), log["file"].as_str());
            let series = op.zip(phase).and_then(|(op, phase)| series_of(op, phase));
            let (Some(series), Some(file)) = (series, file) else {
                return Err(MergeError::NotALedger(ledger.path.clone(), format!("log entry {log}")));
            };
            if file.contains('/') || file.contains('\\') || file.starts_with('.') {
                return Err(MergeError::NotALedger(ledger.path.clone(), format!("log file {file:?}")));
            }
            let path = dir.join(file);
            let count = add_log(&path, recorded.histograms.entry(series).or_insert_with(new_histogram))?;
            let expected = log["count"].as_u64().unwrap_or(u64::MAX);
            if count != expected {
                return Err(MergeError::ShortLog(path, count, expected));
            }
        }
        let segment_sent = u64_at(value, "/sent");
        sent += segment_sent;
        let mut segment_ok = 0;
        for (op, n) in value["completed"].as_object().into_iter().flatten() {
            if let Some(op) = series_of(op, "total") {
                *recorded.ok.entry(op.0).or_default() += n.as_u64().unwrap_or(0);
                segment_ok += n.as_u64().unwrap_or(0);
            }
        }
        let mut segment_errors = 0;
        for (kind, n) in value["errors"].as_object().into_iter().flatten() {
            *recorded.errors.entry(kind.clone()).or_default() += n.as_u64().unwrap_or(0);
            segment_errors += n.as_u64().unwrap_or(0);
        }
        let lost = u64_at(value, "/pictures/lost");
        recorded.checked += u64_at(value, "/pictures/checked");
        recorded.compared += u64_at(value, "/pictures/compared");
        recorded.proven.0 += u64_at(value, "/pictures/proven_copies");
        recorded.proven.1 += u64_at(value, "/pictures/proven_bytes");
        if let Some(segment_cost) = value.pointer("/report/cpu").and_then(Cost::from_json) {
            cost = Some(cost.map_or(segment_cost, |c: Cost| c.plus(segment_cost)));
        }
        recorded.lost += lost;
        recorded.bytes += u64_at(value, "/pictures/bytes");
        recorded.names_not_kept += u64_at(value, "/pictures/names_not_kept");
        for name in value["pictures"]["lost_names"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            recorded.lost_names.push(format!("{name} (segment {})", ledger.segment));
        }
        for name in value["pictures"]["new_names"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            if let Some(other) = new_by.insert(name.to_string(), ledger.segment.index)
                && other != ledger.segment.index
            {
                shared_new_pictures += 1;
                notes.push(format!("new picture {name} announced by segments {other} and {}", ledger.segment.index));
            }
        }
        started = started.min(u64_at(value, "/timing/started_unix_us"));
        ended = ended.max(u64_at(value, "/timing/ended_unix_us"));
        if let Some(first) = value.pointer("/timing/first_send_unix_us").and_then(Value::as_u64) {
            first_send = first_send.min(first);
        }
        if let Some(last) = value.pointer("/timing/last_send_unix_us").and_then(Value::as_u64) {
            last_send = last_send.max(last);
        }
        let late = u64_at(value, "/timing/late_us") as f64 / 1e6;
        segment_lines.push(json!({
            "segment": ledger.segment, "sent": segment_sent, "completed": segment_ok, "errors": segment_errors,
            "lost": lost, "late_s": late, "file": ledger.path.display().to_string(),
        }));
        notes.push(format!(
            "  segment {}: {segment_sent} sent, {segment_ok} completed, {segment_errors} errors, lost {lost}, {}",
            ledger.segment,
            if late > 0.0 { format!("started {late:.3} s after --start-at") } else { "on time".into() }
        ));
    }
    let expected = first.segment.count;
    let found: Vec<u32> = ledgers.iter().map(|l| l.segment.index).collect::<BTreeSet<_>>().into_iter().collect();
    let missing: Vec<u32> = (1..=expected).filter(|i| !found.contains(i)).collect();
    let run_id = first.value["run_id"].as_str().unwrap_or_default().to_string();
    let mut head = vec![match missing.is_empty() {
        true => format!("segments: {expected} of {expected} · run {run_id}"),
        false => format!(
            "segments: {} of {expected} · run {run_id} · MISSING {}: the totals above are not the whole run",
            found.len(),
            missing.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        ),
    }];
    let mut sent_per_second = None;
    if let Pace::Open { rate, .. } = pace
        && last_send > first_send
        && sent > 1
    {
        // n sends span n - 1 gaps of 1/rate on the run's schedule.
        let measured = (sent - 1) as f64 / ((last_send - first_send) as f64 / 1e6);
        sent_per_second = Some(measured);
        head.push(format!(
            "open loop: requests went out at {measured:.1}/s over the union of the segments (requested {rate}/s)"
        ));
    }
    if scenario.ops().contains(&Op::CacheWrite) {
        head.push(format!(
            "new pictures: {} names kept across segments, {shared_new_pictures} announced by two segments",
            new_by.len()
        ));
    }
    head.extend(notes);
    let elapsed = Duration::from_micros(ended.saturating_sub(started.min(ended)));
    let (text, mut json) = render(scenario, pace, &recorded, elapsed, sent, Spent { memory: None, cost }, &head);
    let histograms = encoded(&recorded.histograms);
    json["segments"] = json!({
        "run_id": run_id, "expected": expected, "found": found, "missing": missing,
        "each": segment_lines, "shared_new_pictures": shared_new_pictures,
        "open_loop_sent_per_second": sent_per_second,
    });
    json["histograms_v2"] = json!(histograms);
    let timing = Timing {
        started: from_unix_us(started.min(ended)),
        ended: from_unix_us(ended),
        late: Duration::ZERO,
        sends: (first_send <= last_send).then(|| (from_unix_us(first_send), from_unix_us(last_send))),
    };
    let report = LoadReport::from_parts(text, json, recorded, sent, timing);
    Ok(Merged { report, run_id, found, expected, shared_new_pictures, histograms })
}

/// Each merged histogram as a compressed V2 payload in base64 (an interval log line's last field), by
/// `<op>.<phase>`.
fn encoded(histograms: &BTreeMap<Series, Histogram<u64>>) -> BTreeMap<String, String> {
    let mut serializer = V2DeflateSerializer::new();
    histograms
        .iter()
        .filter_map(|((op, phase), histogram)| {
            let mut bytes = Vec::new();
            serializer.serialize(histogram, &mut bytes).ok()?;
            Some((format!("{}.{}", op.name(), phase.slug()), base64::engine::general_purpose::STANDARD.encode(bytes)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_are_named_by_their_key() {
        let a = json!({"scenario": "mixed", "pace": {"open": {"rate": 100.0}}, "segments": 4});
        let b = json!({"scenario": "mixed", "pace": {"open": {"rate": 50.0}}, "segments": 4});
        assert_eq!(first_difference(&a, &a, ""), None);
        assert_eq!(first_difference(&a, &b, ""), Some(("pace.open.rate".into(), "50.0".into(), "100.0".into())));
        let c = json!({"scenario": "mixed", "pace": {"open": {"rate": 100.0}}});
        assert_eq!(first_difference(&a, &c, ""), Some(("segments".into(), "null".into(), "4".into())));
    }
}
