"""The run configuration (SPEC §1): reading the file, checking every key, the defaults,
and the command line flags that win over the file."""

import os
from dataclasses import dataclass, field

from . import jsonvals
from .mcp_config import read_servers

PROG = "reference-server"


class StartupError(Exception):
    """Stops startup: one line on stderr and an exit code."""

    def __init__(self, line, code=2):
        super().__init__(line)
        self.line = line
        self.code = code


@dataclass
class McpSettings:
    timeout_s: float = 60
    start_timeout_s: float = 120
    max_result_chars: int = 20000
    max_rounds: int = 8
    image_results: bool = False
    max_pictures_per_result: int = 4
    max_picture_chars: int = 24_000_000
    max_tool_pages: int = 100
    max_tools_per_server: int = 1000
    retry_failed_s: float = 10


@dataclass
class VisionSettings:
    backend: str = "geometry"
    device: str = "cpu"
    min_pixels: int = 3136
    max_pixels: int = 1003520


@dataclass
class EngineSettings:
    scripts: list = field(default_factory=list)
    script_sets: dict = field(default_factory=dict)
    delay_ms: int = 0
    restart_per_request: bool = False
    max_context: int = 262144


@dataclass
class Settings:
    config_path: str = ""
    host: str = "127.0.0.1"
    port: int = 8095
    model: str = "mock"
    api_key: str | None = None
    allowed_hosts: list = field(default_factory=list)
    trusted_origins: list = field(default_factory=list)
    max_body_mib: int = 256
    max_connections: int = 1024
    header_timeout_s: int = 10
    body_timeout_s: int = 60
    mcp: McpSettings = field(default_factory=McpSettings)
    servers: dict = field(default_factory=dict)
    vision: VisionSettings | None = None
    engine: EngineSettings = field(default_factory=EngineSettings)
    web_dir: str = ""
    warnings: list = field(default_factory=list)


def refuse(key, value, expected):
    raise StartupError(f"{PROG}: config {key}={jsonvals.shown(key, value)}: {expected}")


def warn_unknown(settings, key, value):
    settings.warnings.append(f"{PROG}: config {key}={jsonvals.shown(key, value)}: unknown key, ignored")


def _int(key, value, minimum):
    n = jsonvals.int_value(value)
    if n is None or n < minimum:
        refuse(key, value, f"expected an integer >= {minimum}")
    return n


def _seconds(key, value):
    n = jsonvals.num_value(value)
    if n is None or not n > 0 or n == float("inf"):
        refuse(key, value, "expected a number of seconds > 0")
    return n


def _bool(key, value):
    if not isinstance(value, bool):
        refuse(key, value, "expected true or false")
    return value


def _str(key, value):
    if not isinstance(value, str):
        refuse(key, value, "expected a string")
    return value


def _str_list(key, value):
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        refuse(key, value, "expected a list of strings")
    return list(value)


