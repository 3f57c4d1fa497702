#!/usr/bin/env bash
# Builds vision-mcp's container image with podman, the way a NAS would, from Debian packages only:
#   1. a Debian bookworm base made by mmdebstrap (minbase) and imported into podman — registry base
#      images cannot be pulled here;
#   2. the runtime stage of vision-mcp/Dockerfile, unchanged but for its FROM (that base) and its COPY
#      (the release binary built here: the build stage's rust image cannot be pulled either);
#   3. checks of the result: user 10001:10001, entry point /usr/local/bin/vision-mcp, the --http command,
#      the binary in the image is the one built, CA certificates present, and the binary runs inside
#      the image's root as UID 10001 (chroot: this sandbox cannot run containers).
# Slow (about two minutes warm, five cold), so not part of ci/test.sh. Needs root. Usage: ci/vision-image.sh
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'vision-image: %s\n' "$*"; }

source ci/container-base.sh
work=$PWD/target/vision-image
container_base "$work"

say "release binary (vision-mcp's own lock file)"
cargo build --locked --release -q --manifest-path vision-mcp/Cargo.toml --target-dir target
binary=target/release/vision-mcp

context=$(mktemp -d)
mnt=
cleanup() { [ -n "$mnt" ] && "${podman[@]}" image unmount localhost/vision-mcp:local >/dev/null 2>&1; rm -rf "$context"; }
trap cleanup EXIT
cp "$binary" "$context/vision-mcp"
# The Dockerfile's last stage (the runtime image), from its FROM line on.
runtime_stage vision-mcp/Dockerfile debian:bookworm-slim /src/target/release/vision-mcp vision-mcp > "$context/Containerfile"
grep -q '^FROM localhost/debian-mmdebstrap:bookworm$' "$context/Containerfile" \
    && grep -q '^COPY vision-mcp /usr/local/bin/vision-mcp$' "$context/Containerfile" \
    || { say "vision-mcp/Dockerfile's runtime stage changed shape; update this script"; cat "$context/Containerfile"; exit 1; }
say "podman build (the Dockerfile's runtime stage)"
"${podman[@]}" build --quiet --isolation chroot -t localhost/vision-mcp:local "$context" >/dev/null

inspect() { "${podman[@]}" image inspect --format "$1" localhost/vision-mcp:local; }
[ "$(inspect '{{.Config.User}}')" = "10001:10001" ] || { say "user is $(inspect '{{.Config.User}}')"; exit 1; }
[ "$(inspect '{{json .Config.Entrypoint}}')" = '["/usr/local/bin/vision-mcp"]' ] || { say "entry point is $(inspect '{{json .Config.Entrypoint}}')"; exit 1; }
[ "$(inspect '{{json .Config.Cmd}}')" = '["--http","--host","0.0.0.0","--port","8000"]' ] || { say "command is $(inspect '{{json .Config.Cmd}}')"; exit 1; }
mnt=$("${podman[@]}" image mount localhost/vision-mcp:local)
[ "$(sha256sum < "$mnt/usr/local/bin/vision-mcp")" = "$(sha256sum < "$binary")" ] || { say "the image holds another binary"; exit 1; }
[ -s "$mnt/etc/ssl/certs/ca-certificates.crt" ] || { say "no CA certificates in the image"; exit 1; }
grep -q '^vision:x:10001:10001:' "$mnt/etc/passwd" || { say "no user 10001 in the image"; exit 1; }
version=$(chroot --userspec=10001:10001 "$mnt" /usr/local/bin/vision-mcp --version)
refusal=$(chroot --userspec=10001:10001 "$mnt" env -i /usr/local/bin/vision-mcp --http 2>&1 || true)
case $refusal in
    "vision-mcp: OPENAI_API_KEY:"*) ;;
    *) say "inside the image, a start without secrets said: $refusal"; exit 1 ;;
esac
say "localhost/vision-mcp:local: user $(inspect '{{.Config.User}}'), entry point $(inspect '{{json .Config.Entrypoint}}'), $(du -m target/container-base/bookworm-minbase.tar | cut -f1) MB base, runs as 10001 inside: $version; without secrets: $refusal"
say "5 passed, 0 failed"
