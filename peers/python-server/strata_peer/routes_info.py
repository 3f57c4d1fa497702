"""Health, models, status and `GET /mcp` (SPEC 3.1–3.3, 5.8)."""

import time

from .errors import json_response
from .pictures import MERGE, PATCH

STARTED = int(time.time())


def health(service):
    s = service.settings
    return json_response({"status": "ok", "max_context": s.engine.max_context, "model": s.model,
                          "images": s.vision is not None, "api_key": s.api_key is not None,
                          "loaded": True, "service": "reference-server"})


def models(service):
    s = service.settings
    modalities = ["text", "image"] if s.vision is not None else ["text"]
    return json_response({"object": "list", "data": [{
        "id": s.model, "object": "model", "created": STARTED, "owned_by": "reference-server",
        "architecture": {"input_modalities": modalities, "output_modalities": ["text"]},
        "context_length": s.engine.max_context}]})


def status(service):
    s = service.settings
    if s.vision is not None:
        v = s.vision
        vision = {"enabled": True, "available": True, "error": None, "backend": v.backend, "device": v.device,
                  "geometry": {"patch_size": PATCH, "merge_size": MERGE, "min_pixels": v.min_pixels,
                               "max_pixels": v.max_pixels}}
    else:
        vision = {"enabled": False, "available": False, "error": None}
    counters = {"running": service.running, "finished": service.finished, "cancelled": service.cancelled}
    return json_response({"busy": service.running > 0, **counters, "requests": counters,
                          "model": s.model, "max_context": s.engine.max_context, "vision": vision,
                          "dialects": ["/v1/chat/completions"]})


def mcp(service):
    if service.hub is None:
        return json_response({"servers": [], "tools": 0})
    return json_response(service.hub.status_json())
