"""The MCP hub (SPEC 5.3, 5.6–5.8, 6.1c, 7.2): the configured servers started in the background,
the names the model sees, the tools offered, `GET /mcp`, and routing a call to its server."""

import asyncio
import logging
import re
import time

from . import results
from .mcp_server import CallFailed, McpServer

log = logging.getLogger("strata_peer.mcp")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def clean(part):
    return _UNSAFE.sub("_", part) or "x"


class Route:
    def __init__(self, public, server, tool):
        self.public = public
        self.server = server
        self.tool = tool

    @property
    def description(self):
        if "description" in self.tool and self.tool["description"] is not None:
            return self.tool["description"]
        return self.tool.get("title") or ""

    def offered(self):
        schema = self.tool.get("inputSchema")
        if not isinstance(schema, dict):
            schema = {"type": "object", "properties": {}}
        return {"type": "function", "function": {"name": self.public, "description": self.description,
                                                 "parameters": schema}}


class Hub:
    def __init__(self, settings, base_cwd):
        self.settings = settings.mcp
        self.servers = [McpServer(e, settings.mcp, base_cwd) for e in settings.servers.values()]
        self._tasks = []

    def start(self):
        if self.servers:
            log.info("starting %d MCP server(s): %s", len(self.servers), ", ".join(s.name for s in self.servers))
        for s in self.servers:
            self._tasks.append(asyncio.create_task(s.start()))

    async def wait_started(self, timeout=10.0):
        pending = [s.first_start_done.wait() for s in self.servers if not s.first_start_done.is_set()]
        if pending:
            try:
                await asyncio.wait_for(asyncio.gather(*pending), timeout)
            except asyncio.TimeoutError:
                pass

    def routes(self):
        """Every routable tool, in server then listing order, with its public name (5.6)."""
        taken, out = set(), []
        for s in self.servers:
            if s.status not in ("ready", "stopped"):
                continue
            for tool in s.tools:
                base = (clean(s.name) + "__" + clean(tool["name"]))[:64]
                name = base
                k = 2
                while name in taken:
                    name = f"{base[:60]}_{k}"
                    k += 1
                taken.add(name)
                out.append(Route(name, s, tool))
        return out

    def status_json(self):
        if not self.servers:
            return {"servers": [], "tools": 0}
        routes = self.routes()
        by_server = {}
        for r in routes:
            by_server.setdefault(id(r.server), []).append(r)
        servers = []
        for s in self.servers:
            servers.append({
                "name": s.name, "transport": s.transport, "status": s.status, "error": s.error,
                "info": s.info,
                "tools": [{"name": r.public, "tool": r.tool["name"], "description": r.description[:300]}
                          for r in by_server.get(id(s), [])],
            })
        return {"servers": servers, "tools": len(routes),
                "settings": {"timeout_s": self.settings.timeout_s, "max_result_chars": self.settings.max_result_chars,
                             "max_rounds": self.settings.max_rounds}}

    async def call(self, route, public_name, arguments, cache, has_vision):
        """Run one call: (ToolOutcome, server name or None, tool name, ms)."""
        started = time.monotonic()
        cap = self.settings.max_result_chars
        if route is None:
            out = results.error_outcome(f"there is no tool named '{public_name}'", cap)
            return out, int((time.monotonic() - started) * 1000)
        try:
            result = await route.server.call(route.tool["name"], arguments, self.settings.timeout_s)
            out = await asyncio.to_thread(results.outcome, result, self.settings, cache, has_vision)
        except CallFailed as e:
            out = results.error_outcome(str(e), cap)
        ms = int((time.monotonic() - started) * 1000)
        log.info("tool %s: %s, %s characters in %.1f s%s", public_name, "ok" if out.ok else "error",
                 f"{out.chars:,}", ms / 1000, " (truncated for the model)" if out.truncated else "")
        return out, ms

    async def close(self):
        for t in self._tasks:
            if not t.done():
                t.cancel()
        await asyncio.gather(*(s.close() for s in self.servers), return_exceptions=True)
