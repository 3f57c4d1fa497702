//! `reference-server --config FILE [--host H] [--port P] [--api-key K] [--script TEXT]... [--mcp-config FILE]`
//! — see `reference_server::cli`.

use std::process::ExitCode;

fn main() -> ExitCode {
    reference_server::cli::run(std::env::args_os())
}
