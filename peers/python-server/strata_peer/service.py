"""The running server's shared state: settings, engine, MCP hub, picture cache, the key and
Host rules, the body budget, and the request counters `GET /v1/status` reports."""

import asyncio

from .auth import HostRules, KeyCheck
from .engine import MockEngine
from .http_body import BodyBudget
from .mcp_hub import Hub
from .media_cache import MediaCache


class Service:
    def __init__(self, settings, base_cwd):
        self.settings = settings
        self.engine = MockEngine(settings.engine)
        self.hub = Hub(settings, base_cwd) if settings.servers else None
        self.cache = MediaCache(settings.config_path)
        self.keys = KeyCheck(settings.api_key)
        self.host_rules = HostRules(settings)
        self.budget = BodyBudget(settings.max_body_mib << 20)
        self.running = 0
        self.finished = 0
        self.cancelled = 0
        self.work = set()
        self.shutting_down = False

    def start(self):
        if self.hub is not None:
            self.hub.start()

    def cancel_all(self):
        """At a signal: cancel every running request."""
        self.shutting_down = True
        for t in list(self.work):
            t.cancel()

    async def close(self):
        if self.hub is not None:
            await self.hub.close()

    def track(self, task):
        self.work.add(task)
        task.add_done_callback(self.work.discard)
        if self.shutting_down:
            task.cancel()
        return task

    async def wait_work(self, timeout):
        if self.work:
            await asyncio.wait(list(self.work), timeout=timeout)
