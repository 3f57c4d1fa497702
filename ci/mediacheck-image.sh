#!/usr/bin/env bash
# Builds mediacheck's container image (harness/Dockerfile) with podman, from Debian packages only, the way
# vision-mcp's is built (ci/container-base.sh: an mmdebstrap base; the Dockerfile's runtime stage with the
# release binary built here), then checks the result: user 10001:10001, entry point, the binary in the
# image is the one built, CA certificates present, /results owned by 10001 — and, inside the image's root as UID 10001 (chroot:
# this sandbox cannot run containers), a bad segment refused with exit 2, two segments of a short run
# against the embedded reference server, and their merge.
# Slow (a few minutes cold), so not part of ci/test.sh. Needs root. Usage: ci/mediacheck-image.sh
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'mediacheck-image: %s\n' "$*"; }

source ci/container-base.sh
work=$PWD/target/mediacheck-image
container_base "$work"

say "release binary"
cargo build --locked --release -q -p harness --bin mediacheck
binary=target/release/mediacheck

context=$(mktemp -d)
mnt=
image=localhost/mediacheck:local
cleanup() { [ -n "$mnt" ] && "${podman[@]}" image unmount "$image" >/dev/null 2>&1; rm -rf "$context"; }
trap cleanup EXIT
cp "$binary" "$context/mediacheck"
runtime_stage harness/Dockerfile debian:bookworm-slim /src/target/release/mediacheck mediacheck > "$context/Containerfile"
grep -q '^FROM localhost/debian-mmdebstrap:bookworm$' "$context/Containerfile" \
    && grep -q '^COPY mediacheck /usr/local/bin/mediacheck$' "$context/Containerfile" \
    || { say "harness/Dockerfile's runtime stage changed shape; update this script"; cat "$context/Containerfile"; exit 1; }
say "podman build (the Dockerfile's runtime stage)"
"${podman[@]}" build --quiet --isolation chroot -t "$image" "$context" >/dev/null

inspect() { "${podman[@]}" image inspect --format "$1" "$image"; }
[ "$(inspect '{{.Config.User}}')" = "10001:10001" ] || { say "user is $(inspect '{{.Config.User}}')"; exit 1; }
[ "$(inspect '{{json .Config.Entrypoint}}')" = '["/usr/local/bin/mediacheck"]' ] || { say "entry point is $(inspect '{{json .Config.Entrypoint}}')"; exit 1; }
[ "$(inspect '{{.Config.WorkingDir}}')" = "/results" ] || { say "working folder is $(inspect '{{.Config.WorkingDir}}')"; exit 1; }
mnt=$("${podman[@]}" image mount "$image")
[ "$(sha256sum < "$mnt/usr/local/bin/mediacheck")" = "$(sha256sum < "$binary")" ] || { say "the image holds another binary"; exit 1; }
[ -s "$mnt/etc/ssl/certs/ca-certificates.crt" ] || { say "no CA certificates in the image (the embedded server's MCP client needs them)"; exit 1; }
[ "$(stat -c %u:%g "$mnt/results")" = "10001:10001" ] || { say "/results is owned by $(stat -c %u:%g "$mnt/results")"; exit 1; }
# A copy of the image's root to run in, so the image itself stays as built.
root="$context/root"
cp -a "$mnt" "$root"
inside() { chroot --userspec=10001:10001 "$root" env -i HOME=/results TMPDIR=/tmp "$@"; }
version=$(inside /usr/local/bin/mediacheck --version)
set +e
refusal=$(inside /usr/local/bin/mediacheck load --segment 5/4 --out /results/x 2>&1); code=$?
set -e
[ "$code" = 2 ] && [ ! -e "$root/results/x" ] || { say "inside the image, --segment 5/4 gave exit $code: $refusal"; exit 1; }
start=$(date -u -d '+4 seconds' +%Y-%m-%dT%H:%M:%SZ)
for i in 1 2; do
    inside /usr/local/bin/mediacheck load --scenario mixed --concurrency 2 --duration 1s --segment "$i/2" \
        --start-at "$start" --out /results/run > "$context/segment-$i.txt" 2>&1 &
done
wait
merged=$(inside /usr/local/bin/mediacheck load merge /results/run) || { say "the merge inside the image failed"; echo "$merged"; cat "$context"/segment-*.txt; exit 1; }
grep -q '^segments: 2 of 2' <<<"$merged" && grep -q '^lost: 0$' <<<"$merged" || { say "unexpected merge:"; echo "$merged"; exit 1; }
say "$image: user $(inspect '{{.Config.User}}'), entry point $(inspect '{{json .Config.Entrypoint}}'), $(du -m "$binary" | cut -f1) MB binary; inside as 10001: $version; --segment 5/4: exit 2 ($refusal); two segments and their merge: $(grep -c . <<<"$merged") report lines, lost: 0"
say "4 passed, 0 failed"
