"""The vision path of one request (SPEC 4.13, 10, 12): each picture of the prompt becomes image
tokens by the geometry backend, or a note in a tool message, or a 400 elsewhere; references
are resolved inside the cache; URLs and paths are never fetched."""

import base64
import binascii
from dataclasses import dataclass

from . import pictures
from .errors import bad_request
from .lift import ALL_FORMATS, Lifted
from .media_cache import valid_name

REF_SCHEME = "strata-tool-media:"
MAX_PICTURES = 64
NO_ENCODER = "this server has no image encoder"


@dataclass
class ImageTokens:
    """A picture as the prompt holds it: N image tokens between vision_start and vision_end."""
    n: int


def note(reason):
    return f"[image omitted: {reason}]"


class Refused(Exception):
    """A picture that cannot be read; in a tool message it becomes a note."""


class RequestVision:
    """The pictures of one request: the encoder (or none), the 64-picture count, the cache."""

    def __init__(self, service):
        self.vision = service.settings.vision
        self.image_results = service.settings.mcp.image_results
        self.mcp_configured = bool(service.settings.servers)
        self.cache = service.cache
        self.count = 0

    # ----- one picture -----

    def _tokens(self, data, allowed):
        mime, w, h = pictures.read_picture(data, allowed)
        return ImageTokens(pictures.image_tokens(w, h, self.vision))

    def _counted(self):
        self.count += 1
        if self.count > MAX_PICTURES:
            raise Refused(f"the request holds more than {MAX_PICTURES} pictures")

    def picture_bytes(self, data, allowed=("image/png", "image/jpeg", "image/webp")):
        """Tokens of picture bytes (counted toward the 64); Refused with the reason otherwise."""
        self._counted()
        try:
            return self._tokens(data, allowed)
        except pictures.Unreadable as e:
            raise Refused(str(e))

    def _source_bytes(self, src):
        if src.b64 is not None:
            try:
                return base64.b64decode(src.b64, validate=True)
            except (binascii.Error, ValueError):
                raise Refused("the picture's base64 could not be read")
        url = src.url
        if url[:5].lower() == "data:":
            head, sep, payload = url.partition(",")
            if not sep or not head.lower().endswith(";base64"):
                raise Refused("the picture's data: URL could not be read (expected ;base64,)")
            try:
                return base64.b64decode(payload.strip(), validate=True)
            except (binascii.Error, ValueError):
                raise Refused("the picture's data: URL could not be read (bad base64)")
        raise Refused("image URLs and file paths are never fetched: send the picture as a data: URL")

    def _reference(self, url):
        name = url[len(REF_SCHEME):]
        if not valid_name(name):
            raise bad_request("a strata-tool-media: reference must name <64 lowercase hex>.<png|jpg|webp>")
        if self.vision is None:
            return note(NO_ENCODER)
        if not self.image_results:
            return note("tool pictures are switched off")
        if not self.mcp_configured:
            return note("MCP is not configured")
        data = self.cache.read(name)
        if data is None:
            return note("the picture is no longer in the cache")
        try:
            return self.picture_bytes(data)
        except Refused as e:
            return note(str(e))

    def part(self, role, src):
        """The prompt part an image part of a message becomes (ImageTokens or a note)."""
        in_tool = role == "tool"
        if isinstance(src, Lifted):
            if self.vision is None:
                return None  # 11.5a: the note stays, the base64 is dropped
            try:
                return self.picture_bytes(src.data, ALL_FORMATS)
            except Refused as e:
                return note(str(e))
        if src.url is not None and src.url.startswith(REF_SCHEME):
            if not in_tool:
                raise bad_request("a strata-tool-media: reference is read only in a tool message")
            return self._reference(src.url)
        if self.vision is None:
            if in_tool:
                return note(NO_ENCODER)
            raise bad_request("this server has no image encoder, so it cannot read pictures")
        try:
            # 12.3d: a client's picture is read by its bytes, any of the five formats
            return self.picture_bytes(self._source_bytes(src), ALL_FORMATS)
        except Refused as e:
            if in_tool:
                return note(str(e))
            raise bad_request(f"a picture could not be read: {e}")

    def tool_picture(self, picture):
        """8.8c: a picture an MCP result gave, for the next pass's tool message."""
        try:
            self._counted()
            return ImageTokens(pictures.image_tokens(picture.width, picture.height, self.vision))
        except (Refused, pictures.Unreadable) as e:
            return note(str(e))
