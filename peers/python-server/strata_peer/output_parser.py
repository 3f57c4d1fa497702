"""Reading the model's output of one pass as it arrives (SPEC 4.6, 4.12, 6.9): reasoning up to
`</think>`, content with its whitespace rules, and tool calls in the
`<tool_call><function=NAME><parameter=K>V</parameter></function></tool_call>` form."""

import json
import re

THINK_END = "</think>"
CALL_OPEN = "<tool_call>"
CALL_CLOSE = "</tool_call>"
_FUNC_RE = re.compile(r"\s*<function=([^>\n]*)>")
_PARAM_RE = re.compile(r"<parameter=([^>\n]*)>(.*?)</parameter>", re.DOTALL)


class ParsedCall:
    def __init__(self, index):
        self.index = index
        self.name = None
        self.params = []      # (key, raw text value) in the order written
        self.json_args = None  # arguments of a JSON-form call
        self.complete = False


def _partial_suffix(text, marker):
    """Length of the longest end of text that is a proper beginning of marker."""
    for k in range(min(len(marker) - 1, len(text)), 0, -1):
        if marker.startswith(text[-k:]):
            return k
    return 0


class OutputParser:
    """Feed text pieces; each feed returns events:
    ("reasoning", text), ("content", text), ("start", call), ("done", call).

    4.9f: a pass whose script holds `</think>` starts in reasoning; any other is content from its
    first token. Both stream as they come: only what could still be the start of a marker
    (`</think>`, `<tool_call>`) or whitespace that 4.6b-d drop is held back."""

    def __init__(self, reasoning_first=True):
        self.phase = "think" if reasoning_first else "content"
        self.pre = ""
        self.reasoning_begun = False  # whether a leading `<think>` can no longer come
        self.buf = ""
        self.content_begun = False    # 4.6b: only the content's start is stripped
        self.calls = []
        self.call = None

    def _reasoning(self, events, final):
        """Emit the reasoning held in self.pre that can no longer be part of a marker."""
        if not self.reasoning_begun:
            if "<think>".startswith(self.pre) and not final:
                return  # could still become the leading <think> tag
            if self.pre.startswith("<think>"):
                self.pre = self.pre[len("<think>"):]
            self.reasoning_begun = True
        keep = 0 if final else _partial_suffix(self.pre, THINK_END)
        out = self.pre[: len(self.pre) - keep]
        self.pre = self.pre[len(self.pre) - keep:]
        if out:
            events.append(("reasoning", out))

    def feed(self, text):
        events = []
        if self.phase == "think":
            self.pre += text
            i = self.pre.find(THINK_END)
            if i < 0:
                self._reasoning(events, final=False)
                return events
            text = self.pre[i + len(THINK_END):]
            self.pre = self.pre[:i]
            self._reasoning(events, final=True)
            self.pre = ""
            self.phase = "content"
        self.buf += text
        self._run(events, final=False)
        return events

    def finish(self):
        """End of pass: the events still held back; incomplete calls stay incomplete."""
        events = []
        if self.phase == "think":
            # cut (by max_tokens) before `</think>`: what came is reasoning
            self._reasoning(events, final=True)
            self.phase = "content"
        self._run(events, final=True)
        return events

    def _emit_content(self, events, text):
        if not self.content_begun:
            text = text.lstrip()
        if text:
            self.content_begun = True
            events.append(("content", text))

    def _run(self, events, final):
        while True:
            if self.phase == "content":
                i = self.buf.find(CALL_OPEN)
                if i >= 0:
                    self._emit_content(events, self.buf[:i].rstrip())
                    self.buf = self.buf[i + len(CALL_OPEN):]
                    self.call = ParsedCall(len(self.calls))
                    self.calls.append(self.call)
                    self.phase = "call"
                    continue
                if final:
                    self._emit_content(events, self.buf.rstrip())
                    self.buf = ""
                    return
                k = _partial_suffix(self.buf, CALL_OPEN)
                body = self.buf[: len(self.buf) - k]
                keep_from = len(body.rstrip())
                self._emit_content(events, self.buf[:keep_from])
                self.buf = self.buf[keep_from:]
                return
            # inside a call
            call = self.call
            if call.name is None:
                m = _FUNC_RE.match(self.buf)
                if m:
                    call.name = m.group(1).strip()
                    events.append(("start", call))
            j = self.buf.find(CALL_CLOSE)
            if j < 0:
                return
            body = self.buf[:j]
            self.buf = self.buf[j + len(CALL_CLOSE):]
            self._finish_call(call, body, events)
            self.phase = "content"
            self.call = None

    def _finish_call(self, call, body, events):
        if call.name is None:
            try:
                obj = json.loads(body)
            except ValueError:
                obj = None
            if isinstance(obj, dict) and isinstance(obj.get("name"), str):
                call.name = obj["name"]
                args = obj.get("arguments", obj.get("parameters", {}))
                if isinstance(args, str):
                    try:
                        args = json.loads(args)
                    except ValueError:
                        args = {}
                call.json_args = args if isinstance(args, dict) else {}
                events.append(("start", call))
            else:
                self.calls.remove(call)
                return
        for m in _PARAM_RE.finditer(body):
            value = m.group(2)
            if value.startswith("\n"):
                value = value[1:]
            if value.endswith("\n"):
                value = value[:-1]
            call.params.append((m.group(1).strip(), value))
        call.complete = True
        events.append(("done", call))


def read_arguments(call, schema):
    """6.4 / 4.12c: the call's arguments as an object, read by the tool's input schema:
    a `string` parameter stays text, any other value is JSON when it parses."""
    if call.json_args is not None:
        return dict(call.json_args)
    props = {}
    if isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
        props = schema["properties"]
    args = {}
    for key, raw in call.params:
        prop = props.get(key)
        ptype = prop.get("type") if isinstance(prop, dict) else None
        if ptype == "string" or (isinstance(ptype, list) and ptype == ["string"]):
            args[key] = raw
            continue
        try:
            args[key] = json.loads(raw)
        except ValueError:
            args[key] = raw
    return args
