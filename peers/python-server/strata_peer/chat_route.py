"""`POST /v1/chat/completions` (SPEC §4, §6): the body read and checked, the own-page rule, the MCP
tools offered, the prompt prepared, then the answer streamed as SSE chunks or collected into
one JSON answer; a closed connection cancels the work."""

import asyncio
import logging
import secrets
import time

from . import jsonvals, prompt
from .chat_loop import CTX_SLACK, ToolLoop
from .chat_request import ImageSource, forced_tool_choice, parse
from .errors import ApiError, bad_request, error_body, error_response, json_response
from .lift import Lifted, lift_message
from .vision import RequestVision

log = logging.getLogger("strata_peer.chat")


def prepare(messages, vision, ctx):
    """11.1b lifting first, then 4.7d's text-only check, then every picture resolved."""
    for m in messages:
        if m.role == "tool":
            m.parts = lift_message(m.parts)
    text = prompt.text_bytes(messages)
    if text + CTX_SLACK >= ctx:
        raise bad_request(f"the request exceeds the context: prompt (more than {text} tokens) leaves no room "
                          f"to answer in the context ({ctx}); requests are never truncated")
    for m in messages:
        parts = []
        for p in m.parts:
            if isinstance(p, (ImageSource, Lifted)):
                p = vision.part(m.role, p)
                if p is None:
                    continue
            parts.append(p)
        m.parts = parts
    return messages


async def plan(service, scope, body_bytes):
    """Everything checked before the answer begins: the ToolLoop, or an ApiError."""
    try:
        body = jsonvals.loads(body_bytes.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise bad_request(f"the request is malformed ({str(e)[:200]})")
    req = parse(body)
    del body
    if req.strata_mcp:
        service.host_rules.own_page(scope)
    routes = None
    hub = service.hub
    if req.strata_mcp and hub is not None:
        await hub.wait_started(10.0)
        found = hub.routes()
        if found:
            routes = found
    if routes is not None:
        if req.structured:
            raise bad_request("a structured response_format with MCP tools is not supported")
        if forced_tool_choice(req.tool_choice):
            raise bad_request("a forced tool_choice with MCP tools is not supported")
    vision = RequestVision(service)
    messages = prepare(req.messages, vision, service.settings.engine.max_context)
    loop = ToolLoop(service, req, messages, vision, routes)
    loop.first_prompt()
    return req, loop


class Answer:
    def __init__(self, service):
        self.id = "chatcmpl-" + secrets.token_hex(12)
        self.created = int(time.time())
        self.model = service.settings.model

    def chunk(self, delta, finish=None, **extra):
        c = {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        c.update(extra)
        return c


def sse(value):
    return b"data: " + jsonvals.dumps(value).encode("utf-8") + b"\n\n"


async def stream(loop, answer, send):
    await send({"type": "http.response.start", "status": 200, "headers": [
        (b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-cache"),
        (b"x-accel-buffering", b"no")]})

    async def out(data):
        await send({"type": "http.response.body", "body": data, "more_body": True})

    await out(sse(answer.chunk({"role": "assistant", "content": ""})))
    try:
        async for ev in loop.run():
            if ev[0] == "delta":
                await out(sse(answer.chunk(ev[1])))
            elif ev[0] == "mcp":
                await out(sse(answer.chunk({}, strata_mcp=ev[1])))
            elif ev[0] == "keepalive":
                await out(b": keep-alive\n\n")
            elif ev[0] == "end":
                await out(sse(answer.chunk({}, ev[1], usage=ev[2])))
    except ApiError as e:
        await out(sse(e.body()))
    except Exception:
        log.exception("a chat completion failed after its stream began")
        await out(sse(error_body("server_error", "the answer failed")))
    await out(b"data: [DONE]\n\n")
    await send({"type": "http.response.body", "body": b"", "more_body": False})


async def collect(loop, answer):
    content, reasoning, calls, events = "", "", [], []
    finish, usage = "stop", None
    async for ev in loop.run():
        if ev[0] == "delta":
            d = ev[1]
            content += d.get("content", "")
            reasoning += d.get("reasoning_content", "")
            for tc in d.get("tool_calls", []):
                if "id" in tc:
                    calls.append({"id": tc["id"], "type": "function",
                                  "function": {"name": tc["function"]["name"], "arguments": ""}})
                else:
                    calls[tc["index"]]["function"]["arguments"] += tc["function"]["arguments"]
        elif ev[0] == "mcp":
            events.append(ev[1])
        elif ev[0] == "end":
            finish, usage = ev[1], ev[2]
    message = {"role": "assistant", "content": content or None}
    if reasoning:
        message["reasoning_content"] = reasoning
    if calls:
        message["tool_calls"] = calls
    if loop.mcp_active:
        message["strata_mcp"] = events
    return {"id": answer.id, "object": "chat.completion", "created": answer.created, "model": answer.model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}


async def watch_disconnect(receive, work):
    while True:
        msg = await receive()
        if msg["type"] == "http.disconnect":
            work.cancel()
            return


async def respond(service, scope, receive, send, body_bytes, release=None):
    """Plan, then answer, counting the request and cancelling it if the client goes."""
    service.running += 1
    cancelled = False
    state = {"started": False, "ended": False}

    async def tracked_send(msg):
        if msg["type"] == "http.response.start":
            state["started"] = True
        elif not msg.get("more_body", False):
            state["ended"] = True
        await send(msg)

    async def work():
        try:
            try:
                req, loop = await plan(service, scope, body_bytes)
            finally:
                if release is not None:
                    release()
        except ApiError as e:
            await error_response(e.status, e.etype, e.message)(scope, receive, tracked_send)
            return
        answer = Answer(service)
        if req.stream:
            await stream(loop, answer, tracked_send)
        else:
            try:
                value = await collect(loop, answer)
            except ApiError as e:
                await error_response(e.status, e.etype, e.message)(scope, receive, tracked_send)
                return
            await json_response(value)(scope, receive, tracked_send)

    task = service.track(asyncio.create_task(work()))
    watcher = asyncio.create_task(watch_disconnect(receive, task))
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        cancelled = True
        task.cancel()
    finally:
        watcher.cancel()
        service.running -= 1
        if cancelled or task.cancelled():
            service.cancelled += 1
        else:
            service.finished += 1
    if (cancelled or task.cancelled()) and not state["ended"]:
        await finish_cancelled(send, state["started"])


async def finish_cancelled(send, started):
    """End the answer of a cancelled request so its connection finishes cleanly."""
    try:
        if not started:
            body = jsonvals.dumps(error_body("server_error", "the request was cancelled")).encode()
            await send({"type": "http.response.start", "status": 503,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body, "more_body": False})
        else:
            await send({"type": "http.response.body", "body": b"data: [DONE]\n\n", "more_body": False})
    except Exception:
        pass
