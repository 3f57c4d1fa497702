#!/usr/bin/env python3
"""A stand-in server for looking at the chat page (peers/python-server/web/) without the real one.

It serves the page as SPEC §13 asks (``/`` and ``/web/<asset>``, ``Cache-Control: no-cache``, the
Content-Security-Policy of 13.23), ``/health``, ``/mcp``, ``/tool-media/<name>`` and a scripted
``POST /v1/chat/completions`` stream. The last user message picks the script by a word it holds:

  pic      reasoning, text, a call whose result has two pictures, more text
  long     a call with a very long tool name and a very long result (cut for the model)
  slow     a call that runs for 60 s (keep-alives), to try Stop
  limit    a round, then the limit event and a skipped call
  refuse   a 400 JSON refusal before the stream          html502  a 502 HTML page
  break    a stream that breaks (the connection closes) in the middle
  midfail  a stream that ends with 2.8's JSON error in place of a chunk
  hostile  markup, entities, Markdown and bidi characters in every string
  gone     a call whose picture is not in the cache (404)
  frames   the same answer as ``pic`` framed oddly: CR LF, no space after ``data:``, comments,
           ``id:``/``event:``/``retry:`` fields, unknown events, one byte per write
  anything else: reasoning and a short answer.

Every request body is appended to ``/tmp/page_stub_requests.jsonl``.

    python3 peers/python-server/devtools/page_stub.py [--port 8099] [--key K] [--no-mcp]
"""

import argparse
import hashlib
import json
import struct
import sys
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

WEB = Path(__file__).resolve().parent.parent / "web"
LOG = Path("/tmp/page_stub_requests.jsonl")
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob:; "
       "connect-src 'self' blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
       "form-action 'none'")

MEDIA: dict = {}


def png(width, height, rgb):
    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))

    def chunk(kind, data):
        c = struct.pack(">I", len(data)) + kind + data
        return c + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def media_entry(width, height, rgb, keep=True):
    data = png(width, height, rgb)
    name = hashlib.sha256(data).hexdigest() + ".png"
    if keep:
        MEDIA[name] = data
    return {"ref": "strata-tool-media:" + name, "url": "/tool-media/" + name, "mime": "image/png",
            "bytes": len(data), "width": width, "height": height}


def chunk(delta=None, mcp=None, finish=None, usage=None):
    obj = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": int(time.time()),
           "model": "stub-model", "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}]}
    if usage:
        obj["usage"] = usage
    if mcp is not None:
        obj["strata_mcp"] = mcp
    return obj


