#!/usr/bin/env bash
# Installs, pinned and locally under ci/interop/, the MCP peers nobody on this team wrote:
# @modelcontextprotocol/server-everything and @modelcontextprotocol/conformance (npm), and the
# official Python SDK `mcp` 2.x (pip, in a venv). Idempotent; fails loudly when something cannot be had.
set -euo pipefail
cd "$(dirname "$0")/interop"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "install-interop: node and npm are needed (apt-get install nodejs npm)" >&2
    exit 1
fi
if [ ! -f node_modules/@modelcontextprotocol/server-everything/package.json ] \
    || [ ! -f node_modules/@modelcontextprotocol/conformance/package.json ]; then
    npm ci --no-audit --no-fund --loglevel=error
fi

MCP_VERSION=2.3.0
if ! .venv/bin/python -c "import mcp, importlib.metadata as m; assert m.version('mcp') == '$MCP_VERSION'" 2>/dev/null; then
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check "mcp==$MCP_VERSION"
fi
echo "install-interop: server-everything $(node -p "require('./node_modules/@modelcontextprotocol/server-everything/package.json').version"), python mcp $MCP_VERSION"