def read_json_file(flag, path):
    """Read a JSON object from a file, a UTF-8 byte-order mark allowed."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise StartupError(f"{PROG}: {flag} {path}: {e.strerror or e}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise StartupError(f"{PROG}: {flag} {path}: not UTF-8 ({e.reason} at byte {e.start})")
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        value = jsonvals.loads(text)
    except ValueError as e:
        raise StartupError(f"{PROG}: {flag} {path}: not JSON ({e})")
    if not isinstance(value, dict):
        raise StartupError(f"{PROG}: {flag} {path}: expected a JSON object")
    return value


def _read_mcp(settings, block):
    if not isinstance(block, dict):
        refuse("mcp", block, "expected an object")
    m = settings.mcp
    for k, v in block.items():
        key = f"mcp.{k}"
        if k in ("timeout_s", "start_timeout_s", "retry_failed_s"):
            setattr(m, k, _seconds(key, v))
        elif k in ("max_result_chars", "max_rounds", "max_pictures_per_result", "max_picture_chars",
                   "max_tool_pages", "max_tools_per_server"):
            setattr(m, k, _int(key, v, 1))
        elif k == "image_results":
            m.image_results = _bool(key, v)
        else:
            warn_unknown(settings, key, v)


def _read_vision(settings, block):
    if not isinstance(block, dict):
        refuse("vision", block, "expected an object {backend, device, min_pixels, max_pixels}")
    v = VisionSettings()
    for k, val in block.items():
        key = f"vision.{k}"
        if k == "backend":
            if val not in ("geometry", "torch"):
                refuse(key, val, 'expected "geometry" or "torch"')
            v.backend = val
        elif k == "device":
            if val not in ("cpu", "cuda"):
                refuse(key, val, 'expected "cpu" or "cuda"')
            v.device = val
        elif k in ("min_pixels", "max_pixels"):
            setattr(v, k, _int(key, val, 1))
        else:
            warn_unknown(settings, key, val)
    if v.backend == "torch":
        refuse("vision.backend", "torch", "this build has no torch backend (it was built without the torch feature)")
    if v.device == "cuda":
        refuse("vision.device", "cuda", 'the "geometry" backend runs on no device: use "cpu"')
    if v.max_pixels < 784:
        refuse("vision.max_pixels", v.max_pixels, "expected at least 784 (one 28 x 28 patch)")
    if v.max_pixels < v.min_pixels:
        refuse("vision.max_pixels", v.max_pixels, f"expected at least vision.min_pixels ({v.min_pixels})")
    settings.vision = v


def _read_engine(settings, block):
    if not isinstance(block, dict):
        refuse("engine", block, "expected an object")
    e = settings.engine
    for k, v in block.items():
        key = f"engine.{k}"
        if k == "scripts":
            e.scripts = _str_list(key, v)
        elif k == "script_sets":
            if not isinstance(v, dict):
                refuse(key, v, "expected an object of lists of strings")
            for name, scripts in v.items():
                if not isinstance(scripts, list) or not scripts or not all(isinstance(s, str) for s in scripts):
                    refuse(f"{key}.{name}", scripts, "expected a list of at least one string")
            e.script_sets = {name: list(s) for name, s in v.items()}
        elif k == "delay_ms":
            e.delay_ms = _int(key, v, 0)
        elif k == "restart_per_request":
            e.restart_per_request = _bool(key, v)
        elif k == "max_context":
            e.max_context = _int(key, v, 1)
        else:
            warn_unknown(settings, key, v)


def _read_top(settings, cfg):
    file_key = None
    for k, v in cfg.items():
        if k == "model":
            if not isinstance(v, str) or not v.strip():
                refuse(k, v, "expected a name holding a character that is not whitespace")
            settings.model = v
        elif k == "host":
            if not isinstance(v, str) or not v:
                refuse(k, v, "expected a non-empty host name or address")
            settings.host = v
        elif k == "port":
            settings.port = _port(k, v)
        elif k == "api_key":
            file_key = _str(k, v)
        elif k in ("allowed_hosts", "trusted_origins"):
            setattr(settings, k, _str_list(k, v))
        elif k == "max_body_mib":
            settings.max_body_mib = _int(k, v, 1)
        elif k in ("max_connections", "header_timeout_s", "body_timeout_s"):
            setattr(settings, k, _int(k, v, 1))
        elif k == "mcp":
            _read_mcp(settings, v)
        elif k in ("mcp_servers", "mcpServers"):
            pass  # read below, in their order
        elif k == "vision":
            _read_vision(settings, v)
        elif k == "engine":
            _read_engine(settings, v)
        else:
            warn_unknown(settings, k, v)
    return file_key


def _port(key, value):
    n = jsonvals.int_value(value)
    if n is None or not 0 <= n <= 65535:
        refuse(key, value, "expected a port number from 0 to 65535")
    return n


def build(args):
    """The settings from the parsed command line (argparse namespace)."""
    settings = Settings()
    settings.config_path = os.path.abspath(args.config)
    cfg = read_json_file("--config", args.config)
    file_key = _read_top(settings, cfg)
    settings.servers = read_servers(cfg, args.mcp_config, refuse, read_json_file, StartupError, PROG)
    if args.host is not None:
        settings.host = args.host
    if args.port is not None:
        if not 0 <= args.port <= 65535:
            raise StartupError(f"{PROG}: --port {args.port}: expected a port number from 0 to 65535")
        settings.port = args.port
    if args.script:
        settings.engine.scripts = list(args.script)
    key = args.api_key
    if key is None:
        key = os.environ.get("STRATA_API_KEY")
    if key is None:
        key = file_key
    if key is not None:
        key = key.strip()
        if not key:
            raise StartupError(f"{PROG}: an API key was given but it is empty")
    settings.api_key = key
    env_hosts = os.environ.get("STRATA_ALLOWED_HOSTS", "")
    settings.allowed_hosts += [h.strip() for h in env_hosts.split(",") if h.strip()]
    settings.web_dir = args.web_dir or os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "web")
    return settings
