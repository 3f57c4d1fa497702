"""The passes of one chat completion and its tool loop (SPEC 4.5–4.7, 4.12, 6.2–6.10): each pass
runs the engine on the prompt, reads its output, runs its MCP calls in order and adds the
assistant and tool messages to the next pass's prompt. It yields events for the route:
("delta", dict), ("mcp", dict), ("keepalive",), ("end", finish_reason, usage)."""

import asyncio
import codecs
import json
import secrets

from . import prompt
from .chat_request import Message
from .engine import IM_END, SPECIALS
from .errors import bad_request
from .output_parser import OutputParser, read_arguments
from .results import Picture

CTX_SLACK = 8
KEEPALIVE_S = 1.0


def call_id():
    return "call_" + secrets.token_hex(12)


def context_error(n, ctx, max_tokens=None):
    if max_tokens is None:
        return bad_request(f"the request exceeds the context: prompt ({n} tokens) leaves no room to answer "
                           f"in the context ({ctx}); requests are never truncated")
    return bad_request(f"the request exceeds the context: prompt ({n} tokens) + max_tokens ({max_tokens}) "
                       f"do not fit in the context ({ctx}); requests are never truncated")


def check_context(n, ctx, max_tokens):
    if n + CTX_SLACK >= ctx:
        raise context_error(n, ctx)
    if max_tokens is not None and n + CTX_SLACK + max_tokens > ctx:
        raise context_error(n, ctx, max_tokens)


