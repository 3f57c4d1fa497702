//! The case registry: one file per SPEC.md section, gathered here in section order.

mod auth;
mod auth_env_hosts;
mod auth_quotes;
mod chat;
mod chat_body;
mod chat_drain;
mod chat_room;
mod chat_turns;
mod chat_values;
mod common;
mod config;
mod config_keys;
mod configured_caps;
mod engine_delay;
mod engine_scripts;
mod generated;
mod generated_config;
mod generated_framing;
mod generated_members;
mod generated_page;
mod generated_page_judge;
mod generated_room;
mod generated_timeouts;
mod health;
mod health_values;
mod hub;
mod lifting;
mod log_lines;
mod mcp_config_file;
mod page;
mod page_contract;
mod page_every_value;
mod page_held;
mod page_hostile;
mod page_in_browser;
mod page_layout;
mod page_notes;
mod page_once;
mod page_policy;
mod page_replay;
mod page_send;
mod page_stop;
mod page_stream;
mod page_tool_blocks;
mod page_visit;
mod page_walk;
mod picture_cache;
mod process;
mod reference_notes;
mod reference_reasons;
mod references;
mod result_text;
mod status_counters;
mod tool_loop;
mod tool_media_route;
mod tool_pictures;
mod vision;

use crate::case::Case;

/// Declares a case:
/// `case!("id", "clause", Must|Should, SCENARIO, "description", check_fn, broken_by: ["variant", …])`,
/// or, for a generated case, its generator's `VARIANTS` in place of the list.
macro_rules! case {
    ($id:literal, $clause:literal, $level:ident, $scenario:expr, $description:literal, $check:path, [$($variant:literal),* $(,)?]) => {
        $crate::cases::case!(@case $id, $clause, $level, $scenario, $description, $check, &[$($variant),*])
    };
    // A generated case's variants: its generator's list, whose odds that generator's tests hold.
    ($id:literal, $clause:literal, $level:ident, $scenario:expr, $description:literal, $check:path, $variants:path) => {
        $crate::cases::case!(@case $id, $clause, $level, $scenario, $description, $check, $variants)
    };
    (@case $id:literal, $clause:literal, $level:ident, $scenario:expr, $description:literal, $check:path, $variants:expr) => {
        $crate::case::Case {
            id: $id,
            clause: $clause,
            level: $crate::case::Level::$level,
            description: $description,
            scenario: $scenario,
            check: |ctx| $crate::runner::boxed($check(ctx)),
            broken_by: $variants,
        }
    };
}
pub(crate) use case;

/// Every case, in SPEC section order.
pub fn all() -> Vec<Case> {
    [
        config::cases(),
        config_keys::cases(),
        process::cases(),
        log_lines::cases(),
        auth::cases(),
        auth_env_hosts::cases(),
        auth_quotes::cases(),
        health::cases(),
        status_counters::cases(),
        engine_delay::cases(),
        chat::cases(),
        chat_body::cases(),
        chat_drain::cases(),
        chat_room::cases(),
        chat_turns::cases(),
        chat_values::cases(),
        hub::cases(),
        configured_caps::cases(),
        mcp_config_file::cases(),
        tool_loop::cases(),
        result_text::cases(),
        tool_pictures::cases(),
        picture_cache::cases(),
        tool_media_route::cases(),
        references::cases(),
        reference_notes::cases(),
        reference_reasons::cases(),
        engine_scripts::cases(),
        health_values::cases(),
        lifting::cases(),
        vision::cases(),
        page::cases(),
        page_in_browser::cases(),
        page_stop::cases(),
        page_contract::cases(),
        page_tool_blocks::cases(),
        page_layout::cases(),
        page_replay::cases(),
        page_notes::cases(),
        page_stream::cases(),
        page_held::cases(),
        page_send::cases(),
        page_every_value::cases(),
        page_hostile::cases(),
        page_policy::cases(),
        generated::cases(),
        generated_config::cases(),
        generated_framing::cases(),
        generated_members::cases(),
        generated_room::cases(),
        generated_timeouts::cases(),
        generated_page::cases(),
    ]
    .concat()
}
