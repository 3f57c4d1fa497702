"""One configured MCP server (SPEC 5.1–5.5, 5.8, 7.2): its connection through the official SDK
(stdio or Streamable HTTP), initialize and the pages of tools/list, its status, its calls
with their timeout and cancellation, and its restart after it stopped."""

import asyncio
import contextlib
import logging
import os
import ssl
import time

import httpx2
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from .mcp_stdio import STDOUT_LIMIT, StartError, StdioProcess, stdio_streams

log = logging.getLogger("strata_peer.mcp")
CLIENT_INFO = types.Implementation(name="reference-server", title="Strata peer (Python)", version="1")
METHOD_NOT_FOUND = -32601
CONNECTION_CLOSED_CODES = (-32000,)


class CallFailed(Exception):
    """A call that did not give a result; the message follows `error: ` in the result text."""


def innermost(exc):
    """The innermost cause of an exception (through exception groups and causes)."""
    seen = set()
    while id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
            continue
        nxt = exc.__cause__ or exc.__context__
        if nxt is None or isinstance(nxt, asyncio.CancelledError):
            break
        exc = nxt
    if isinstance(exc, OSError) and exc.errno and not isinstance(exc, ssl.SSLError):
        # the system's words for the cause ("Connection refused"), not Python's "Connect call failed"
        return f"{os.strerror(exc.errno)} (os error {exc.errno})"
    text = str(exc) or type(exc).__name__
    return " ".join(text.split())  # one line


def _find(exc, kind):
    """The first exception of that kind in exc, its exception groups and causes, or None."""
    seen, todo = set(), [exc]
    while todo:
        e = todo.pop(0)
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, kind):
            return e
        if isinstance(e, BaseExceptionGroup):
            todo.extend(e.exceptions)
        todo.extend([e.__cause__, e.__context__])
    return None


def ssl_context():
    path = os.environ.get("SSL_CERT_FILE")
    if path:
        return ssl.create_default_context(cafile=path)
    return ssl.create_default_context()


class Connection:
    """One live connection: a runner task holding the transport and the session."""

    def __init__(self):
        self.session = None
        self.dead = asyncio.Event()
        self.death = None         # why it ended, once dead
        self.stop = asyncio.Event()
        self.task = None
        self.process = None


