"""The byte tokenizer and the scripted mock engine (SPEC 4.8b, 4.9): one token per UTF-8
byte plus special tokens; scripts replayed one per engine pass, the last repeating."""

import asyncio
import re
import threading

SPECIALS = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|vision_start|>", "<|image_pad|>", "<|vision_end|>"]
SPECIAL_ID = {s: 256 + i for i, s in enumerate(SPECIALS)}
IM_END = SPECIAL_ID["<|im_end|>"]
DEFAULT_SCRIPT = "Thinking about it.</think>\n\nHello from the mock engine."
_SPECIAL_RE = re.compile("|".join(re.escape(s) for s in SPECIALS))


def encode_script(text):
    """A script's tokens: its bytes, a special token's name read as that token."""
    ids, pos = [], 0
    for m in _SPECIAL_RE.finditer(text):
        ids.extend(text[pos:m.start()].encode("utf-8"))
        ids.append(SPECIAL_ID[m.group(0)])
        pos = m.end()
    ids.extend(text[pos:].encode("utf-8"))
    return ids


class ScriptCursor:
    """Which script comes next for one list of scripts."""

    def __init__(self, scripts):
        self.scripts = scripts or [DEFAULT_SCRIPT]
        self.next = 0

    def take(self):
        i = min(self.next, len(self.scripts) - 1)
        self.next = i + 1
        return self.scripts[i]


class MockEngine:
    def __init__(self, engine_settings):
        self.settings = engine_settings
        self._lock = threading.Lock()
        self._global = ScriptCursor(engine_settings.scripts)
        self._sets = {name: ScriptCursor(s) for name, s in engine_settings.script_sets.items()}

    def cursor_for(self, model):
        """The cursor a request uses: per request with restart_per_request, else shared."""
        if self.settings.restart_per_request:
            if isinstance(model, str) and model in self.settings.script_sets:
                return ScriptCursor(self.settings.script_sets[model])
            return ScriptCursor(self.settings.scripts)
        if isinstance(model, str) and model in self._sets:
            return self._sets[model]
        return self._global

    def next_script(self, cursor):
        with self._lock:
            return cursor.take()

    async def generate(self, script, max_new):
        """Yield the token ids of one pass: the script then <|im_end|>, at most max_new."""
        ids = encode_script(script) + [IM_END]
        delay = self.settings.delay_ms / 1000.0
        for n, tid in enumerate(ids):
            if n >= max_new:
                return
            if delay:
                await asyncio.sleep(delay)
            elif n % 256 == 255:
                await asyncio.sleep(0)
            yield tid
            if tid == IM_END:
                return
