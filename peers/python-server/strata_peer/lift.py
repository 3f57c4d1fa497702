"""Lifting pictures out of tool text (SPEC §11): a base64 run of at least 1024 characters in a
tool message's text that decodes to PNG, JPEG, BMP, GIF or WebP is taken out and becomes a
picture of that message, `[image (<mime>, <N> bytes)]` left in its place."""

import base64
import binascii
import re

from . import jsonvals
from .pictures import Unreadable, header_size, sniff

MIN_RUN = 1024
MAX_PER_MESSAGE = 8
MAX_BYTES = 32 << 20
_RUN_RE = re.compile(r"[A-Za-z0-9+/]+")
_DATA_PREFIX_RE = re.compile(r"data:image/[A-Za-z0-9.+_-]+;base64,\Z")
ALL_FORMATS = ("image/png", "image/jpeg", "image/webp", "image/gif", "image/bmp")


class Lifted:
    """A picture taken out of tool text: its bytes and format (size read later)."""

    def __init__(self, data, mime):
        self.data = data
        self.mime = mime


def _decode(run, pad):
    """The bytes of a run with its padding, or None when it is not base64."""
    n = len(run)
    if pad:
        if (n + len(pad)) % 4 != 0 or (n % 4) != 4 - len(pad):
            return None
    elif n % 4 == 1:
        return None
    else:
        pad = "=" * ((4 - n % 4) % 4)
    if (n + len(pad)) // 4 * 3 > MAX_BYTES + 3:
        return b""  # too big to be taken; left as sent
    try:
        return base64.b64decode(run + pad, validate=True)
    except (binascii.Error, ValueError):
        return None


def _picture(data):
    mime = sniff(data[:16])
    if mime is None or len(data) > MAX_BYTES:
        return None
    try:
        header_size(data, mime)
    except Unreadable:
        return None  # a BMP counts only when its header reads
    return mime


def lift_text(text, budget):
    """(parts, taken) for one text: a list of str and Lifted, or None when nothing was found."""
    out, pos, taken = None, 0, 0
    for m in _RUN_RE.finditer(text):
        if taken >= budget:
            break
        start, end = m.start(), m.end()
        if end - start < MIN_RUN:
            continue
        pad = ""
        while len(pad) < 2 and end + len(pad) < len(text) and text[end + len(pad)] == "=":
            pad += "="
        data = _decode(m.group(0), pad)
        if not data:
            continue
        mime = _picture(data)
        if mime is None:
            continue
        prefix = _DATA_PREFIX_RE.search(text, max(0, start - 64), start)
        cut_from = prefix.start() if prefix else start
        if out is None:
            out = []
        if cut_from > pos:
            out.append(text[pos:cut_from])
        out.append(f"[image ({mime}, {jsonvals.thousands(len(data))} bytes)]")
        out.append(Lifted(data, mime))
        pos = end + len(pad)
        taken += 1
    if out is None:
        return None, 0
    if pos < len(text):
        out.append(text[pos:])
    return out, taken


def lift_message(parts):
    """A tool message's parts with pictures lifted out of its text parts (at most 8)."""
    result, taken, changed = [], 0, False
    for p in parts:
        if isinstance(p, str) and len(p) >= MIN_RUN and taken < MAX_PER_MESSAGE:
            lifted, n = lift_text(p, MAX_PER_MESSAGE - taken)
            if lifted is not None:
                result.extend(lifted)
                taken += n
                changed = True
                continue
        result.append(p)
    return result if changed else parts
