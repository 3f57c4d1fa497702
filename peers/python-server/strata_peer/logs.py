"""The log (SPEC 1.12): plain text on stderr, the level from RUST_LOG (default info), the MCP SDK
capped at warn and the HTTP stack at info whatever RUST_LOG asks."""

import logging
import os
import sys

LEVELS = {"off": logging.CRITICAL + 10, "error": logging.ERROR, "warn": logging.WARNING,
          "warning": logging.WARNING, "info": logging.INFO, "debug": logging.DEBUG, "trace": logging.DEBUG}
CAPPED = {"mcp": logging.WARNING, "mcp_types": logging.WARNING, "httpx": logging.WARNING,
          "httpx2": logging.WARNING, "httpcore": logging.WARNING, "httpcore2": logging.WARNING,
          "uvicorn": logging.INFO, "uvicorn.error": logging.INFO, "uvicorn.access": logging.WARNING,
          "asyncio": logging.WARNING}


def level_from_env():
    spec = os.environ.get("RUST_LOG", "").strip()
    level = logging.INFO
    for part in spec.split(","):
        part = part.strip().lower()
        if part and "=" not in part and part in LEVELS:
            level = LEVELS[part]
    return level


def setup():
    level = level_from_env()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name, cap in CAPPED.items():
        logging.getLogger(name).setLevel(max(cap, level))
