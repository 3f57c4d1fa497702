"""Serving (SPEC 1.2, 1.8, 1.9, 1.11k–l): the socket bound before anything serves, uvicorn with an
HTTP protocol that enforces `max_connections` and `header_timeout_s`, the ready line, and
SIGINT/SIGTERM stopping the server cleanly with exit code 0."""

import asyncio
import contextlib
import signal
import socket
import sys

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from .app import App

LIMITS = {"max_connections": 1024, "header_timeout_s": 10}


def _allow_missing_host():
    """2.5c: a request without a Host is served. h11 refuses an HTTP/1.1 request without one (400);
    such a request is read as h11 reads an HTTP/1.0 one, then given back its version."""
    import h11._events as events

    original = events.Request.__init__
    if getattr(original, "_strata_peer", False):
        return

    def init(self, *args, **kwargs):
        try:
            original(self, *args, **kwargs)
        except h11.LocalProtocolError as e:
            version = kwargs.get("http_version")
            if str(e) != "Missing mandatory Host: header" or version not in (b"1.1", "1.1"):
                raise
            kwargs["http_version"] = b"1.0" if isinstance(version, bytes) else "1.0"
            original(self, *args, **kwargs)
            object.__setattr__(self, "http_version", b"1.1")

    init._strata_peer = True
    events.Request.__init__ = init


_allow_missing_host()


class BoundedProtocol(H11Protocol):
    """h11 with a cap on open connections and a deadline for the request headers."""

    def connection_made(self, transport):
        super().connection_made(transport)
        self._header_timer = None
        if len(self.connections) > LIMITS["max_connections"]:
            self.connections.discard(self)
            transport.abort()
            return
        self._header_timer = self.loop.call_later(LIMITS["header_timeout_s"], self._headers_late)

    def _headers_late(self):
        self._header_timer = None
        if self.scope is None:
            self.transport.abort()

    def handle_events(self):
        super().handle_events()
        if self.scope is not None and getattr(self, "_header_timer", None) is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def connection_lost(self, exc):
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
        super().connection_lost(exc)


class Server(uvicorn.Server):
    def __init__(self, config, service):
        super().__init__(config)
        self.service = service

    @contextlib.contextmanager
    def capture_signals(self):
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.handle_exit, sig, None)
        try:
            yield
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)

    def handle_exit(self, sig, frame):
        if self.should_exit:
            self.force_exit = True
        self.should_exit = True
        self.service.cancel_all()


def bind(host, port):
    """A listening socket; OSError when the address cannot be bound."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, stype, proto, _, addr = infos[0]
    sock = socket.socket(family, stype, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(addr)
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


async def serve(service, sock):
    s = service.settings
    LIMITS["max_connections"] = s.max_connections
    LIMITS["header_timeout_s"] = s.header_timeout_s
    config = uvicorn.Config(App(service), http=BoundedProtocol, lifespan="off", log_config=None,
                            access_log=False, timeout_graceful_shutdown=5, timeout_keep_alive=5,
                            server_header=False, date_header=True, ws="none")
    server = Server(config, service)
    service.start()
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started and not task.done():
        await asyncio.sleep(0.01)
    if server.started:
        port = sock.getsockname()[1]
        host = s.host if ":" not in s.host else f"[{s.host}]"
        sys.stdout.write(f"listening on http://{host}:{port}\n")
        sys.stdout.flush()
    try:
        await task
    finally:
        service.cancel_all()
        await service.wait_work(5)
        await service.close()
