"""Rendering a prompt ChatML style and counting its tokens (SPEC 4.8): one token per UTF-8
byte, one per special token, and `<|vision_start|>` N×`<|image_pad|>` `<|vision_end|>` per
picture. Only the count is needed by the mock engine, so the count is what is computed."""

import json

from . import jsonvals
from .vision import ImageTokens

TOOLS_HEAD = ("\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
              "You are provided with function signatures within <tools></tools> XML tags:\n<tools>")
TOOLS_TAIL = ("\n</tools>\n\nTo call a function, write:\n<tool_call>\n<function=NAME>\n<parameter=KEY>\n"
              "VALUE\n</parameter>\n</function>\n</tool_call>")
GENERATION_PROMPT = 1 + len(b"assistant") + 1   # <|im_start|>assistant\n


def nbytes(text):
    return len(text.encode("utf-8", "surrogatepass"))


def parts_tokens(parts):
    n = 0
    for p in parts:
        if isinstance(p, str):
            n += nbytes(p)
        elif isinstance(p, ImageTokens):
            n += 2 + p.n
    return n


def tools_tokens(tools):
    if not tools:
        return 0
    text = TOOLS_HEAD + "".join("\n" + json.dumps(t, ensure_ascii=False) for t in tools) + TOOLS_TAIL
    return nbytes(text)


def call_tokens(name, args):
    """4.8j: an assistant's call as the model writes it."""
    text = f"\n\n<tool_call>\n<function={name}>\n"
    if isinstance(args, dict):
        for k, v in args.items():
            value = v if isinstance(v, str) else jsonvals.dumps(v)
            text += f"<parameter={k}>\n{value}\n</parameter>\n"
    text += "</function>\n</tool_call>"
    return nbytes(text)


def turn_tokens(role, body):
    return 1 + len(role) + 1 + body + 1 + 1


def count(messages, tools):
    """Tokens of the prompt: messages (role, parts, tool_calls) and the offered tools."""
    total, i = 0, 0
    if messages and messages[0].role == "system":
        total += turn_tokens("system", parts_tokens(messages[0].parts) + tools_tokens(tools))
        i = 1
    elif tools:
        total += turn_tokens("system", tools_tokens(tools))
    while i < len(messages):
        m = messages[i]
        if m.role == "tool":
            body = 0
            while i < len(messages) and messages[i].role == "tool":
                body += len(b"\n<tool_response>\n") + parts_tokens(messages[i].parts) + len(b"\n</tool_response>")
                i += 1
            total += 1 + len(b"user") + body + 2
            continue
        body = parts_tokens(m.parts)
        for name, args in m.tool_calls:
            body += call_tokens(name, args)
        total += turn_tokens(m.role, body)
        i += 1
    return total + GENERATION_PROMPT


def text_bytes(messages):
    """4.7d: the text alone, one token a byte."""
    return sum(nbytes(p) for m in messages for p in m.parts if isinstance(p, str))
