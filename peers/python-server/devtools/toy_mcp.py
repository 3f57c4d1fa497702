"""A toy MCP server for trying the peer's hub by hand (stdio, or Streamable HTTP with --http PORT):
text, errors, sleeps, big results, a crash, and pictures of a chosen format, size and count."""

import asyncio
import base64
import io
import os
import sys

import mcp_types as types
from mcp.server.mcpserver import MCPServer
from PIL import Image

server = MCPServer("toy", version="0.1")


def picture(w, h, fmt, colour):
    buf = io.BytesIO()
    Image.new("RGB", (w, h), colour).save(buf, format={"jpg": "JPEG"}.get(fmt, fmt.upper()))
    return buf.getvalue()


@server.tool(description="Echo the text back.")
def echo(text: str) -> str:
    return text


@server.tool()
def add(a: int, b: int) -> str:
    return str(a + b)


@server.tool(description="Fail on purpose.")
def fail() -> str:
    raise ValueError("it failed on purpose")


@server.tool()
async def sleep(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "slept"


@server.tool()
def big(n: int) -> str:
    return "y" * n


@server.tool()
def die() -> str:
    sys.stderr.write("dying on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool(description="Pictures of a format, size and count.")
def pic(w: int = 64, h: int = 48, fmt: str = "png", count: int = 1) -> list:
    out = [types.TextContent(type="text", text=f"{count} picture(s)")]
    for i in range(count):
        data = picture(w, h, fmt, (40 * i % 255, 100, 200))
        mime = {"png": "image/png", "jpg": "image/jpeg", "webp": "image/webp", "gif": "image/gif"}[fmt]
        out.append(types.ImageContent(type="image", data=base64.b64encode(data).decode(), mime_type=mime))
    return out


@server.tool(description="Every kind of block.")
def mixed() -> list:
    png = base64.b64encode(picture(30, 20, "png", (255, 0, 0))).decode()
    return [
        types.TextContent(type="text", text="before"),
        types.ImageContent(type="image", data=png, mime_type="image/jpeg"),
        types.EmbeddedResource(type="resource", resource=types.BlobResourceContents(
            uri="file:///x.png", mime_type="image/png", blob=png)),
        types.EmbeddedResource(type="resource", resource=types.BlobResourceContents(
            uri="file:///x.bin", mime_type="application/octet-stream", blob=png)),
        types.ImageContent(type="image", data=base64.b64encode(b"<svg xmlns='http://www.w3.org/2000/svg'/>").decode(),
                           mime_type="image/svg+xml"),
        types.AudioContent(type="audio", data="AAAA", mime_type="audio/wav"),
        types.ResourceLink(type="resource_link", name="a  name", uri="https://example.com/x"),
        types.TextContent(type="text", text="after"),
    ]


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
