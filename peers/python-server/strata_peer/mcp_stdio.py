"""The stdio transport of an MCP server (SPEC 5.1b–f, 5.5): the command in its own process
group, its last 40 stderr lines kept (never logged), stdout lines up to 112 MiB bridged to the
SDK's ClientSession, and the group stopped (SIGTERM, then SIGKILL after 2 s) and reaped."""

import asyncio
import collections
import contextlib
import logging
import os
import signal

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

log = logging.getLogger("strata_peer.mcp")

STDOUT_LIMIT = 112 << 20
STDERR_LINES = 40
STDERR_LINE_BYTES = 4096


class StdioProcess:
    def __init__(self, entry, base_cwd):
        self.entry = entry
        self.base_cwd = base_cwd
        self.proc = None
        self.stderr = collections.deque(maxlen=STDERR_LINES)
        self.exited = asyncio.Event()
        self.stopped_by_us = False  # whether stop() found it running (its exit code is then ours)
        self._tasks = []

    def _env(self):
        env = dict(os.environ)
        env.pop("STRATA_API_KEY", None)
        env.update(self.entry.env)
        return env

    async def spawn(self):
        cwd = self.entry.cwd
        if cwd is None:
            cwd = self.base_cwd
        elif not os.path.isabs(cwd):
            cwd = os.path.join(self.base_cwd, cwd)
        try:
            self.proc = await asyncio.create_subprocess_exec(
                self.entry.command, *self.entry.args, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                cwd=cwd, env=self._env(), start_new_session=True, limit=STDOUT_LIMIT)
        except (OSError, ValueError) as e:
            reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            raise StartError(f"could not start '{self.entry.command}': {reason}")
        self._tasks.append(asyncio.create_task(self._read_stderr()))
        self._tasks.append(asyncio.create_task(self._watch()))

    async def _read_stderr(self):
        stream = self.proc.stderr
        while True:
            try:
                line = await stream.readline()
            except ValueError:
                line = await stream.read(STDERR_LINE_BYTES)
            except Exception:
                return
            if not line:
                return
            text = line[:STDERR_LINE_BYTES].decode("utf-8", "replace").rstrip("\r\n")
            self.stderr.append(text)

    async def _watch(self):
        while self.proc.returncode is None:
            await asyncio.sleep(0.05)
        self._kill_group(signal.SIGKILL)
        self.exited.set()

    def _kill_group(self, sig):
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError, OSError):
            pass

    def last_stderr(self):
        return self.stderr[-1][:300] if self.stderr else ""

    def stopped_message(self):
        return f"the server stopped (exit code {self.proc.returncode}): {self.last_stderr()}"

    async def stop(self):
        """Close stdin, SIGTERM the group, SIGKILL it if the leader is there 2 s later, reap."""
        if self.proc is None:
            return
        if self.proc.returncode is None:
            self.stopped_by_us = True
            with contextlib.suppress(Exception):
                self.proc.stdin.close()
            self._kill_group(signal.SIGTERM)
            for _ in range(40):
                if self.proc.returncode is not None:
                    break
                await asyncio.sleep(0.05)
            if self.proc.returncode is None:
                self._kill_group(signal.SIGKILL)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.proc.wait(), 2)
        self._kill_group(signal.SIGKILL)
        for t in self._tasks:
            t.cancel()


class StartError(Exception):
    """A server that could not be started; the message is what GET /mcp shows."""


@contextlib.asynccontextmanager
async def stdio_streams(process):
    """The (read, write) stream pair ClientSession takes, bridged to the process's pipes."""
    proc = process.proc
    read_writer, read_stream = anyio.create_memory_object_stream(0)
    write_stream, write_reader = anyio.create_memory_object_stream(0)

    async def reader():
        async with read_writer:
            while True:
                try:
                    line = await proc.stdout.readline()
                except (ValueError, asyncio.LimitOverrunError):
                    log.warning("an MCP server wrote a stdout line over 112 MiB; the connection is closed")
                    return
                except Exception:
                    return
                if not line:
                    return
                line = line.strip()
                if not line:
                    continue
                try:
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except ValueError:
                    continue  # a line that is not JSON-RPC is the server's log
                try:
                    await read_writer.send(SessionMessage(message))
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return

    async def writer():
        async with write_reader:
            async for session_message in write_reader:
                data = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                try:
                    proc.stdin.write(data.encode("utf-8") + b"\n")
                    await proc.stdin.drain()
                except (OSError, RuntimeError):
                    return

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        try:
            yield read_stream, write_stream
        finally:
            tg.cancel_scope.cancel()
            for s in (read_stream, write_stream):
                with contextlib.suppress(Exception):
                    await s.aclose()
