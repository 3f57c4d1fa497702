#!/usr/bin/env bash
# Builds .libtorch/ (what the `torch` feature of reference-server links) from hash-pinned PyPI wheels:
# torch 2.11.0 (a complete CPU libtorch inside a CUDA build) and the two CUDA runtime wheels its metadata
# pins (libtorch_cpu.so needs libcudart.so.13 and libcupti.so.13 to load; no GPU is needed). tch's own
# download cannot reach pytorch.org here, and Debian's libtorch is too old. Idempotent: a few seconds
# when .libtorch/build-version already says 2.11.0. Never committed (.gitignore).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=2.11.0
DEST=.libtorch
if [ "$(cat "$DEST/build-version" 2>/dev/null)" = "$VERSION" ] && [ -f "$DEST/lib/libtorch_cpu.so" ]; then
    echo "install-libtorch: $DEST has libtorch $VERSION"
    exit 0
fi
wheels=$(mktemp -d)
trap 'rm -rf "$wheels"' EXIT
cat > "$wheels/requirements.txt" <<REQ
torch==2.11.0 --hash=sha256:7aa2f9bbc6d4595ba72138026b2074be1233186150e9292865e04b7a63b8c67a
nvidia-cuda-runtime==13.0.96 --hash=sha256:7f82250d7782aa23b6cfe765ecc7db554bd3c2870c43f3d1821f1d18aebf0548
nvidia-cuda-cupti==13.0.85 --hash=sha256:4eb01c08e859bf924d222250d2e8f8b8ff6d3db4721288cf35d14252a4d933c8
REQ
python3 -m pip download --quiet --no-deps --require-hashes --only-binary=:all: \
    --python-version 3.11 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_25_x86_64 --platform manylinux_2_17_x86_64 \
    -r "$wheels/requirements.txt" -d "$wheels"
rm -rf "$DEST.partial"
mkdir -p "$DEST.partial/lib" "$DEST.partial/include"
python3 - "$wheels" "$DEST.partial" <<'PY'
import pathlib, shutil, sys, zipfile
wheels, dest = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
wanted_libs = {"libtorch_cpu.so", "libc10.so", "libgomp.so.1", "libcudart.so.13", "libcupti.so.13"}
for wheel in wheels.glob("*.whl"):
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            base = name.rsplit("/", 1)[-1]
            if name.startswith("torch/include/") and not name.endswith("/"):
                target = dest / "include" / name[len("torch/include/"):]
            elif base in wanted_libs and ("/lib/" in name):
                target = dest / "lib" / base
            else:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with z.open(name) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)
missing = [lib for lib in wanted_libs if not (dest / "lib" / lib).exists()]
if missing:
    sys.exit(f"install-libtorch: missing from the wheels: {missing}")
PY
# The wheel's libtorch.so drags in all of CUDA; an empty stub satisfies the linker's -ltorch.
echo 'void mediacheck_libtorch_stub(void) {}' > "$wheels/stub.c"
cc -shared -fPIC -o "$DEST.partial/lib/libtorch.so" "$wheels/stub.c"
echo "$VERSION" > "$DEST.partial/build-version"
rm -rf "$DEST"
mv "$DEST.partial" "$DEST"
echo "install-libtorch: $DEST built from torch $VERSION ($(du -sh "$DEST" | cut -f1))"
