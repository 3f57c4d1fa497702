"""An MCP tool result made into what the client and the model get (SPEC §7, §8):
its text (7.1), errors as results (7.2), the character cap (7.3), the cached pictures
and their `media` entries (8.2–8.6), and the parts of the next pass's tool message (8.8)."""

import base64
import binascii
import logging
from dataclasses import dataclass, field

from . import jsonvals
from .pictures import Unreadable, header_size, sniff

log = logging.getLogger("strata_peer.results")


def block_text(block):
    """7.1: the text one content block gives."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "resource":
        res = block.get("resource") or {}
        if isinstance(res.get("text"), str):
            return res["text"]
        mime = res.get("mimeType") or "binary"
        return f"[resource {res.get('uri', '')} ({mime}), not shown]"
    if kind == "resource_link":
        return f"[resource link: {block.get('name', '')} {block.get('uri', '')}]".replace("  ", " ")
    if kind in ("image", "audio"):
        data = block.get("data") or ""
        mime = block.get("mimeType") or "?"
        return f"[{kind} ({mime}, {jsonvals.thousands(len(data) * 3 // 4)} bytes): not shown to the model]"
    return jsonvals.dumps(block)


def truncation_note(full, cap):
    return (f"\n\n[... truncated: the tool returned {jsonvals.thousands(full)} characters; "
            f"only the first {jsonvals.thousands(cap)} are shown]")


def capped(text, cap):
    """(text as shown, truncated) under the max_result_chars cap."""
    if len(text) > cap:
        return text[:cap] + truncation_note(len(text), cap), True
    return text, False


@dataclass
class Picture:
    """A picture on its way to the prompt: bytes, format and header size."""
    data: bytes
    mime: str
    width: int
    height: int


@dataclass
class ToolOutcome:
    ok: bool
    text: str          # capped, as the result event shows it
    chars: int
    truncated: bool
    media: list = field(default_factory=list)
    parts: object = None  # str, or a list of str / Picture for the next pass


def error_outcome(message, cap):
    text = f"error: {message}"
    shown, cut = capped(text, cap)
    return ToolOutcome(False, shown, len(text), cut, parts=shown)


def _candidate(block):
    """The base64 data of a block that is a candidate picture (8.2), or None."""
    if block.get("type") == "image":
        return block.get("data") or ""
    if block.get("type") == "resource":
        res = block.get("resource") or {}
        mime = res.get("mimeType") or ""
        if isinstance(res.get("blob"), str) and mime.lower().startswith("image/"):
            return res["blob"]
    return None


def _take_picture(b64, mcp, cache, taken):
    """Cache one candidate; (Picture, media entry) or None when it is not cached."""
    if taken >= mcp.max_pictures_per_result or len(b64) > mcp.max_picture_chars:
        return None
    try:
        data = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError):
        return None
    mime = sniff(data)
    if mime not in ("image/png", "image/jpeg", "image/webp"):
        return None
    try:
        w, h = header_size(data, mime)
    except Unreadable:
        return None
    try:
        name = cache.store(data, mime)
    except OSError as e:
        log.error("a tool picture could not be written to the cache: %s", e)
        return None
    entry = {"ref": f"strata-tool-media:{name}", "url": f"/tool-media/{name}", "mime": mime,
             "bytes": len(data), "width": w, "height": h}
    return Picture(data, mime, w, h), entry


def _model_parts(segments, cap):
    """8.8: the parts in block order joined by "\n", the cap counting text only."""
    total = sum(len(s) for s in segments if isinstance(s, str))
    out, used = [], 0
    for s in segments:
        if isinstance(s, str):
            if used >= cap:
                continue
            piece = s[: cap - used]
            used += len(piece)
            if piece:
                out.append(piece)
        else:
            out.append(s)
    if total > cap:
        out.append(truncation_note(total, cap))
    return out


def outcome(result, mcp, cache, has_vision):
    """The ToolOutcome of a tools/call result (a dict in the MCP wire shape)."""
    blocks = [b for b in (result.get("content") or []) if isinstance(b, dict)]
    texts = [block_text(b) for b in blocks]
    text = "\n".join(texts)
    if not blocks and result.get("structuredContent") is not None:
        text = jsonvals.dumps(result["structuredContent"])
    if result.get("isError"):
        return error_outcome(text or "the tool reported an error", mcp.max_result_chars)
    shown, cut = capped(text, mcp.max_result_chars)
    done = ToolOutcome(True, shown, len(text), cut, parts=shown)
    if not mcp.image_results:
        return done
    segments, taken = [], 0
    for i, (b, t) in enumerate(zip(blocks, texts)):
        if i:
            segments.append("\n")
        b64 = _candidate(b)
        got = _take_picture(b64, mcp, cache, taken) if b64 is not None else None
        if got is None:
            segments.append(t)
            continue
        taken += 1
        picture, entry = got
        done.media.append(entry)
        segments.append(picture if has_vision else t)
    if has_vision and done.media:
        done.parts = _model_parts(segments, mcp.max_result_chars)
    return done
