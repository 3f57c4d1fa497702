"""The chat page's files (SPEC 13.1, 13.23): `GET /` and `/web/<asset>` served from the web
folder (read on each request, so a missing folder never crashes the server), with
`Cache-Control: no-cache` and, on the page, its Content-Security-Policy."""

import os
import re

from starlette.responses import Response

from .errors import not_found

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
       "connect-src 'self' blob:; font-src 'self'; object-src 'none'; base-uri 'none'; "
       "frame-ancestors 'none'; form-action 'self'")
TYPES = {
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".woff2": "font/woff2",
    ".json": "application/json",
}
_ASSET_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
COMMON = {"cache-control": "no-cache", "x-content-type-options": "nosniff"}


def _read(path):
    try:
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def _file(data, ctype, method, extra=None):
    headers = dict(COMMON)
    if extra:
        headers.update(extra)
    headers["content-length"] = str(len(data))
    resp = Response(b"" if method == "HEAD" else data, media_type=ctype, headers=headers)
    resp.headers["content-length"] = str(len(data))
    return resp


def page(service, method):
    data = _read(os.path.join(service.settings.web_dir, "index.html"))
    if data is None:
        return not_found()
    return _file(data, "text/html; charset=utf-8", method,
                 {"content-security-policy": CSP, "x-frame-options": "DENY", "referrer-policy": "no-referrer"})


def asset(service, name, method):
    if name is None or not _ASSET_RE.fullmatch(name) or ".." in name:
        return not_found()
    ext = os.path.splitext(name)[1].lower()
    if ext not in TYPES:
        return not_found()
    data = _read(os.path.join(service.settings.web_dir, name))
    if data is None:
        return not_found()
    return _file(data, TYPES[ext], method)
