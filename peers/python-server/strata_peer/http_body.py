"""Reading request bodies within their bounds (SPEC 1.11m–q, 4.10c–f): `max_body_mib` per body and
shared by bodies being read (the first 64 KiB of each free), `body_timeout_s`, and a refused
body read on and dropped (16 MiB, 2 s, none after `Expect: 100-continue`) so the client gets
its answer and not a reset."""

import asyncio
import time

from .auth import header
from .errors import ApiError

FREE = 64 << 10
DRAIN_BYTES = 16 << 20
DRAIN_SECONDS = 2.0


class Disconnected(Exception):
    """The client went away while its body was being read."""


class BodyBudget:
    """The room bodies being read share: max_body_mib, beyond each body's first 64 KiB."""

    def __init__(self, total):
        self.total = total
        self.used = 0

    def take(self, n):
        if n <= 0:
            return True
        if self.used + n > self.total:
            return False
        self.used += n
        return True

    def give(self, n):
        self.used = max(0, self.used - n)


class Refusal(ApiError):
    """A refusal of the body itself; the rest of it is read on and dropped before answering."""


async def drain(scope, receive, already_done=False):
    """Read on and drop the rest of the body (bounded), unless the client sent Expect: 100-continue."""
    if already_done:
        return
    expect = (header(scope, b"expect") or b"").strip().lower()
    if expect == b"100-continue":
        return
    deadline = time.monotonic() + DRAIN_SECONDS
    dropped = 0
    while dropped <= DRAIN_BYTES:
        left = deadline - time.monotonic()
        if left <= 0:
            return
        try:
            msg = await asyncio.wait_for(receive(), left)
        except asyncio.TimeoutError:
            return
        if msg["type"] != "http.request":
            return
        dropped += len(msg.get("body", b""))
        if not msg.get("more_body", False):
            return


class BodyReader:
    """Reads one body; `reserved` is what it holds of the budget until release()."""

    def __init__(self, service, scope, receive):
        self.service = service
        self.scope = scope
        self.receive = receive
        self.reserved = 0
        self.done = False

    def release(self):
        self.service.budget.give(self.reserved)
        self.reserved = 0

    def _too_big(self):
        mib = self.service.settings.max_body_mib
        return Refusal(413, "invalid_request_error", f"the request body is larger than {mib} MiB")

    def _no_room(self):
        return Refusal(503, "server_error", "the server is reading other large requests: try again in a moment")

    def _reserve(self, upto):
        """1.11n-o: a body within its first 64 KiB takes no room; past them, every byte read so
        far is held (counted as read, never as declared)."""
        need = (upto if upto > FREE else 0) - self.reserved
        if need > 0:
            if not self.service.budget.take(need):
                return False
            self.reserved += need
        return True

    async def read(self):
        limit = self.service.settings.max_body_mib << 20
        length = header(self.scope, b"content-length")
        if length is not None:
            try:
                length = int(length)
            except ValueError:
                length = None
        if length is not None and length > limit:
            raise self._too_big()
        timeout = self.service.settings.body_timeout_s
        deadline = time.monotonic() + timeout
        chunks, total = [], 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ApiError(408, "invalid_request_error", f"the request body did not arrive within {timeout} s")
            try:
                msg = await asyncio.wait_for(self.receive(), left)
            except asyncio.TimeoutError:
                raise ApiError(408, "invalid_request_error", f"the request body did not arrive within {timeout} s")
            if msg["type"] == "http.disconnect":
                raise Disconnected()
            body = msg.get("body", b"")
            total += len(body)
            if total > limit:
                raise self._too_big()
            if not self._reserve(total):
                raise self._no_room()
            chunks.append(body)
            if not msg.get("more_body", False):
                self.done = True
                return b"".join(chunks)
