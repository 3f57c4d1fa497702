"""Small helpers about JSON values: strict parsing, compact dumping, secret masking,
integer-valued numbers and thousands separators."""

import json

MAX_EXACT_INT = 2 ** 53
SECRET_KEYS = ("headers", "env", "api_key")


class NotJson(ValueError):
    """Raised for a text that is not strict JSON (NaN and Infinity are not JSON)."""


def _no_constants(name):
    raise NotJson(f"{name} is not JSON")


def loads(text):
    """Parse strict JSON text (refusing NaN, Infinity and -Infinity)."""
    return json.loads(text, parse_constant=_no_constants)


def dumps(value):
    """Compact JSON, non-ASCII kept, as a wire or log value."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def mask(value, secret=False):
    """A copy of value with every string under a secret key (at any depth) made "***"."""
    if isinstance(value, dict):
        return {k: mask(v, secret or k in SECRET_KEYS) for k, v in value.items()}
    if isinstance(value, list):
        return [mask(v, secret) for v in value]
    if isinstance(value, str) and secret:
        return "***"
    return value


def shown(path, value):
    """The value as shown in a startup message for the key path (a dotted name)."""
    secret = any(part in SECRET_KEYS for part in path.split("."))
    return dumps(mask(value, secret))


def int_value(value):
    """The integer an integer-valued JSON number holds, or None (booleans, fractions,
    and numbers written with a fraction or exponent past 2^53 are not integers)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        if not value.is_integer() or abs(value) > MAX_EXACT_INT:
            return None
        return int(value)
    return None


def num_value(value):
    """The number a JSON number holds (never a boolean), or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def thousands(n):
    """An integer written with thousands separators: 12000 -> '12,000'."""
    return f"{n:,}"


def count_values(value, limit):
    """True when value holds more than limit JSON values (counted depth first, stopping early)."""
    count = 0
    stack = [value]
    while stack:
        v = stack.pop()
        count += 1
        if count > limit:
            return True
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False
