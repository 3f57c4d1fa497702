"""Pictures: recognising formats by their magic bytes, reading their size from the
header (Pillow, never decoding pixels), and the smart-resize geometry (SPEC 12.2)."""

import io
import math
import warnings

from PIL import Image

Image.MAX_IMAGE_PIXELS = None  # only headers are read here; no pixels are decoded
warnings.simplefilter("ignore", Image.DecompressionBombWarning)

PATCH = 14
MERGE = 2
FACTOR = PATCH * MERGE
MAX_RATIO = 200

EXT = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp"}
MIME_OF_EXT = {v: k for k, v in EXT.items()}


def sniff(data):
    """The mime type the bytes' magic says (PNG, JPEG, WebP, GIF, BMP), or None."""
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "image/png"
    if data[:3] == b"\xff\xd8\xff":
        return "image/jpeg"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:2] == b"BM":
        return "image/bmp"
    return None


class Unreadable(ValueError):
    """A picture whose format or header cannot be read; the message is the reason."""


def header_size(data, mime):
    """(width, height) from the picture's header; Unreadable when it cannot be read."""
    formats = {"image/png": ["PNG"], "image/jpeg": ["JPEG"], "image/webp": ["WEBP"],
               "image/gif": ["GIF"], "image/bmp": ["BMP"]}[mime]
    try:
        with Image.open(io.BytesIO(data), formats=formats) as im:
            w, h = im.size
    except Exception:
        raise Unreadable(f"the picture's header could not be read ({mime})")
    if w < 1 or h < 1:
        raise Unreadable(f"the picture's header could not be read ({mime})")
    return w, h


def read_picture(data, allowed=("image/png", "image/jpeg", "image/webp")):
    """(mime, width, height) of picture bytes; Unreadable otherwise."""
    mime = sniff(data)
    if mime is None or mime not in allowed:
        names = {"image/png": "PNG", "image/jpeg": "JPEG", "image/webp": "WebP", "image/gif": "GIF",
                 "image/bmp": "BMP"}
        listed = [names[m] for m in allowed]
        raise Unreadable(f"the picture's format is not {', '.join(listed[:-1])} or {listed[-1]}")
    w, h = header_size(data, mime)
    return mime, w, h


def _round(x):
    return round(x / FACTOR) * FACTOR


def smart_resize(height, width, min_pixels, max_pixels):
    """The (height, width) the model sees; Unreadable when the aspect ratio is over 200."""
    if max(height, width) / min(height, width) > MAX_RATIO:
        raise Unreadable(f"the picture's aspect ratio is over {MAX_RATIO} ({width}x{height})")
    h_bar = max(FACTOR, _round(height))
    w_bar = max(FACTOR, _round(width))
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(FACTOR, math.floor(height / beta / FACTOR) * FACTOR)
        w_bar = max(FACTOR, math.floor(width / beta / FACTOR) * FACTOR)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / FACTOR) * FACTOR
        w_bar = math.ceil(width * beta / FACTOR) * FACTOR
    return h_bar, w_bar


def image_tokens(width, height, vision):
    """N, the image tokens of a picture of that size under the configured bounds."""
    h, w = smart_resize(height, width, vision.min_pixels, vision.max_pixels)
    return (h // FACTOR) * (w // FACTOR)