class McpServer:
    def __init__(self, entry, settings, base_cwd):
        self.entry = entry
        self.name = entry.name
        self.transport = entry.transport
        self.mcp = settings
        self.base_cwd = base_cwd
        self.status = "starting"
        self.error = None
        self.info = None
        self.tools = []
        self.conn = None
        self.failed_restart_at = None
        self.first_start_done = asyncio.Event()
        self._lock = asyncio.Lock()

    # ----- connecting -----

    async def _list_tools(self, session):
        tools, cursor = [], None
        for page in range(self.mcp.max_tool_pages):
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            try:
                result = await session.list_tools(params=params)
            except MCPError as e:
                if e.code == METHOD_NOT_FOUND and page == 0:
                    return []
                raise StartError(f"tools/list failed: {e.message} (code {e.code})")
            except Exception as e:
                raise StartError(f"tools/list failed: {innermost(e)}")
            for t in result.tools:
                d = t.model_dump(by_alias=True, mode="json", exclude_none=True)
                if d.get("name"):
                    tools.append(d)
            cursor = result.next_cursor
            if not cursor:
                break
        else:
            if cursor:
                log.warning("MCP server '%s': more than %d pages of tools/list; the rest is left out",
                            self.name, self.mcp.max_tool_pages)
        if len(tools) > self.mcp.max_tools_per_server:
            log.warning("MCP server '%s': %d tools; only the first %d are kept",
                        self.name, len(tools), self.mcp.max_tools_per_server)
            tools = tools[: self.mcp.max_tools_per_server]
        return tools

    async def _run(self, conn, ready):
        """The runner task of one connection."""
        try:
            async with contextlib.AsyncExitStack() as stack:
                if self.transport == "stdio":
                    proc = StdioProcess(self.entry, self.base_cwd)
                    conn.process = proc
                    stack.push_async_callback(proc.stop)
                    await proc.spawn()
                    streams = await stack.enter_async_context(stdio_streams(proc))
                else:
                    # 5.1g: header values go as their UTF-8 bytes (a key may hold non-ASCII)
                    headers = {k: v.encode("utf-8") for k, v in self.entry.headers.items()}
                    client = httpx2.AsyncClient(headers=headers, verify=ssl_context(),
                                                timeout=httpx2.Timeout(30, read=300))
                    await stack.enter_async_context(client)
                    streams = await stack.enter_async_context(
                        streamable_http_client(self.entry.url, http_client=client,
                                               max_sse_event_size=self._max_event_bytes()))
                session = await stack.enter_async_context(ClientSession(*streams, client_info=CLIENT_INFO))
                try:
                    init = await asyncio.wait_for(self._handshake(session, conn), self.mcp.start_timeout_s)
                except asyncio.TimeoutError:
                    raise StartError(f"initialize timed out after {self.mcp.start_timeout_s:g} s")
                conn.session = session
                ready.set_result(init)
                waits = [asyncio.ensure_future(conn.stop.wait())]
                if conn.process is not None:
                    waits.append(asyncio.ensure_future(conn.process.exited.wait()))
                try:
                    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for w in waits:
                        w.cancel()
                if conn.process is not None and conn.process.exited.is_set():
                    conn.death = conn.process.stopped_message()
        except BaseException as e:
            conn.death = conn.death or self._describe(e, conn)
            if not ready.done():
                ready.set_exception(StartError(conn.death))
            if isinstance(e, asyncio.CancelledError) and conn.stop.is_set():
                pass
        finally:
            if conn.death is None:
                conn.death = "the server was closed"
            if not ready.done():
                ready.set_exception(StartError(conn.death))
            conn.dead.set()
            if self.conn is conn and self.status == "ready" and not conn.stop.is_set():
                self.status = "stopped"
                self.error = conn.death
                log.info("MCP server '%s' stopped: %s", self.name, conn.death)

    def _max_event_bytes(self):
        """8.4 / 5.1f: one SSE event (one JSON-RPC answer) may carry every picture the caps let
        through, so the SDK's 1 MiB default is raised to the stdio line bound (112 MiB), or more
        when the configured caps need it; a bound is kept."""
        caps = self.mcp.max_pictures_per_result * self.mcp.max_picture_chars + (16 << 20)
        return max(STDOUT_LIMIT, caps)

    def _describe(self, e, conn):
        start_error = _find(e, StartError)
        if start_error is not None:
            return str(start_error)
        if conn.process is not None and conn.process.proc is not None:
            for _ in range(40):
                if conn.process.proc.returncode is not None:
                    return conn.process.stopped_message()
                time.sleep(0)
        if self.transport == "http":
            return f"could not reach {self.entry.url}: {innermost(e)}"
        return innermost(e)

    async def _handshake(self, session, conn):
        try:
            try:
                init = await session.initialize()
            except MCPError as e:
                raise StartError(f"initialize failed: {e.message} (code {e.code})")
            tools = await self._list_tools(session)
        except StartError:
            # a stdio server that exits while starting is reported by its exit (5.3b), not by the
            # closed connection the SDK saw first
            proc = conn.process
            if proc is not None and proc.proc is not None:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(proc.exited.wait(), 0.5)
                if proc.exited.is_set():
                    raise StartError(proc.stopped_message())
            raise
        return init, tools

    async def _connect(self):
        """Start a connection; (init result, tools) or StartError."""
        conn = Connection()
        ready = asyncio.get_running_loop().create_future()
        conn.task = asyncio.create_task(self._run(conn, ready))
        try:
            init, tools = await ready
        except StartError as e:
            await self._await_dead(conn)
            msg = str(e)
            proc = conn.process
            if proc is not None and proc.proc is not None and not proc.stopped_by_us:
                await asyncio.sleep(0)
                if proc.proc.returncode is not None and not msg.startswith("could not start"):
                    msg = proc.stopped_message()  # it exited on its own while starting
            raise StartError(msg)
        self.conn = conn
        si = init.server_info
        self.info = {"name": si.name, "title": getattr(si, "title", None), "version": si.version,
                     "protocol": init.protocol_version}
        return tools

    async def _await_dead(self, conn):
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(conn.dead.wait(), 5)

    async def start(self):
        """The first start (in the background)."""
        try:
            self.tools = await self._connect()
            self.status, self.error = "ready", None
            log.info("MCP server '%s' is ready: %d tools", self.name, len(self.tools))
        except StartError as e:
            self.status, self.error = "failed", str(e)
            log.info("MCP server '%s' did not start: %s", self.name, e)
        except Exception as e:  # never let a start crash the hub
            self.status, self.error = "failed", innermost(e)
            log.info("MCP server '%s' did not start: %s", self.name, self.error)
        finally:
            self.first_start_done.set()

    async def _ensure_running(self):
        async with self._lock:
            if self.status == "ready" and self.conn and not self.conn.dead.is_set():
                return self.conn
            if self.status == "failed":
                raise CallFailed(f"the server is not running ({self.error})")
            now = time.monotonic()
            if self.failed_restart_at is not None and now - self.failed_restart_at < self.mcp.retry_failed_s:
                raise CallFailed(f"the server is not running ({self.error})")
            try:
                await self._connect()
            except StartError as e:
                self.status, self.error = "stopped", str(e)
                self.failed_restart_at = time.monotonic()
                raise CallFailed(f"the server could not be started again: {e}")
            self.status, self.error, self.failed_restart_at = "ready", None, None
            return self.conn

    # ----- calling -----

    async def call(self, tool, arguments, timeout):
        """The tools/call result as a dict; CallFailed with the reason otherwise."""
        conn = await self._ensure_running()
        task = asyncio.create_task(conn.session.call_tool(tool, arguments))
        dead = asyncio.ensure_future(conn.dead.wait())
        try:
            done, _ = await asyncio.wait({task, dead}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            dead.cancel()
            raise
        dead.cancel()
        if task in done:
            try:
                result = task.result()
            except MCPError as e:
                if conn.dead.is_set() or (e.code in CONNECTION_CLOSED_CODES and await self._dies_soon(conn)):
                    raise CallFailed(conn.death)
                raise CallFailed(f"{e.message} (code {e.code})")
            except Exception as e:
                if conn.dead.is_set():
                    raise CallFailed(conn.death)
                raise CallFailed(innermost(e))
            return result.model_dump(by_alias=True, mode="json", exclude_none=True)
        task.cancel()
        if conn.dead.is_set():
            raise CallFailed(conn.death)
        raise CallFailed(f"tools/call timed out after {timeout:g} s")

    async def _dies_soon(self, conn):
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(conn.dead.wait(), 2.5)
        return conn.dead.is_set()

    async def close(self):
        conn = self.conn
        if conn is None or conn.task is None:
            return
        conn.stop.set()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(conn.task), 6)
