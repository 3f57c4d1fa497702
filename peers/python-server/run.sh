#!/usr/bin/env bash
# Start the Python peer server: paths on the command line are the caller's.
export STRATA_PEER_ORIG_CWD="$PWD"
cd "$(dirname "$0")" || exit 2
exec .venv/bin/python -m strata_peer "$@"
