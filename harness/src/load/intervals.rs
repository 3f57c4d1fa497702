//! HdrHistogram interval logs: one histogram of latencies per second of the run, per request kind and
//! phase, in the standard text format (`#[StartTime: …]`, `#[BaseTime: …]`, then one line per interval:
//! start, length, max, a base64 compressed V2 histogram) that HdrHistogram's own
//! `HistogramLogProcessor`, the Python `hdrh` package and `mediacheck load merge` read.
//!
//! Intervals are whole seconds counted from the run's common start (`--start-at`), so the logs of
//! workers on different machines line up interval by interval. A latency belongs to the interval in
//! which its request completed. Only the compressed lines are kept in memory (a few hundred bytes a
//! second), never one full histogram per interval.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use hdrhistogram::Histogram;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;

use super::options::{Op, Phase};

/// The length of one interval.
pub const INTERVAL: Duration = Duration::from_secs(1);
/// The largest latency recorded, in microseconds (an hour: the longest run).
pub const HIGHEST_US: u64 = 3_600_000_000;
/// Significant figures of every histogram (each latency within 0.1 %).
pub const SIGNIFICANT_FIGURES: u8 = 3;

/// A new empty latency histogram with the bounds every log and report uses.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_US, SIGNIFICANT_FIGURES).expect("constant, valid bounds")
}

/// One log's series: a request kind and a phase.
pub type Series = (Op, Phase);

/// The file name of a series' log beside `stem`: `<stem>.<op>.<phase>.hlog`.
pub fn file_name(stem: &str, (op, phase): Series) -> String {
    format!("{stem}.{}.{}.hlog", op.name(), phase.slug())
}

/// Interval histograms being recorded.
#[derive(Debug)]
pub struct IntervalRecorder {
    origin: Instant,
    current: u64,
    open: BTreeMap<Series, Histogram<u64>>,
    lines: BTreeMap<Series, Vec<u8>>,
    counts: BTreeMap<Series, u64>,
    failures: u64,
}

/// What was recorded: per series, the log's interval lines and how many latencies they hold.
#[derive(Debug, Default)]
pub struct IntervalLogs {
    /// Interval lines (without headers), per series.
    pub lines: BTreeMap<Series, Vec<u8>>,
    /// Latencies in each series' lines.
    pub counts: BTreeMap<Series, u64>,
    /// Intervals that could not be serialized (counted, never silently dropped).
    pub failures: u64,
}

impl IntervalRecorder {
    /// Intervals counted from `origin` (the run's common start on this machine's clock).
    pub fn new(origin: Instant) -> Self {
        Self { origin, current: 0, open: BTreeMap::new(), lines: BTreeMap::new(), counts: BTreeMap::new(), failures: 0 }
    }

    /// Records a latency that ended `at`.
    pub fn record(&mut self, series: Series, micros: u64, at: Instant) {
        let interval = (at.saturating_duration_since(self.origin).as_nanos() / INTERVAL.as_nanos()) as u64;
        if interval > self.current {
            self.close();
            self.current = interval;
        }
        let histogram = self.open.entry(series).or_insert_with(new_histogram);
        if histogram.record(micros.clamp(1, HIGHEST_US)).is_ok() {
            *self.counts.entry(series).or_default() += 1;
        }
    }

    /// Writes the open interval's histograms as log lines and empties them.
    fn close(&mut self) {
        let start = INTERVAL * u32::try_from(self.current).unwrap_or(u32::MAX);
        let mut serializer = V2DeflateSerializer::new();
        for (series, histogram) in &mut self.open {
            if histogram.is_empty() {
                continue;
            }
            let out = self.lines.entry(*series).or_default();
            let written = IntervalLogWriterBuilder::new()
                .begin_log_with(out, &mut serializer)
                .map_err(|e| e.to_string())
                .and_then(|mut log| log.write_histogram(histogram, start, INTERVAL, None).map_err(|e| e.to_string()));
            if written.is_err() {
                self.failures += 1;
            }
            histogram.reset();
        }
    }

    /// Closes the last interval and hands over the lines.
    pub fn finish(mut self) -> IntervalLogs {
        self.close();
        IntervalLogs { lines: self.lines, counts: self.counts, failures: self.failures }
    }
}

/// Writes a series' log: the standard headers, a comment naming the run, then its interval lines.
pub fn write_log(path: &Path, start: SystemTime, comment: &str, lines: &[u8]) -> std::io::Result<()> {
    let mut out = Vec::with_capacity(lines.len() + 256);
    let mut serializer = V2DeflateSerializer::new();
    IntervalLogWriterBuilder::new()
        .add_comment(comment)
        .add_comment("values in microseconds; interval timestamps in seconds from BaseTime")
        .with_start_time(start)
        .with_base_time(start)
        .begin_log_with(&mut out, &mut serializer)?;
    out.write_all(lines)?;
    std::fs::write(path, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::Deserializer;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

    #[test]
    fn latencies_land_in_the_second_they_ended_and_read_back_whole() {
        let origin = Instant::now();
        let mut recorder = IntervalRecorder::new(origin);
        let series = (Op::MediaGet, Phase::Total);
        recorder.record(series, 1_000, origin + Duration::from_millis(10));
        recorder.record(series, 2_000, origin + Duration::from_millis(999));
        recorder.record(series, 3_000, origin + Duration::from_millis(1_000));
        recorder.record(series, 4_000, origin + Duration::from_millis(3_500));
        let logs = recorder.finish();
        assert_eq!(logs.counts[&series], 4);
        let mut text = Vec::new();
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_119_200);
        let dir = tempfile::tempdir().expect("a folder");
        let path = dir.path().join("x.hlog");
        write_log(&path, start, "run x", &logs.lines[&series]).expect("written");
        text.extend(std::fs::read(&path).expect("read"));
        let mut intervals = Vec::new();
        let mut deserializer = Deserializer::new();
        for entry in IntervalLogIterator::new(&text) {
            match entry.expect("a log entry") {
                LogEntry::StartTime(at) | LogEntry::BaseTime(at) => assert_eq!(at.as_secs(), 1_796_119_200),
                LogEntry::Interval(interval) => {
                    let bytes = base64::Engine::decode(
                        &base64::engine::general_purpose::STANDARD,
                        interval.encoded_histogram(),
                    )
                    .expect("base64");
                    let h: Histogram<u64> = deserializer.deserialize(&mut bytes.as_slice()).expect("a histogram");
                    intervals.push((interval.start_timestamp().as_secs(), h.len(), h.max()));
                }
            }
        }
        assert_eq!(intervals.iter().map(|i| (i.0, i.1)).collect::<Vec<_>>(), vec![(0, 2), (1, 1), (3, 1)]);
        assert!(intervals[0].2 >= 2_000 && intervals[0].2 < 2_003, "max within 0.1 %: {}", intervals[0].2);
        assert!(String::from_utf8_lossy(&text).starts_with("#run x\n"));
    }
}
