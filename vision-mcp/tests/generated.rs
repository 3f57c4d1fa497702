//! The tests generated from a seed (`VISION_GEN_SEED` replays a run; each prints its seed), held to
//! a model of the README of their own, and the binary's one network rule — one test binary, so the
//! build links it once: pictures around the 512 px bound (`pictures`), the Responses API's answers of
//! every shape and status (`answers`), every upstream failure (`upstream`), refusals from several
//! clients (`refusals`), and `OPENAI_BASE_URL` and the proxy variables ignored (`no_other_address`).

#[path = "support/mod.rs"]
mod support;

#[path = "generated/answers.rs"]
mod answers;
#[path = "generated/no_other_address.rs"]
mod no_other_address;
#[path = "generated/pictures.rs"]
mod pictures;
#[path = "generated/refusals.rs"]
mod refusals;
#[path = "generated/upstream.rs"]
mod upstream;
