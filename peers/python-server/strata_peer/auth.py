"""Authentication, the Host check and the Origin checks (SPEC §2)."""

import hmac
import ipaddress

from .errors import ApiError

AUTH_MESSAGE = "missing or wrong API key"


def header(scope, name):
    """The raw bytes of the first header of that (lower-case) name, or None."""
    for k, v in scope["headers"]:
        if k == name:
            return v
    return None


def sent_key(scope):
    """The key bytes the client sent: a non-empty Bearer token, else x-api-key, else None."""
    auth = header(scope, b"authorization")
    if auth is not None:
        auth = auth.strip()
        if auth[:7].lower() == b"bearer " or auth.lower() == b"bearer":
            token = auth[7:].strip()
            if token:
                return token
    key = header(scope, b"x-api-key")
    if key is not None:
        return key.strip()
    return None


class KeyCheck:
    """Compares a sent key with the configured one in constant time for a given length."""

    def __init__(self, key):
        self.key = key
        self.forms = []
        if key is not None:
            self.forms.append(key.encode("utf-8"))
            try:
                latin = key.encode("latin-1")
                if latin != self.forms[0]:
                    self.forms.append(latin)
            except UnicodeEncodeError:
                pass

    def ok(self, sent):
        if sent is None:
            return False
        good = False
        for form in self.forms:
            good |= hmac.compare_digest(sent, form)
        return good

    def check(self, scope):
        if not self.ok(sent_key(scope)):
            raise ApiError(401, "authentication_error", AUTH_MESSAGE)


def split_host(host):
    """The name part of a Host value (no port, no IPv6 brackets), lower-case."""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        return host[1:end] if end > 0 else host
    name, sep, port = host.rpartition(":")
    if sep and port and all("0" <= ch <= "9" for ch in port):
        host = name  # 2.5i: the port is a last `:` followed by digits only
    return host  # a trailing dot stays: `localhost.` is not `localhost` (2.6c: names compared whole)


def is_ip(name):
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


def is_loopback_name(name):
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def quoted(text):
    return text[:200]


class HostRules:
    """The Host and Origin rules that apply while no API key is set."""

    def __init__(self, settings):
        self.bound = settings.host.lower().strip("[]")
        self.allowed = {h.lower().strip() for h in settings.allowed_hosts}
        self.trusted = {o.rstrip("/").lower() for o in settings.trusted_origins}

    def host_ok(self, name):
        return (is_ip(name) or name == "localhost" or name.endswith(".localhost")
                or name == self.bound or name in self.allowed)

    def check_host(self, scope):
        raw = header(scope, b"host")
        if raw is None:
            return
        host = raw.decode("latin-1")
        if not self.host_ok(split_host(host)):
            raise ApiError(403, "forbidden",
                           f"Host '{quoted(host)}' is not allowed (DNS rebinding protection): "
                           "add it to the config's allowed_hosts")

    def check_origin(self, scope):
        raw = header(scope, b"origin")
        if raw is None:
            return
        origin = raw.decode("latin-1").strip()
        low = origin.lower()
        if low != "null" and not (low.startswith("http://") or low.startswith("https://")):
            return  # another scheme: an extension's page, file://
        if low != "null":
            rest = low.split("://", 1)[1].rstrip("/")
            own = header(scope, b"host")
            if own is not None and rest == own.decode("latin-1").strip().lower():
                return
            name = split_host(rest.split("/", 1)[0])
            if is_loopback_name(name) or name in self.allowed or name == self.bound and self.bound:
                return
            if low.rstrip("/") in self.trusted:
                return
        raise ApiError(403, "forbidden",
                       f"Origin '{quoted(origin)}' is not allowed: add it to the config's trusted_origins")

    def own_page(self, scope):
        """2.7: a request asking for MCP tools comes from the server's own page."""
        ctype = header(scope, b"content-type")
        media = (ctype or b"").decode("latin-1").split(";", 1)[0].strip().lower()
        if media != "application/json":
            raise ApiError(415, "invalid_request_error", "send application/json")
        raw = header(scope, b"origin")
        if raw is None:
            return
        origin = raw.decode("latin-1").strip().rstrip("/")
        own = header(scope, b"host")
        after = origin.split("://", 1)[1] if "://" in origin else None
        if own is not None and after is not None and after.lower() == own.decode("latin-1").strip().lower():
            return
        if origin.lower() in self.trusted:
            return
        raise ApiError(403, "forbidden", "MCP tools can be used only from the server's own page "
                                         "(or an origin in the config's trusted_origins)")