def script_for(text, tools):
    """A list of ('data', obj) / ('raw', bytes) / ('sleep', s) / ('break',) steps."""
    t = text.lower()
    out = [("data", chunk({"role": "assistant", "content": ""}))]

    def d(**kw):
        out.append(("data", chunk(**kw)))

    def say(s, field="content", pieces=4):
        step = max(1, len(s) // pieces)
        for i in range(0, len(s), step):
            d(delta={field: s[i:i + step]})
            out.append(("sleep", 0.03))

    def end():
        d(finish="stop", usage={"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30})
        out.append(("raw", b"data: [DONE]\n\n"))

    def call(cid, server, tool, args, result, ok=True, media=None, ms=312, rnd=1, truncated=False,
             chars=None, start=True):
        name = f"{server}__{tool}"
        if start:
            d(mcp={"event": "start", "id": cid, "name": name})
        return lambda: (
            d(mcp={"event": "call", "id": cid, "name": name, "server": server, "tool": tool,
                   "arguments": args, "round": rnd}),
            out.append(("sleep", ms / 1000)),
            d(mcp=dict({"event": "result", "id": cid, "ok": ok, "text": result,
                        "chars": chars if chars is not None else len(result), "truncated": truncated,
                        "ms": ms}, **({"media": media} if media else {}))),
        )

    if "refuse" in t:
        return [("status", 400, "application/json",
                 json.dumps({"error": {"type": "invalid_request_error",
                                       "message": "the prompt exceeds the context <b>(9000 tokens)</b>"}}))]
    if "html502" in t:
        return [("status", 502, "text/html", "<html><body><h1>502 Bad Gateway</h1></body></html>")]
    if "pic" in t or "frames" in t:
        say("The user wants a picture. Ünïcödé ✓.", "reasoning_content")
        say("Let me draw it for you.")
        run = call("call_1", "draw", "make_picture", {"prompt": "a red square", "n": 2},
                   "Here are 2 pictures.\n[image (image/png, 1,234 bytes): not shown to the model]",
                   media=[media_entry(640, 400, (200, 30, 30)), media_entry(300, 900, (30, 90, 200))],
                   ms=1534)
        run()
        say("Thinking about the result…", "reasoning_content")
        say("Here they are: a red one and a blue one. Ça marche — 日本語も。")
        end()
        return out
    if "long" in t:
        say("Calling the long one.")
        run = call("call_L", "a-server-with-a-rather-long-name", "x" * 90 + "_tool_name_that_goes_on_and_on",
                   {"q": "y" * 300}, ("long line " * 400 + "\n") * 6 + "end", truncated=True, chars=26006)
        run()
        say("Done with the long one.")
        end()
        return out
    if "slow" in t:
        say("Starting a slow call.")
        d(mcp={"event": "start", "id": "call_s1", "name": "fake__quick"})
        d(mcp={"event": "start", "id": "call_s2", "name": "fake__slow"})
        d(mcp={"event": "call", "id": "call_s1", "name": "fake__quick", "server": "fake", "tool": "quick",
               "arguments": {}, "round": 1})
        d(mcp={"event": "result", "id": "call_s1", "ok": True, "text": "quick", "chars": 5,
               "truncated": False, "ms": 12})
        d(mcp={"event": "call", "id": "call_s2", "name": "fake__slow", "server": "fake", "tool": "slow",
               "arguments": {"seconds": 60}, "round": 1})
        for _ in range(60):
            out.append(("sleep", 1))
            out.append(("raw", b": keep-alive\n\n"))
        end()
        return out
    if "limit" in t:
        say("Round one.")
        call("call_r1", "fake", "echo", {"text": "1"}, "1")()
        say("Round two, over the limit.")
        d(mcp={"event": "start", "id": "call_r2", "name": "fake__echo"})
        d(mcp={"event": "limit", "max_rounds": 1})
        d(mcp={"event": "result", "id": "call_r2", "ok": False, "skipped": True, "text": "not run",
               "chars": 0, "truncated": False, "ms": 0})
        end()
        return out
    if "break" in t:
        say("This answer will break", pieces=3)
        d(mcp={"event": "start", "id": "call_b", "name": "fake__echo"})
        out.append(("break",))
        return out
    if "midfail" in t:
        say("Some text before the failure.")
        out.append(("raw", b'data: {"error":{"type":"server_error","message":"the engine <i>died</i>"}}\n\n'))
        out.append(("raw", b"data: [DONE]\n\n"))
        return out
    if "hostile" in t:
        evil = ("<img src=x onerror=alert(1)> <svg onload=alert(2)> <script>alert(3)</script> "
                "<iframe srcdoc='<b>x</b>'></iframe> </textarea></pre> &lt;b&gt; [link](javascript:alert(4)) "
                "![pic](http://example.invalid/x.png) \u202eRLO\u202c zero\u200bwidth http://example.invalid")
        say(evil, "reasoning_content", pieces=2)
        say(evil, pieces=3)
        run = call("call_h", "<b>srv</b>", "<i>tool</i>", {"html": evil},
                   "error: " + evil + " [resource link: <b>n</b> javascript:alert(5)]", ok=False)
        run()
        say("After: " + evil)
        end()
        return out
    if "gone" in t:
        say("A picture that is gone.")
        call("call_g", "draw", "make_picture", {}, "one picture",
             media=[media_entry(40, 40, (0, 160, 0), keep=False)])()
        say("It is gone.")
        end()
        return out
    say("Thinking about it.", "reasoning_content", pieces=2)
    say("Hello from the stub. Line one.\nLine two, ünïcödé ✓.")
    end()
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    key = None
    mcp = True

    def log_message(self, *a):
        pass

    def send_json(self, status, obj, extra=None):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def authorized(self):
        if not self.key:
            return True
        a = self.headers.get("Authorization", "")
        if a.lower().startswith("bearer ") and a[7:].encode("latin-1").decode("utf-8", "replace") == self.key:
            return True
        return self.headers.get("x-api-key") == self.key

    def refuse_key(self):
        self.send_json(401, {"error": {"type": "authentication_error", "message": "missing or wrong API key"}})

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path == "/":
            return self.file(WEB / "index.html", "text/html; charset=utf-8", csp=True)
        if path.startswith("/web/"):
            name = path[5:]
            types = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
            p = WEB / name
            if "/" in name or p.suffix not in types or not p.is_file():
                return self.send_json(404, {"error": {"type": "not_found", "message": "not found"}})
            return self.file(p, types[p.suffix])
        if path in ("/health", "/api/health"):
            return self.send_json(200, {"status": "ok", "max_context": 262144, "model": "stub-<model>",
                                        "images": False, "api_key": bool(self.key), "loaded": True,
                                        "service": "page-stub"})
        if not self.authorized():
            return self.refuse_key()
        if path == "/mcp":
            if not self.mcp:
                return self.send_json(200, {"servers": [], "tools": 0})
            return self.send_json(200, {"servers": [{"name": "fake", "transport": "stdio", "status": "ready",
                                                     "error": None, "info": None,
                                                     "tools": [{"name": "fake__echo", "tool": "echo",
                                                                "description": "echo"}]}],
                                        "tools": 1, "settings": {"timeout_s": 60, "max_result_chars": 20000,
                                                                 "max_rounds": 8}})
        if path.startswith("/tool-media/"):
            with Path("/tmp/page_stub_media.log").open("a") as f:
                f.write(path[len("/tool-media/"):] + "\n")
            data = MEDIA.get(path[len("/tool-media/"):])
            if data is None:
                return self.send_json(404, {"error": {"type": "not_found", "message": "not found"}})
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "private, max-age=31536000, immutable")
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_json(404, {"error": {"type": "not_found", "message": "not found"}})

    def file(self, p, ctype, csp=False):
        body = p.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache")
        if csp:
            self.send_header("Content-Security-Policy", CSP)
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        if not self.authorized():
            return self.refuse_key()
        if self.path != "/v1/chat/completions":
            return self.send_json(404, {"error": {"type": "not_found", "message": "not found"}})
        body = json.loads(raw)
        with LOG.open("a") as f:
            f.write(json.dumps({"authorization": self.headers.get("Authorization"), "body": body}) + "\n")
        last = ""
        for m in body.get("messages", []):
            if m.get("role") == "user" and isinstance(m.get("content"), str):
                last = m["content"]
        steps = script_for(last, body.get("strata_mcp") is True)
        if steps and steps[0][0] == "status":
            _, status, ctype, text = steps[0]
            data = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        odd = "frames" in last.lower()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            if odd:
                self.wfile.write(b": a comment first\r\nretry: 1000\r\n\r\nid: 1\r\nevent: message\r\n\r\n")
            for step in steps:
                if step[0] == "sleep":
                    time.sleep(step[1])
                    continue
                if step[0] == "break":
                    self.wfile.flush()
                    self.connection.shutdown(2)
                    return
                if step[0] == "raw":
                    data = step[1]
                else:
                    js = json.dumps(step[1], ensure_ascii=False)
                    data = (("data:" + js + "\r\n\r\n") if odd else ("data: " + js + "\n\n")).encode()
                if odd:
                    data = data.replace(b"\n\n", b"\r\n\r\n") if b"\r" not in data else data
                    data += b": between\r\nid: 7\r\n\r\n"
                    data += b'data: {"choices":[{"index":0,"delta":{}}],"strata_mcp":{"event":"future"}}\r\n\r\n'
                    data += (b'data:{"choices":[{"index":0,"delta":{}}],"strata_mcp":{"event":"result","id":"nope",'
                             b'"ok":true,"text":"stray","chars":5,"truncated":false,"ms":1}}\r\n\r\n')
                    for i in range(len(data)):
                        self.wfile.write(data[i:i + 1])
                        self.wfile.flush()
                else:
                    self.wfile.write(data)
                    self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8099)
    ap.add_argument("--key")
    ap.add_argument("--no-mcp", action="store_true")
    a = ap.parse_args()
    Handler.key = a.key
    Handler.mcp = not a.no_mcp
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    print(f"listening on http://127.0.0.1:{srv.server_address[1]}", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
