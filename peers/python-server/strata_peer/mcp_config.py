"""Where MCP servers come from (SPEC 1.6): `mcp_servers`, then `mcpServers`, then the
`--mcp-config` file, each entry checked; a later name replaces an earlier one and
`"disabled": true` removes the name."""

from dataclasses import dataclass, field

from . import jsonvals

ENTRY_SHAPE = 'expected an object {command, args?, env?, cwd?} (stdio) or {url, headers?} (Streamable HTTP)'


@dataclass
class ServerEntry:
    name: str
    command: str | None = None
    args: list = field(default_factory=list)
    env: dict = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict = field(default_factory=dict)

    @property
    def transport(self):
        return "stdio" if self.command is not None else "http"


def _str_map(v):
    return isinstance(v, dict) and all(isinstance(x, str) for x in v.values())


def _entry(where, name, e, bad):
    """One entry, or None when it is disabled; bad(message) stops startup."""
    if not isinstance(e, dict):
        bad(ENTRY_SHAPE)
    if e.get("disabled") is True:
        return None
    if e.get("type") == "sse":
        bad('uses the old SSE transport ("type": "sse"); this server speaks Streamable HTTP')
    command, url = e.get("command"), e.get("url")
    if isinstance(command, str) and command:
        args = e.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            bad('"args" must be a list of strings')
        env = e.get("env", {})
        if not _str_map(env):
            bad('"env" must be an object of strings')
        cwd = e.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            bad('"cwd" must be a string')
        return ServerEntry(name=name, command=command, args=list(args), env=dict(env), cwd=cwd)
    if isinstance(url, str) and url:
        headers = e.get("headers", {})
        if not _str_map(headers):
            bad('"headers" must be an object of strings')
        return ServerEntry(name=name, url=url, headers=dict(headers))
    bad(ENTRY_SHAPE)


def _merge(servers, where_key, block, fail):
    if not isinstance(block, dict):
        fail(where_key, block, 'the MCP servers must be an object {"name": {...}}')
    for name, e in block.items():
        def bad(msg, name=name, e=e):
            fail(f"{where_key}.{name}", e, f"MCP server '{name}': {msg}")
        entry = _entry(where_key, name, e, bad)
        servers.pop(name, None)
        if entry is not None:
            servers[name] = entry


def read_servers(cfg, mcp_config_path, refuse, read_json_file, startup_error, prog):
    servers = {}
    for key in ("mcp_servers", "mcpServers"):
        if key in cfg:
            _merge(servers, f"{key}", cfg[key], refuse)
    if mcp_config_path:
        data = read_json_file("--mcp-config", mcp_config_path)
        block = data.get("mcpServers", data.get("mcp_servers"))
        if block is None:
            raise startup_error(f'{prog}: --mcp-config {mcp_config_path}: expected {{"mcpServers": {{...}}}}')

        def fail(key, value, msg):
            raise startup_error(f"{prog}: --mcp-config {mcp_config_path}: {key}={jsonvals.shown(key, value)}: {msg}")
        _merge(servers, "mcpServers", block, fail)
    return servers
