//! The odds of the variants `gen.picture-route-model` names: what each needs to show, met in at least
//! 999 runs of 1,000 of the case's budget.

use super::*;

#[test]
fn each_named_variant_is_met_in_999_runs_of_1000() {
    let planted = |r: &PictureRequest| matches!(r.target, Target::Planted(_));
    let not_a_file = |r: &PictureRequest| !planted(r);
    let held = crate::generate::runs_holding_each(requests(), crate::generate::DEFAULT_BUDGET as usize, 9, |r| {
        let keyed = r.key.accepted();
        vec![
            // media-public: a picture asked for without the key (or with a wrong one).
            !keyed && planted(r),
            // no-304: a picture asked for with its ETag or *.
            keyed && planted(r) && r.condition.matches(),
            // head-skips-checks: HEAD of a name that is no picture.
            r.head && keyed && not_a_file(r),
            // bearer-only: the key in x-api-key.
            matches!(r.key, Key::XApiKey | Key::XApiKeyBesideBareBearer),
            // key-prefix-match: the key less its last character.
            r.key == Key::PrefixBearer,
            // media-headers: a 200.
            keyed && planted(r) && !r.condition.matches(),
            // media-x-api-key-refused: the key in x-api-key.
            matches!(r.key, Key::XApiKey | Key::XApiKeyBesideBareBearer),
            // media-etag-unquoted: a 200.
            keyed && planted(r) && !r.condition.matches(),
            // bearer-case-sensitive: the scheme not written `Bearer`.
            matches!(r.key, Key::Bearer(scheme) if scheme != "Bearer"),
        ]
    });
    // The draw meets every variant but those each_name_once meets before it, in every run.
    assert_eq!(held.len() + MET_BY_THE_COVERING.len() + MET_BEFORE_THE_DRAW.len(), VARIANTS.len());
    assert_eq!(&VARIANTS[held.len()..held.len() + MET_BY_THE_COVERING.len()], &MET_BY_THE_COVERING[..]);
    assert_eq!(&VARIANTS[held.len() + MET_BY_THE_COVERING.len()..], &MET_BEFORE_THE_DRAW[..]);
    for (variant, held) in VARIANTS.iter().zip(held) {
        assert!(held >= 999, "{variant} met in {held} runs of 1,000");
    }
}

#[test]
fn the_model_reads_each_condition_and_key() {
    assert!(Condition::Weak.matches() && Condition::InList.matches() && Condition::Star.matches());
    assert!(!Condition::Other.matches() && !Condition::Absent.matches());
    assert_eq!(Condition::InList.header("ab"), Some(format!("\"{}\", \"ab\"", "0".repeat(64))));
    assert!(Key::XApiKeyBesideBareBearer.accepted() && !Key::PrefixBearer.accepted() && !Key::WrongXApiKey.accepted());
}

#[test]
fn the_covering_requests_meet_every_pair_and_every_target_under_every_condition() {
    let rows = super::covering();
    for target in super::TARGETS {
        for condition in super::CONDITIONS {
            assert!(
                rows.iter().any(|r| r.target == target && r.condition == condition),
                "{target:?} under {condition:?}"
            );
        }
        for key in super::KEYS {
            assert!(rows.iter().any(|r| r.target == target && r.key == key), "{target:?} with {key:?}");
        }
    }
    assert!(rows.len() <= 160, "{} covering requests", rows.len());
    // conditional-before-file-check: a keyed GET naming, under a media name, no picture, with a
    // condition that names it, for each such target.
    for target in [Target::Absent, Target::Folder, Target::Fifo, Target::Link] {
        assert!(
            rows.iter().any(|r| r.target == target && r.key.accepted() && r.condition.matches()),
            "no keyed conditional request of {target:?}"
        );
    }
}
