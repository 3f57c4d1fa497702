"""An MCP server built on the official Python SDK (mcp 2.x, class MCPServer), for the hub's interop
tests. Serves Streamable HTTP at /mcp on 127.0.0.1, on a port the system picks, and prints
`listening on http://127.0.0.1:PORT/mcp` once the socket is bound."""

import socket
import struct
import zlib

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.utilities.types import Image

server = MCPServer("python-interop")


@server.tool()
def shout(text: str) -> str:
    """Returns the text in capitals."""
    return text.upper()


@server.tool()
def red_square() -> Image:
    """Returns an 8x8 red PNG."""
    return Image(data=_red_png(8), format="png")


def _red_png(side: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * side for _ in range(side))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    print(f"listening on http://127.0.0.1:{port}/mcp", flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
