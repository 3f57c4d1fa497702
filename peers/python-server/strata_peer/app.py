"""The ASGI application: decoding the path, the Host/Origin/key checks (SPEC §2), routing with
404/405 (3.4), and the body of every POST read within its bounds (1.11, 4.10)."""

import logging

from starlette.responses import Response

from . import chat_route, media_route, routes_info, web
from .errors import ApiError, error_response, method_not_allowed, not_found
from .http_body import BodyReader, Disconnected, Refusal, drain

log = logging.getLogger("strata_peer.app")

GET_ROUTES = {"/health", "/api/health", "/v1/models", "/v1/status", "/mcp", "/"}
POST_ROUTES = {"/v1/chat/completions"}
PUBLIC = {"/", "/health", "/api/health"}


def decode_path(raw):
    """The path, strictly percent-decoded as UTF-8, or None when it cannot be decoded."""
    out = bytearray()
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == 0x25:  # %
            hx = raw[i + 1:i + 3]
            if len(hx) != 2 or not all(ch in b"0123456789abcdefABCDEF" for ch in hx):
                return None
            out.append(int(hx, 16))
            i += 3
        else:
            out.append(c)
            i += 1
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        return None


def route_of(raw):
    """(route name, argument): '/web/x.js' -> ('web', 'x.js'); argument None when undecodable."""
    for prefix, kind in ((b"/web/", "web"), (b"/tool-media/", "media")):
        if raw.startswith(prefix):
            rest = raw[len(prefix):]
            decoded = decode_path(rest)
            if kind == "media" and decoded is not None:
                # 9.2c: the name matched is the segment as sent, before percent-decoding
                return kind, rest.decode("latin-1")
            return kind, decoded
    path = decode_path(raw)
    return path, None


class App:
    def __init__(self, service):
        self.service = service

    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        try:
            response = await self._handle(scope, receive, send)
        except ApiError as e:
            if scope["method"] in ("POST", "PUT", "PATCH"):
                await drain(scope, receive)
            response = error_response(e.status, e.etype, e.message)
        except Exception:
            log.exception("a request failed")
            response = error_response(500, "server_error", "the server failed to answer this request")
        if response is not None:
            await response(scope, receive, send)

    async def _lifespan(self, receive, send):
        while True:
            msg = await receive()
            if msg["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif msg["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _handle(self, scope, receive, send):
        svc = self.service
        method = scope["method"]
        raw = scope.get("raw_path") or scope["path"].encode("utf-8")
        raw = raw.split(b"?", 1)[0]
        route, arg = route_of(raw)
        keyed = svc.settings.api_key is not None
        if not keyed:
            svc.host_rules.check_host(scope)
        if method == "OPTIONS":
            return Response(status_code=204, headers={"allow": "GET, HEAD, POST, OPTIONS"})
        public = method in ("GET", "HEAD") and (route in PUBLIC or route == "web")
        if keyed and not public:
            svc.keys.check(scope)
        if route == "web":
            if method not in ("GET", "HEAD"):
                return method_not_allowed() if arg is not None else not_found()
            return web.asset(svc, arg, method)
        if route == "media":
            if method not in ("GET", "HEAD"):
                return method_not_allowed() if arg is not None else not_found()
            return media_route.serve(svc, scope, arg)
        if route in GET_ROUTES:
            if method not in ("GET", "HEAD"):
                return method_not_allowed()
            return self._get(route, method)
        if route in POST_ROUTES:
            if method != "POST":
                return method_not_allowed()
            if not keyed and route.startswith("/v1/"):
                svc.host_rules.check_origin(scope)
            return await self._post(scope, receive, send)
        return not_found()

    def _get(self, route, method):
        svc = self.service
        if route == "/":
            return web.page(svc, method)
        resp = {"/health": routes_info.health, "/api/health": routes_info.health,
                "/v1/models": routes_info.models, "/v1/status": routes_info.status,
                "/mcp": routes_info.mcp}[route](svc)
        if method == "HEAD":
            length = resp.headers.get("content-length")
            resp.body = b""
            if length:
                resp.headers["content-length"] = length
        return resp

    async def _post(self, scope, receive, send):
        reader = BodyReader(self.service, scope, receive)
        try:
            try:
                body = await reader.read()
            except Disconnected:
                return None
            except Refusal as e:
                reader.release()
                await drain(scope, receive, reader.done)
                return error_response(e.status, e.etype, e.message, headers={"connection": "close"})
            await chat_route.respond(self.service, scope, receive, send, body, reader.release)
            return None
        finally:
            reader.release()
