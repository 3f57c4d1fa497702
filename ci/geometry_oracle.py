#!/usr/bin/env python3
"""The Qwen2-VL team's own geometry, for comparing SPEC 12.2 against it: `smart_resize` from the
installed `qwen-vl-utils` (vision_process.py) and `transformers` (Qwen2VLImageProcessor's module), read
from their source with `ast` and run with `math` alone — importing either package would need torch.

Usage: geometry_oracle.py < sizes   (one "WIDTH HEIGHT" a line)
Prints one JSON object a line: {"w", "h", "qwen_vl_utils", "transformers"}, each the image tokens
(h_bar / 28) * (w_bar / 28) at the default bounds (min 56*56, max 28*28*1280), or null where that
processor refuses the size (an aspect ratio over 200).
"""
import ast
import importlib.metadata
import importlib.util
import json
import math
import os
import sys


def package_dir(name):
    spec = importlib.util.find_spec(name)  # a top-level package: found, not imported
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"geometry_oracle: {name} is not installed (ci/install-interop.sh installs it)")
    return spec.submodule_search_locations[0]


def load(path, wanted):
    tree = ast.parse(open(path).read(), path)
    keep = [node for node in tree.body
            if (isinstance(node, ast.FunctionDef) and node.name in wanted)
            or (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in wanted for t in node.targets))]
    import typing
    namespace = {"math": math, "Optional": typing.Optional, "Tuple": typing.Tuple}
    exec(compile(ast.Module(body=keep, type_ignores=[]), path, "exec"), namespace)
    return namespace


qwen = load(os.path.join(package_dir("qwen_vl_utils"), "vision_process.py"),
            {"smart_resize", "round_by_factor", "ceil_by_factor", "floor_by_factor", "MAX_RATIO",
             "IMAGE_MIN_TOKEN_NUM", "IMAGE_MAX_TOKEN_NUM"})
transformers = load(os.path.join(package_dir("transformers"), "models", "qwen2_vl", "image_processing_qwen2_vl.py"),
                    {"smart_resize"})

MIN, MAX = 56 * 56, 28 * 28 * 1280


def tokens(resize, h, w):
    try:
        h_bar, w_bar = resize(h, w, 28, MIN, MAX)
    except ValueError:
        return None
    return (h_bar // 28) * (w_bar // 28)


print(json.dumps({"versions": {p: importlib.metadata.version(p) for p in ("qwen-vl-utils", "transformers")}}))
for line in sys.stdin:
    if not line.strip():
        continue
    w, h = map(int, line.split())
    print(json.dumps({"w": w, "h": h, "qwen_vl_utils": tokens(qwen["smart_resize"], h, w),
                      "transformers": tokens(transformers["smart_resize"], h, w)}))
