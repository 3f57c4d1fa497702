"""A smoke run of the peer from the outside: starts it with configurations of its own, talks to
it with httpx, and prints what passed and what did not. Run with the peer's .venv python:
  .venv/bin/python devtools/smoke.py"""

import base64
import io
import json
import os
import subprocess
import sys
import tempfile
import time

import httpx
from PIL import Image

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = os.path.join(HERE, ".venv", "bin", "python")
TOY = os.path.join(HERE, "devtools", "toy_mcp.py")
FAILS = []


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f"  -- {detail}"))
    if not ok:
        FAILS.append(name)


def call_script(name, **params):
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params.items())
    return f"</think>\n\nLet me check.\n\n<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


class Peer:
    def __init__(self, cfg, scripts=(), args=(), env=None):
        self.dir = tempfile.mkdtemp()
        self.cfg = os.path.join(self.dir, "run.json")
        with open(self.cfg, "w") as f:
            json.dump(cfg, f)
        cmd = ["bash", os.path.join(HERE, "run.sh"), "--config", self.cfg, "--port", "0", *args]
        for s in scripts:
            cmd += ["--script", s]
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env={**os.environ, **(env or {})})
        line = self.p.stdout.readline()
        self.base = line.strip().replace("listening on ", "")
        self.c = httpx.Client(base_url=self.base, timeout=30)

    def chat(self, body, **kw):
        return self.c.post("/v1/chat/completions", json=body, **kw)

    def stream(self, body, headers=None):
        events = []
        with self.c.stream("POST", "/v1/chat/completions", json=body, headers=headers) as r:
            for line in r.iter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    events.append(json.loads(line[6:]))
                elif line.startswith(":"):
                    events.append(line)
        return events

    def stop(self):
        self.p.terminate()
        rc = self.p.wait(15)
        return rc


def png(w, h):
    buf = io.BytesIO()
    Image.new("RGB", (w, h), (1, 2, 3)).save(buf, format="PNG")
    return buf.getvalue()


def main():
    toy = {"command": PY, "args": [TOY]}
    # ---- plain chat, auth
    p = Peer({"api_key": "sekrit", "engine": {"max_context": 300}})
    check("401 without key", p.c.get("/v1/status").status_code == 401)
    check("health without key", p.c.get("/health").status_code == 200)
    check("bearer any case", p.c.get("/v1/status", headers={"authorization": "BEARER sekrit"}).status_code == 200)
    check("x-api-key beside empty bearer",
          p.c.get("/v1/status", headers={"authorization": "Bearer", "x-api-key": "sekrit"}).status_code == 200)
    h = {"x-api-key": "sekrit"}
    r = p.chat({"messages": [{"role": "user", "content": "x" * 400}]}, headers=h)
    check("4.7d more than", r.status_code == 400 and "more than" in r.text, r.text)
    r = p.chat({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 300}, headers=h)
    check("4.7b max_tokens", r.status_code == 400 and "exceeds the context" in r.text, r.text)
    r = p.chat({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 3}, headers=h)
    check("max_tokens caps", r.json()["choices"][0]["finish_reason"] == "length", r.text)
    check("SIGTERM exit 0", p.stop() == 0)

    # ---- MCP tool loop
    scripts = [call_script("toy__echo", text="hello from the tool"), "</think>\n\nThe tool said hello."]
    p = Peer({"mcp_servers": {"toy": toy}}, scripts, env={})
    ev = p.stream({"messages": [{"role": "user", "content": "hi"}], "stream": True, "strata_mcp": True})
    kinds = [e["strata_mcp"]["event"] for e in ev if isinstance(e, dict) and "strata_mcp" in e]
    check("events start/call/result", kinds == ["start", "call", "result"], kinds)
    text = "".join(e["choices"][0]["delta"].get("content", "") for e in ev if isinstance(e, dict) and "choices" in e)
    check("content", text == "Let me check.The tool said hello.", text)
    r = p.chat({"messages": [{"role": "user", "content": "hi"}], "strata_mcp": True},
               headers={"content-type": "text/plain"})
    check("415", r.status_code == 415, r.text)
    r = p.chat({"messages": [{"role": "user", "content": "hi"}], "strata_mcp": True},
               headers={"origin": "http://evil.example"})
    check("403 foreign origin", r.status_code == 403, r.text)
    p.stop()

    # ---- die, timeout, restart
    p = Peer({"mcp_servers": {"toy": toy}, "mcp": {"timeout_s": 1.5}},
             [call_script("toy__die"), "</think>\n\nok", call_script("toy__sleep", seconds=3), "</think>\n\nok"],
             args=[])
    r = p.chat({"messages": [{"role": "user", "content": "hi"}], "strata_mcp": True}).json()
    res = r["choices"][0]["message"]["strata_mcp"][-1]
    check("died", "the server stopped (exit code 3): dying on purpose" in res["text"], res)
    st = p.c.get("/mcp").json()["servers"][0]["status"]
    check("stopped", st == "stopped", st)
    t0 = time.time()
    r = p.chat({"messages": [{"role": "user", "content": "hi"}], "strata_mcp": True}).json()
    res = r["choices"][0]["message"]["strata_mcp"][-1]
    check("timeout", res["text"] == "error: tools/call timed out after 1.5 s", res)
    check("timeout quick", time.time() - t0 < 5)
    p.stop()

    # ---- pictures, references, lifting
    cfg = {"mcp_servers": {"toy": toy}, "mcp": {"image_results": True}, "vision": {}}
    p = Peer(cfg, [call_script("toy__pic", count=5), "</think>\n\nok"])
    r = p.chat({"messages": [{"role": "user", "content": "hi"}], "strata_mcp": True}).json()
    res = r["choices"][0]["message"]["strata_mcp"][-1]
    check("4 media", len(res.get("media", [])) == 4, res)
    name = res["media"][0]["url"].split("/")[-1]
    ok = p.c.get(f"/tool-media/{name}")
    check("served", ok.status_code == 200 and ok.headers["content-type"] == "image/png")
    tool_msg = {"role": "tool", "tool_call_id": "c1",
                "content": [{"type": "text", "text": "r"},
                            {"type": "image_url", "image_url": {"url": f"strata-tool-media:{name}"}}]}
    base = [{"role": "user", "content": "hi"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
                                                                 "function": {"name": "x", "arguments": "{}"}}]}]
    r1 = p.chat({"messages": base + [tool_msg]}).json()
    check("ref resolves", "usage" in r1, r1)
    bad = dict(tool_msg, content=[{"type": "image_url", "image_url": {"url": "strata-tool-media:../x.png"}}])
    check("bad ref 400", p.chat({"messages": base + [bad]}).status_code == 400)
    b64 = base64.b64encode(png(640, 360)).decode()
    lifted = p.chat({"messages": base + [{"role": "tool", "tool_call_id": "c1", "content": "see " + b64}]}).json()
    plain = p.chat({"messages": base + [{"role": "tool", "tool_call_id": "c1", "content": "see "}]}).json()
    note = f"[image (image/png, {len(base64.b64decode(b64)):,} bytes)]"
    diff = lifted["usage"]["prompt_tokens"] - plain["usage"]["prompt_tokens"]
    check("lifted 640x360 = 299 tokens", diff == len(note.encode()) + 2 + 299, diff)
    p.stop()
    print(f"{len(FAILS)} failed" if FAILS else "all passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
