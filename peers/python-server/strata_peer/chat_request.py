"""Reading the body of `POST /v1/chat/completions` (SPEC 4.1, 4.2, 4.10, 6.11): every known
field checked, messages and their parts made into one internal shape."""

import json
from dataclasses import dataclass, field

from . import jsonvals
from .errors import ApiError, bad_request

MAX_VALUES = 1_000_000
ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant", "tool": "tool"}
KNOWN = ("messages", "stream", "max_tokens", "max_completion_tokens", "tools", "tool_choice",
         "response_format", "strata_mcp", "model")


@dataclass
class ImageSource:
    """Where an image part's bytes are: a URL (data:, http, a reference, a path) or base64."""
    url: str | None = None
    b64: str | None = None


@dataclass
class Message:
    role: str                       # system, user, assistant or tool (developer is system)
    parts: list                     # str, ImageSource, or (later) a resolved Picture
    tool_calls: list = field(default_factory=list)  # (name, arguments object or None)
    index: int = 0


@dataclass
class ChatRequest:
    messages: list
    stream: bool = False
    max_tokens: int | None = None
    tools: list = field(default_factory=list)   # the request's own tools, OpenAI shape
    tool_choice: object = None
    structured: bool = False
    strata_mcp: bool = False
    model: object = None


def _max_tokens(name, value):
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        if value in (0, -1):
            return None
        if value > 0:
            return value
    raise bad_request(f"{name} must be a positive integer (or 0, -1 or null for the rest of the context)")


def _image_part(where, part):
    kind = part.get("type")
    if kind in ("image_url", "input_image"):
        v = part.get("image_url")
        if isinstance(v, dict):
            v = v.get("url")
        if not isinstance(v, str):
            raise bad_request(f"{where}.image_url: expected a URL string or {{\"url\": ...}}")
        return ImageSource(url=v)
    src = part.get("source")
    if not isinstance(src, dict):
        raise bad_request(f"{where}.source: expected an object")
    if src.get("type") == "base64":
        if not isinstance(src.get("data"), str):
            raise bad_request(f"{where}.source.data: expected a base64 string")
        return ImageSource(b64=src["data"])
    if src.get("type") == "url" and isinstance(src.get("url"), str):
        return ImageSource(url=src["url"])
    raise bad_request(f"{where}.source: expected a base64 or url source")


def _parts(where, content):
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        raise bad_request(f"{where}: expected a string, null or a list of parts")
    out = []
    for j, part in enumerate(content):
        pw = f"{where}[{j}]"
        if isinstance(part, str):
            out.append(part)
            continue
        if not isinstance(part, dict):
            raise bad_request(f"{pw}: expected a part object")
        kind = part.get("type")
        if kind in ("text", "input_text", "output_text"):
            if not isinstance(part.get("text"), str):
                raise bad_request(f"{pw}.text: expected a string")
            out.append(part["text"])
        elif kind in ("image_url", "input_image", "image"):
            out.append(_image_part(pw, part))
        else:
            raise bad_request(f"{pw}.type: unknown part type {jsonvals.dumps(kind)[:80]}")
    return out


def _tool_calls(where, calls):
    if calls is None:
        return []
    if not isinstance(calls, list):
        raise bad_request(f"{where}: expected a list")
    out = []
    for j, c in enumerate(calls):
        cw = f"{where}[{j}]"
        fn = c.get("function") if isinstance(c, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise bad_request(f"{cw}.function.name: expected a string")
        args = fn.get("arguments")
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                args = None
        out.append((fn["name"], args if isinstance(args, dict) else None))
    return out


def _messages(value):
    if not isinstance(value, list) or not value:
        raise bad_request("messages: expected a non-empty list of messages")
    out = []
    for i, m in enumerate(value):
        where = f"messages[{i}]"
        if not isinstance(m, dict):
            raise bad_request(f"{where}: expected an object {{role, content}}")
        role = m.get("role")
        if not isinstance(role, str) or role not in ROLES:
            raise bad_request(f"{where}.role: expected system, developer, user, assistant or tool")
        msg = Message(ROLES[role], _parts(f"{where}.content", m.get("content")), index=i)
        if "tool_calls" in m:
            msg.tool_calls = _tool_calls(f"{where}.tool_calls", m.get("tool_calls"))
        out.append(msg)
    return out


def _tools(value):
    if value is None:
        return []
    if not isinstance(value, list):
        raise bad_request("tools: expected a list of {type: function, function: {...}}")
    for i, t in enumerate(value):
        fn = t.get("function") if isinstance(t, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise bad_request(f"tools[{i}].function.name: expected a string")
    return value


def _structured(value):
    if value is None:
        return False
    if not isinstance(value, dict):
        raise bad_request("response_format: expected an object {type}")
    kind = value.get("type")
    if kind not in ("text", "json_object", "json_schema"):
        raise bad_request("response_format.type: expected text, json_object or json_schema")
    return kind != "text"


def parse(body):
    """The ChatRequest of a body already parsed as JSON."""
    if not isinstance(body, dict):
        raise bad_request("the request is malformed (expected a JSON object)")
    # 4.10g: the known fields together (the body object itself counts too)
    if jsonvals.count_values([body[k] for k in KNOWN if k in body], MAX_VALUES):
        raise ApiError(413, "invalid_request_error", f"the request holds more than {MAX_VALUES} JSON values")
    if "messages" not in body:
        raise bad_request("messages: the field is missing")
    req = ChatRequest(messages=_messages(body["messages"]))
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise bad_request("stream: expected true or false")
    req.stream = bool(stream)
    if "max_tokens" in body and body["max_tokens"] is not None:
        req.max_tokens = _max_tokens("max_tokens", body["max_tokens"])
        _max_tokens("max_completion_tokens", body.get("max_completion_tokens"))
    else:
        req.max_tokens = _max_tokens("max_completion_tokens", body.get("max_completion_tokens"))
    req.tools = _tools(body.get("tools"))
    req.tool_choice = body.get("tool_choice")
    if req.tool_choice is not None and not isinstance(req.tool_choice, (str, dict)):
        raise bad_request("tool_choice: expected a string or an object")
    req.structured = _structured(body.get("response_format"))
    req.strata_mcp = body.get("strata_mcp") is True
    req.model = body.get("model")
    if req.model is not None and not isinstance(req.model, str):
        raise bad_request("model: expected a string")
    if req.structured and req.tools:
        raise bad_request("a structured response_format with tools is not supported")
    return req


def forced_tool_choice(choice):
    return choice == "required" or isinstance(choice, dict)
