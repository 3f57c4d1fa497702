"""Entry point: `python -m strata_peer --config FILE [--host H] [--port P] [--api-key K]
[--script TEXT]... [--mcp-config FILE] [--web-dir DIR]` (SPEC 1.1–1.3, 1.8)."""

import argparse
import asyncio
import os
import sys

from . import logs
from .config import PROG, StartupError, build


class Args(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write(f"{PROG}: {message}\n")
        sys.exit(2)


def parse_args(argv):
    p = Args(prog=PROG, add_help=True)
    p.add_argument("--config", required=True)
    p.add_argument("--host")
    p.add_argument("--port", type=int)
    p.add_argument("--api-key", dest="api_key")
    p.add_argument("--script", action="append", default=[])
    p.add_argument("--mcp-config", dest="mcp_config")
    p.add_argument("--web-dir", dest="web_dir")
    return p.parse_args(argv)


def main(argv=None):
    # run.sh changes into this folder to start the package; paths given on the command line
    # are the caller's, so go back to the caller's working folder first.
    orig = os.environ.pop("STRATA_PEER_ORIG_CWD", None)
    if orig:
        os.chdir(orig)
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        settings = build(args)
    except StartupError as e:
        sys.stderr.write(e.line + "\n")
        sys.stderr.flush()
        return e.code
    for line in settings.warnings:
        sys.stderr.write(line + "\n")
    sys.stderr.flush()
    logs.setup()
    from .server import bind, serve
    from .service import Service
    try:
        sock = bind(settings.host, settings.port)
    except OSError as e:
        sys.stderr.write(f"{PROG}: cannot listen on {settings.host}:{settings.port}: {e.strerror or e}\n")
        return 1
    service = Service(settings, os.getcwd())
    try:
        asyncio.run(serve(service, sock))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
