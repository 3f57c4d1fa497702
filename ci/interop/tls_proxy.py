"""A loopback TLS terminator: accepts https on 127.0.0.1 with the given certificate and pipes every
connection to a plain-HTTP upstream, byte for byte (SSE included). For the hub's https tests: a remote
MCP server is https, and this puts any loopback MCP server behind a certificate the test made.
Prints `listening on https://127.0.0.1:PORT`.

Usage: tls_proxy.py UPSTREAM_HOST:PORT CERT.pem KEY.pem
"""

import asyncio
import ssl
import sys

UPSTREAM_HOST, UPSTREAM_PORT = sys.argv[1].rsplit(":", 1)


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ssl.SSLError):
        pass
    finally:
        writer.close()


async def handle(client_reader, client_writer):
    try:
        upstream_reader, upstream_writer = await asyncio.open_connection(UPSTREAM_HOST, int(UPSTREAM_PORT))
    except OSError:
        client_writer.close()
        return
    await asyncio.gather(pipe(client_reader, upstream_writer), pipe(upstream_reader, client_writer))


async def main():
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[2], sys.argv[3])
    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=context)
    port = server.sockets[0].getsockname()[1]
    print(f"listening on https://127.0.0.1:{port}", flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