class ToolLoop:
    def __init__(self, service, req, messages, vision, mcp_routes):
        self.service = service
        self.req = req
        self.messages = messages
        self.vision = vision
        self.own = {t["function"]["name"]: t["function"].get("parameters") for t in req.tools}
        self.routes = {r.public: r for r in mcp_routes} if mcp_routes is not None else None
        offered = [r.offered() for r in (mcp_routes or []) if r.public not in self.own]
        self.tools = list(req.tools) + offered
        self.ctx = service.settings.engine.max_context
        self.cursor = service.engine.cursor_for(req.model)
        self.prompt_tokens = None
        self.completion_tokens = 0

    @property
    def mcp_active(self):
        return self.routes is not None

    def first_prompt(self):
        """Count and check the first pass's prompt (before anything is sent)."""
        n = prompt.count(self.messages, self.tools)
        check_context(n, self.ctx, self.req.max_tokens)
        self.prompt_tokens = n
        return n

    def usage(self):
        p = self.prompt_tokens or 0
        return {"prompt_tokens": p, "completion_tokens": self.completion_tokens,
                "total_tokens": p + self.completion_tokens, "prompt_tokens_details": {"cached_tokens": 0}}

    async def run(self):
        rounds = 0
        own_index = 0
        first = True
        while True:
            if first:
                n = self.prompt_tokens
                first = False
            else:
                n = prompt.count(self.messages, self.tools)
                check_context(n, self.ctx, self.req.max_tokens)
                self.prompt_tokens = n
            max_new = self.req.max_tokens or (self.ctx - n - CTX_SLACK)
            state = PassState()
            async for ev in self._pass(max_new, state, own_index):
                yield ev
            own_index = state.own_index
            mcp_calls = [c for c in state.calls if c.kind == "mcp" and c.parsed.complete]
            if state.finish == "length" or state.own_done:
                for c in mcp_calls:
                    yield ("mcp", skipped(c.id))
                yield ("end", "tool_calls" if state.own_done else state.finish, self.usage())
                return
            if not mcp_calls:
                yield ("end", state.finish, self.usage())
                return
            if rounds >= self.service.settings.mcp.max_rounds:
                yield ("mcp", {"event": "limit", "max_rounds": self.service.settings.mcp.max_rounds})
                for c in mcp_calls:
                    yield ("mcp", skipped(c.id))
                yield ("end", "stop", self.usage())
                return
            rounds += 1
            tool_messages = []
            for c in mcp_calls:
                async for ev in self._run_call(c, rounds, tool_messages):
                    yield ev
            self.messages.append(Message("assistant", [state.content] if state.content else [],
                                         tool_calls=[(c.parsed.name, c.arguments) for c in mcp_calls]))
            self.messages.extend(tool_messages)

    async def _pass(self, max_new, st, own_index):
        st.own_index = own_index
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        engine = self.service.engine
        script = engine.next_script(self.cursor)
        parser = OutputParser(reasoning_first="</think>" in script)
        st.finish = "length"
        flush_each = engine.settings.delay_ms > 0
        pending = []
        count = 0
        async for tid in engine.generate(script, max_new):
            self.completion_tokens += 1
            if tid == IM_END or tid == 258:
                st.finish = "stop"
                break
            text = decoder.decode(bytes([tid])) if tid < 256 else SPECIALS[tid - 256]
            for ev in self._handle(parser.feed(text), st):
                pending.append(ev)
            count += 1
            if pending and (flush_each or count % 64 == 0):
                for ev in merge(pending):
                    yield ev
                pending = []
        tail = decoder.decode(b"", final=True)
        if tail:
            pending.extend(self._handle(parser.feed(tail), st))
        pending.extend(self._handle(parser.finish(), st))
        for ev in merge(pending):
            yield ev

    def _handle(self, events, st):
        out = []
        for kind, value in events:
            if kind == "reasoning":
                out.append(("delta", {"reasoning_content": value}))
            elif kind == "content":
                st.content += value
                out.append(("delta", {"content": value}))
            elif kind == "start":
                c = CallState(value)
                st.calls.append(c)
                if value.name in self.own or not self.mcp_active:
                    c.kind, c.index = "own", st.own_index
                    st.own_index += 1
                    out.append(("delta", {"tool_calls": [{"index": c.index, "id": c.id, "type": "function",
                                                          "function": {"name": value.name, "arguments": ""}}]}))
                else:
                    c.kind = "mcp"
                    out.append(("mcp", {"event": "start", "id": c.id, "name": value.name}))
            elif kind == "done":
                c = next(x for x in st.calls if x.parsed is value)
                if c.kind == "own":
                    args = read_arguments(value, self.own.get(value.name))
                    st.own_done = True
                    out.append(("delta", {"tool_calls": [{"index": c.index, "function": {
                        "arguments": json.dumps(args, ensure_ascii=False)}}]}))
                else:
                    route = self.routes.get(value.name)
                    c.route = route
                    c.arguments = read_arguments(value, route.tool.get("inputSchema") if route else None)
        return out

    async def _run_call(self, c, round_no, tool_messages):
        route = c.route
        yield ("mcp", {"event": "call", "id": c.id, "name": c.parsed.name,
                       "server": route.server.name if route else None,
                       "tool": route.tool["name"] if route else c.parsed.name,
                       "arguments": c.arguments, "round": round_no})
        hub = self.service.hub
        task = asyncio.create_task(hub.call(route, c.parsed.name, c.arguments, self.service.cache,
                                            self.service.settings.vision is not None))
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=KEEPALIVE_S)
                if done:
                    break
                yield ("keepalive",)
        finally:
            if not task.done():
                task.cancel()
        out, ms = task.result()
        ev = {"event": "result", "id": c.id, "ok": out.ok, "text": out.text, "chars": out.chars,
              "truncated": out.truncated, "ms": ms}
        if out.media:
            ev["media"] = out.media
        yield ("mcp", ev)
        parts = out.parts if isinstance(out.parts, list) else [out.parts]
        resolved = [self.vision.tool_picture(p) if isinstance(p, Picture) else p for p in parts]
        tool_messages.append(Message("tool", resolved))


class PassState:
    def __init__(self):
        self.content = ""
        self.calls = []
        self.own_done = False
        self.finish = "length"
        self.own_index = 0


class CallState:
    def __init__(self, parsed):
        self.parsed = parsed
        self.id = call_id()
        self.kind = None
        self.index = None
        self.route = None
        self.arguments = {}


def skipped(cid):
    return {"event": "result", "id": cid, "ok": False, "skipped": True, "text": "not run", "chars": 0,
            "truncated": False, "ms": 0}


def merge(events):
    """Join consecutive text deltas of the same kind into one."""
    out = []
    for ev in events:
        if (out and ev[0] == "delta" and out[-1][0] == "delta" and len(ev[1]) == 1 and len(out[-1][1]) == 1
                and next(iter(ev[1])) in ("content", "reasoning_content") and ev[1].keys() == out[-1][1].keys()):
            k = next(iter(ev[1]))
            out[-1] = ("delta", {k: out[-1][1][k] + ev[1][k]})
        else:
            out.append(ev)
    return out
