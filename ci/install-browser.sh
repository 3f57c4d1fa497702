#!/usr/bin/env bash
# Installs Debian's Chromium and ChromeDriver for the page cases when they are missing. Idempotent;
# fails loudly when they cannot be had (a missing browser is a failure in CI, never a skip).
set -euo pipefail
if [ -x /usr/lib/chromium/chromium ] && command -v chromedriver >/dev/null; then
    echo "install-browser: $(chromedriver --version | head -1)"
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
[ -x /usr/lib/chromium/chromium ] || { echo "install-browser: /usr/lib/chromium/chromium is still missing" >&2; exit 1; }
command -v chromedriver >/dev/null || { echo "install-browser: chromedriver is still missing" >&2; exit 1; }
echo "install-browser: $(chromedriver --version | head -1)"
