#!/usr/bin/env bash
# Sourced by the image scripts (ci/vision-image.sh, ci/mediacheck-image.sh): podman and mmdebstrap from
# Debian's packages, and a Debian bookworm minbase made by mmdebstrap and imported into podman as
# localhost/debian-mmdebstrap:bookworm — registry base images cannot be pulled here. Sets `podman` (an
# array: vfs storage under $1, no daemon) for the caller; the base tar is kept in target/ across runs.
container_base() {
    local work=$1
    if ! command -v podman >/dev/null || ! command -v mmdebstrap >/dev/null; then
        apt-get update -qq && apt-get install -y -qq podman mmdebstrap >/dev/null
    fi
    mkdir -p "$work" target/container-base
    podman=(podman --storage-driver vfs --root "$work/containers" --runroot "$work/run")
    local base=target/container-base/bookworm-minbase.tar
    if [ ! -s "$base" ]; then
        echo "container-base: Debian bookworm minbase with mmdebstrap"
        mmdebstrap --quiet --format=tar --variant=minbase bookworm "$base.part" http://deb.debian.org/debian
        mv "$base.part" "$base"
    fi
    "${podman[@]}" import --quiet "$base" localhost/debian-mmdebstrap:bookworm >/dev/null
}

# The last stage of a Dockerfile (the runtime image), from its FROM line on, with its FROM and one
# COPY --from=build line rewritten: `runtime_stage DOCKERFILE FROM_IMAGE BUILD_PATH LOCAL_NAME`.
runtime_stage() {
    awk '/^FROM /{stage=""} {stage = stage $0 "\n"} END {printf "%s", stage}' "$1" \
        | sed -e "s#^FROM $2\$#FROM localhost/debian-mmdebstrap:bookworm#" \
              -e "s#^COPY --from=build $3 #COPY $4 #"
}
