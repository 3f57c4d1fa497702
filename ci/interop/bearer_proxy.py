"""A loopback proxy that adds `Authorization: Bearer <token>` to every request, for running the official
MCP conformance suite (which sends no headers of its own) against vision-mcp's mandatory-token HTTP
transport. Streams responses as they come (SSE included). Prints `listening on http://127.0.0.1:PORT`.

Usage: bearer_proxy.py UPSTREAM_BASE TOKEN   (e.g. http://127.0.0.1:8000 "$VISION_MCP_TOKEN")
"""

import http.client
import http.server
import sys
import urllib.parse

UPSTREAM = urllib.parse.urlsplit(sys.argv[1])
TOKEN = sys.argv[2]
HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-authorization", "host"}


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def forward(self):
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        headers["Authorization"] = "Bearer " + TOKEN
        # Host is passed through as the client sent it, so the suite's dns-rebinding-protection scenario
        # reaches vision-mcp's own Host check (the proxy listens on loopback, as vision-mcp does).
        headers["Host"] = self.headers.get("host", UPSTREAM.netloc)
        upstream = http.client.HTTPConnection(UPSTREAM.hostname, UPSTREAM.port, timeout=60)
        upstream.request(self.command, self.path, body=body, headers=headers)
        response = upstream.getresponse()
        self.send_response(response.status)
        for key, value in response.getheaders():
            if key.lower() not in HOP and key.lower() != "content-length":
                self.send_header(key, value)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        while True:
            chunk = response.read1(65536) if hasattr(response, "read1") else response.read(65536)
            if not chunk:
                break
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        upstream.close()

    def relay(self):
        try:
            self.forward()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (the suite closes its SSE stream when it is done)

    do_GET = do_POST = do_DELETE = relay


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that hangs up is not an error worth a traceback here


server = Server(("127.0.0.1", 0), Proxy)
print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()
