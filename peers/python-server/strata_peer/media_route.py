"""`GET /tool-media/<name>` (SPEC §9): the name matched before the filesystem is touched, only a
regular file directly inside the cache folder served, with its ETag, immutable caching and
conditional requests; every other case the JSON 404."""

import hashlib

from starlette.responses import Response

from .auth import header
from .errors import not_found
from .media_cache import mime_of, valid_name


def _matches(if_none_match, etag_value):
    for tag in if_none_match.split(","):
        tag = tag.strip()
        if tag == "*":
            return True
        if tag.startswith("W/"):
            tag = tag[2:]
        if tag == etag_value:
            return True
    return False


def serve(service, scope, name):
    if name is None or not valid_name(name) or not service.settings.mcp.image_results:
        return not_found()
    data = service.cache.read(name)
    if data is None:
        return not_found()
    sha = name.split(".", 1)[0]
    etag = f'"{sha}"'
    headers = {
        "etag": etag,
        "cache-control": "private, max-age=31536000, immutable",
        "x-content-type-options": "nosniff",
    }
    inm = header(scope, b"if-none-match")
    if inm is not None and _matches(inm.decode("latin-1"), etag):
        return Response(status_code=304, headers=headers)
    headers["content-length"] = str(len(data))
    body = b"" if scope["method"] == "HEAD" else data
    resp = Response(body, status_code=200, media_type=mime_of(name), headers=headers)
    if scope["method"] == "HEAD":
        resp.headers["content-length"] = str(len(data))
    return resp


def self_check(name, data):
    """Whether data is the picture its name says (used by tests and tools)."""
    return hashlib.sha256(data).hexdigest() == name.split(".", 1)[0]
