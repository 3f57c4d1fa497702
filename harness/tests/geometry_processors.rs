//! SPEC 12.2 against the model's own processors: the harness's geometry model (`harness::geometry`)
//! and the Qwen2-VL team's `smart_resize` in `qwen-vl-utils` and in `transformers`
//! (`Qwen2VLImageProcessor`), run from their installed source by `ci/geometry_oracle.py`, over every
//! size up to 64 × 64, a log-spaced grid up to 8,000 px and the sizes around the aspect-ratio bound.
//! The model must agree with qwen-vl-utils everywhere (tokens, and which sizes are refused), and with
//! transformers everywhere but where SPEC 12.2 says it differs: a side of 14 px or less, which
//! transformers rounds to 0 before its min-pixels branch while qwen-vl-utils (and SPEC) keep 28.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use harness::geometry::{expected_tokens, takes_tokens};
use serde_json::Value;

fn sizes() -> BTreeSet<(u32, u32)> {
    let mut sizes: BTreeSet<(u32, u32)> = (1..=64).flat_map(|w| (1..=64).map(move |h| (w, h))).collect();
    let mut sides = vec![1u32];
    while *sides.last().expect("a side") < 8000 {
        let last = *sides.last().expect("a side");
        sides.push((f64::from(last) * 1.17).ceil() as u32 + 1);
    }
    for &w in &sides {
        for &h in &sides {
            sizes.insert((w, h));
        }
    }
    for short in 1..=40u32 {
        for long in [200 * short - 1, 200 * short, 200 * short + 1] {
            sizes.insert((long, short));
            sizes.insert((short, long));
        }
    }
    sizes
}

#[test]
fn spec_12_2_agrees_with_qwen_vl_utils_everywhere_and_with_transformers_but_for_sides_up_to_14_px() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let python = root.join("ci/interop/.venv/bin/python");
    assert!(python.exists(), "{} is missing: run ci/install-interop.sh (ci/test.sh does)", python.display());
    let sizes = sizes();
    let mut child = Command::new(python)
        .arg(root.join("ci/geometry_oracle.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python runs");
    let input: String = sizes.iter().map(|(w, h)| format!("{w} {h}\n")).collect();
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("sizes written");
    let output = child.wait_with_output().expect("the oracle ends");
    assert!(output.status.success(), "the oracle failed");
    let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), sizes.len() + 1, "a line per size and the versions");
    let (mut against_qwen, mut against_transformers, mut documented) = (Vec::new(), Vec::new(), 0);
    let mut refused = 0;
    for row in &lines[1..] {
        let (w, h) = (row["w"].as_u64().expect("w") as u32, row["h"].as_u64().expect("h") as u32);
        let ours = takes_tokens(w, h).then(|| expected_tokens(w, h));
        refused += usize::from(ours.is_none());
        if row["qwen_vl_utils"].as_u64() != ours {
            against_qwen.push(format!("{w}x{h}: ours {ours:?}, qwen-vl-utils {}", row["qwen_vl_utils"]));
        }
        if row["transformers"].as_u64() != ours {
            if w.min(h) <= 14 {
                documented += 1;
            } else {
                against_transformers.push(format!("{w}x{h}: ours {ours:?}, transformers {}", row["transformers"]));
            }
        }
    }
    eprintln!(
        "{} sizes ({} refused for their aspect ratio) against {}: qwen-vl-utils differs on {}, transformers on {} (all with a side of 14 px or less, as SPEC 12.2 says)",
        sizes.len(),
        refused,
        lines[0]["versions"],
        against_qwen.len(),
        documented + against_transformers.len()
    );
    assert!(against_qwen.is_empty(), "SPEC 12.2 differs from qwen-vl-utils:\n{}", against_qwen.join("\n"));
    assert!(
        against_transformers.is_empty(),
        "SPEC 12.2 differs from transformers beyond sides of 14 px or less:\n{}",
        against_transformers.join("\n")
    );
    assert!(documented > 0, "the documented difference never showed: the comparison would not see one");
    assert!(refused > 0, "no size past the aspect-ratio bound was compared");
}
